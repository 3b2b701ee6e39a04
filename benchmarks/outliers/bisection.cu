// Implied volatility by bisection, one option per thread: a data-dependent loop around a
// table lookup and a branchy pricing formula (the shape of the bisection outlier).
// ptxlint: launch block=128 grid=256 param.4=32768 param.5=64 buffer.0=131072 buffer.1=131072 buffer.2=256 buffer.3=131072
__device__ float norm_cdf(float x) { return 0.5f * erfcf(-x * 0.70710678f); }

extern "C" __global__ void implied_vol(const float* __restrict__ price, const float* __restrict__ strike,
                                       const float* __restrict__ curve, float* __restrict__ vol,
                                       int n, int points)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float k = strike[i], target = price[i];
    float lo = 1e-4f, hi = 4.0f;
    for (int it = 0; it < 64 && hi - lo > 1e-6f; ++it) {
        const float mid = 0.5f * (lo + hi);
        int a = 0, b = points - 1;
        while (b - a > 1) {  // the rate for this volatility's bucket
            const int m = (a + b) / 2;
            if (curve[m] <= mid) a = m; else b = m;
        }
        const float r = curve[a];
        const float d1 = (logf(100.0f / k) + (r + 0.5f * mid * mid)) / mid;
        const float c = 100.0f * norm_cdf(d1) - k * expf(-r) * norm_cdf(d1 - mid);
        if (c > target) hi = mid; else lo = mid;
    }
    vol[i] = 0.5f * (lo + hi);
}
