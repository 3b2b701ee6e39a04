// The same maximum with the barrier moved into the branch: only the threads below d / 2
// wait, so from the first step on most of the block skips it.
extern "C" __global__ void block_max(float* out, const float* in)
{
    extern __shared__ float s[];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    for (unsigned d = blockDim.x; d > 0; d >>= 1) {
        if (t < d / 2) {
            __syncthreads();
            s[t] = fmaxf(s[t], s[t + (d + 1) / 2]);
        }
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
// ptx-expect: bar\.sync => barrier-divergence
