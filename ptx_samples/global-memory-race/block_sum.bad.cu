// ptxlint: launch block=256 grid=16 buffer.0=16384 buffer.1=64
// A block reduction whose result is written by every thread, each with its own
// partial sum (s[t] after the tree), instead of by thread 0 with the total.
extern "C" __global__ void block_sum(const float* in, float* out)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (unsigned d = 128; d > 0; d >>= 1) {
        if (t < d)
            s[t] += s[t + d];
        __syncthreads();
    }
    out[blockIdx.x] = s[t];
}
// ptx-expect: st\.global\.f32 => global-memory-race kinds=write-write cross_block=False
