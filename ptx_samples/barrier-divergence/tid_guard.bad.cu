// ptxlint: launch block=128 grid=64
// Only the first warp stages the block's partial sums, and the barrier went inside the
// `if` with it: threads 32-127 skip it and wait at the next barrier instead.
extern "C" __global__ void stage_first_warp(float* out, const float* in)
{
    __shared__ float s[128];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    if (t < 32) {
        s[t] += s[t + 32] + s[t + 64] + s[t + 96];
        __syncthreads();
    }
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[t % 32];
}
// ptx-expect[2]: bar\.sync\s+0; => barrier-divergence skipped_by=barrier
