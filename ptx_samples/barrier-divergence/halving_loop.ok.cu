// A block-wide maximum for any block size: the active width halves from blockDim.x down
// to 1 with one barrier per step. blockDim.x >= 1 for every legal block, so the loop runs
// at least once and the store to s[t] is always followed by a barrier before s[0] is read
// (issue #22 reported a barrier-free path; kept as a regression sample).
extern "C" __global__ void block_max(float* out, const float* in)
{
    extern __shared__ float s[];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    for (unsigned d = blockDim.x; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d / 2)
            s[t] = fmaxf(s[t], s[t + (d + 1) / 2]);
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
