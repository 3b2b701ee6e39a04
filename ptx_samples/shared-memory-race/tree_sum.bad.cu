// ptxlint: launch block=256 grid=16
// A tree reduction whose loop lost its barrier: at step `half` thread t reads s[t + half],
// which thread t + half may still be updating from the step before.
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
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
// ptx-expect[2]: st\.shared\.f32\s+\[%r\d+\], %f => shared-memory-race kinds=write-read
