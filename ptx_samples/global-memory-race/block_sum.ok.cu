// ptxlint: launch block=256 grid=16 buffer.0=16384 buffer.1=64
// The fix: thread 0 alone writes the block's total to out[blockIdx.x].
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
    if (t == 0)
        out[blockIdx.x] = s[0];
}
