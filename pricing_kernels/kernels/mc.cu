// Monte Carlo pricers under Black-Scholes dynamics, one thread per sample, exact
// log-normal steps: log S(t + dt) = log S(t) + mu + sig * z with mu = (r - vol^2 / 2) dt
// and sig = vol * sqrt(dt) computed on the host. Kernels return undiscounted payoff sums;
// the host discounts and forms the mean and standard error.
//
// Compile-time constants (NVRTC defines): BLOCK (threads per block), RNG (gen.cuh),
// NORMALS (normals.cuh), ANTITHETIC (0 or 1: a sample is the average of the payoffs of
// z and -z), NASSETS (everest only).
//
// Every kernel walks the samples block by block: the loop bounds depend only on the
// block, so every thread of a warp draws the same number of times (MT and the paired
// Box-Muller need the whole warp) and reaches the barriers of the final reduction;
// threads past the last sample simulate but do not count.
//
// A launch covers the samples [first_sample, first_sample + n_samples) (the host may
// split a run into several launches; a European first_sample is a multiple of 4). Counts
// and indices are 64-bit: with 32 bits, (n_samples + 3) / 4 wraps to 0 near 2^32 (a price
// of 0) and `base += gridDim.x * BLOCK` wraps past the last sample (an endless loop).
// Only the Philox counter sees first_sample; the loop bounds depend on n_samples alone.
#include "gen.cuh"
#include "normals.cuh"
#include "reduce.cuh"

typedef unsigned long long u64;

#ifndef NORMALS
#define NORMALS NORMALS_THREAD
#endif
#ifndef ANTITHETIC
#define ANTITHETIC 0
#endif
#ifndef NASSETS
#define NASSETS 4
#endif

#if RNG == RNG_MT
__shared__ unsigned mt_state[BLOCK / 32][MT_N];
#endif

#if NORMALS == NORMALS_PAIRED
__shared__ float4 xchg[BLOCK];
__device__ __forceinline__ float4 normal4(Gen& g)
{
    return normal4_paired(draw4(g), xchg, threadIdx.x);
}
#else
__device__ __forceinline__ float4 normal4(Gen& g)
{
    return normal4_thread(draw4(g));
}
#endif

__device__ __forceinline__ float vanilla(float s, float strike, int is_put)
{
    return fmaxf(is_put ? strike - s : s - strike, 0.0f);
}

// One European sample: the terminal price from one normal (and its mirror).
__device__ __forceinline__ float european_sample(float z, float spot, float strike,
                                                 float mu, float sig, int is_put)
{
    const float p = vanilla(spot * __expf(mu + sig * z), strike, is_put);
#if ANTITHETIC
    return 0.5f * (p + vanilla(spot * __expf(mu - sig * z), strike, is_put));
#else
    return p;
#endif
}

// A European call or put: each thread item is four samples, one per normal of a draw
// (item i covers samples 4i .. 4i+3, so the Philox counter of sample s is (0, s / 4),
// counting from sample 0 of the run).
extern "C" __global__ void __launch_bounds__(BLOCK)
european(double2* partial, const unsigned* gen_state, u64 first_sample, u64 n_samples,
         unsigned seed_lo, unsigned seed_hi, float spot, float strike, float mu, float sig,
         int is_put)
{
    Gen g;
    gen_init(g, gen_state, seed_lo, seed_hi);
    const u64 items = (n_samples + 3) / 4, first_item = first_sample / 4;
    double s1 = 0.0, s2 = 0.0;
    for (u64 base = (u64)blockIdx.x * BLOCK; base < items; base += (u64)gridDim.x * BLOCK) {
        const u64 item = base + threadIdx.x;
        gen_sample(g, first_item + item);
        const float4 z = normal4(g);
        const float zs[4] = {z.x, z.y, z.z, z.w};
#pragma unroll
        for (unsigned k = 0; k < 4; ++k) {
            if (4 * item + k < n_samples) {
                const double p = european_sample(zs[k], spot, strike, mu, sig, is_put);
                s1 += p;
                s2 += p * p;
            }
        }
    }
    block_sums(s1, s2, partial);
}

// An arithmetic-average Asian call on the prices after each of `steps` equal steps.
// Normals come four at a time; a path uses ceil(steps / 4) draws.
extern "C" __global__ void __launch_bounds__(BLOCK)
asian(double2* partial, const unsigned* gen_state, u64 first_sample, u64 n_samples,
      unsigned seed_lo, unsigned seed_hi, float spot, float strike, float mu, float sig,
      unsigned steps)
{
    Gen g;
    gen_init(g, gen_state, seed_lo, seed_hi);
    double s1 = 0.0, s2 = 0.0;
    for (u64 base = (u64)blockIdx.x * BLOCK; base < n_samples; base += (u64)gridDim.x * BLOCK) {
        const u64 sample = base + threadIdx.x;
        gen_sample(g, first_sample + sample);
        float x = 0.0f, sum = 0.0f, xa = 0.0f, suma = 0.0f;  // log(S/spot); sum of S/spot
        for (unsigned k = 0; k < steps; k += 4) {
            const float4 z = normal4(g);
            const float zs[4] = {z.x, z.y, z.z, z.w};
#pragma unroll
            for (unsigned j = 0; j < 4; ++j) {
                if (k + j < steps) {
                    x += mu + sig * zs[j];
                    sum += __expf(x);
                    xa += mu - sig * zs[j];
                    suma += __expf(xa);
                }
            }
        }
        float p = fmaxf(spot * sum / steps - strike, 0.0f);
#if ANTITHETIC
        p = 0.5f * (p + fmaxf(spot * suma / steps - strike, 0.0f));
#endif
        if (sample < n_samples) {
            s1 += p;
            s2 += (double)p * p;
        }
    }
    block_sums(s1, s2, partial);
}

// An Everest note on NASSETS assets with correlated returns w = L z (`chol`: the
// row-major lower Cholesky factor of the correlation matrix, NASSETS x NASSETS floats):
// pays max(1, worst of S_i(T) / S_i(0)) per unit of notional, so the capital is
// guaranteed.
#define NPAD ((NASSETS + 3) / 4 * 4)

extern "C" __global__ void __launch_bounds__(BLOCK)
everest(double2* partial, const unsigned* gen_state, const float* chol, u64 first_sample,
        u64 n_samples, unsigned seed_lo, unsigned seed_hi, float mu, float sig)
{
    Gen g;
    gen_init(g, gen_state, seed_lo, seed_hi);
    double s1 = 0.0, s2 = 0.0;
    for (u64 base = (u64)blockIdx.x * BLOCK; base < n_samples; base += (u64)gridDim.x * BLOCK) {
        const u64 sample = base + threadIdx.x;
        gen_sample(g, first_sample + sample);
        float z[NPAD];
#pragma unroll
        for (unsigned b = 0; b < NPAD; b += 4) {
            const float4 q = normal4(g);
            z[b] = q.x;
            z[b + 1] = q.y;
            z[b + 2] = q.z;
            z[b + 3] = q.w;
        }
        float worst = 3.0e38f, worsta = 3.0e38f;
#pragma unroll
        for (unsigned i = 0; i < NASSETS; ++i) {
            float w = 0.0f;
#pragma unroll
            for (unsigned j = 0; j <= i; ++j)
                w += chol[i * NASSETS + j] * z[j];
            worst = fminf(worst, __expf(mu + sig * w));
            worsta = fminf(worsta, __expf(mu - sig * w));
        }
        float p = fmaxf(worst, 1.0f);
#if ANTITHETIC
        p = 0.5f * (p + fmaxf(worsta, 1.0f));
#endif
        if (sample < n_samples) {
            s1 += p;
            s2 += (double)p * p;
        }
    }
    block_sums(s1, s2, partial);
}
