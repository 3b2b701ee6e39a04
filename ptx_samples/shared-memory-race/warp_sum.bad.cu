// ptxlint: launch block=64 grid=16
// The classic unrolled last warp of a reduction through `volatile` shared memory. Before
// Volta the 32 lanes ran in lockstep; with independent thread scheduling lane t may read
// s[t + 16] before lane t + 16 has added s[t + 32] into it. `volatile` orders nothing;
// each of the six updates races with a later step (one finding per statement).
__device__ void warp_reduce(volatile float* s, unsigned t)
{
    s[t] += s[t + 32];
    s[t] += s[t + 16];
    s[t] += s[t + 8];
    s[t] += s[t + 4];
    s[t] += s[t + 2];
    s[t] += s[t + 1];
}

extern "C" __global__ void block_sum64(float* out, const float* in)
{
    __shared__ float s[64];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32)
        warp_reduce(s, t);
    if (t == 0)
        out[blockIdx.x] = s[0];
}
// ptx-expect: st\.volatile\.shared => shared-memory-race kinds=write-read same_warp=True
