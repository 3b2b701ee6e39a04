// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// The same row sums with the mask of the half-warp that runs the shuffle.
extern "C" __global__ void row_sums(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (lane < 16) {
        for (int offset = 8; offset > 0; offset /= 2)
            v += __shfl_xor_sync(0x0000ffffu, v, offset);
    }
    out[i] = v;  // lanes 16-31 pass their value through: still running
}
