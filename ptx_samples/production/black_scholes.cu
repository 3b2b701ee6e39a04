// ptxlint: launch block=128 grid=240 param.5=1000000 buffer.0=4000000 buffer.1=4000000 buffer.2=4000000 buffer.3=4000000 buffer.4=4000000
// European call and put by Black-Scholes for a batch of options: the math library
// (logf, sqrtf, expf, erfcf) in a grid-stride loop, structure-of-arrays inputs.
__device__ __forceinline__ float cnd(float d) { return 0.5f * erfcf(-d * 0.70710678118f); }

extern "C" __global__ void black_scholes(const float* __restrict__ spot, const float* __restrict__ strike,
                                         const float* __restrict__ years, float* __restrict__ call,
                                         float* __restrict__ put, int n, float r, float v)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float s = spot[i], k = strike[i], t = years[i];
        const float sq = sqrtf(t);
        const float d1 = (logf(s / k) + (r + 0.5f * v * v) * t) / (v * sq);
        const float d2 = d1 - v * sq;
        const float df = expf(-r * t);
        call[i] = s * cnd(d1) - k * df * cnd(d2);
        put[i] = k * df * cnd(-d2) - s * cnd(-d1);
    }
}
