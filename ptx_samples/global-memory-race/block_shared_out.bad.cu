// ptxlint: launch block=256 grid=16 buffer.0=16384 buffer.1=16384
// Indexes the output by threadIdx.x alone: every block writes out[0..255], each with
// values from its own part of the input, so which block's value stays is up to the
// scheduler.
extern "C" __global__ void scale(const float* in, float* out)
{
    const unsigned t = threadIdx.x;
    out[t] = 2.0f * in[blockIdx.x * blockDim.x + t];
}
// ptx-expect: st\.global\.f32 => global-memory-race kinds=write-write cross_block=True
