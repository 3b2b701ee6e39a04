// ptxlint: launch block=256 grid=16
// The twin: one barrier per step of the tree.
#define BLOCK 256
extern "C" __global__ void block_sum(float* out, const float* in)
{
    __shared__ float s[BLOCK];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * BLOCK + t];
    __syncthreads();
#pragma unroll
    for (unsigned half = BLOCK / 2; half > 0; half /= 2) {
        if (t < half)
            s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
