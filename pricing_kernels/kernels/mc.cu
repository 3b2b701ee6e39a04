// Monte Carlo pricers under Black-Scholes dynamics, one thread per sample, exact
// log-normal steps: log S(t + dt) = log S(t) + mu + sig * z with mu = (r - q - vol^2 / 2) dt
// (q the dividend yield) and sig = vol * sqrt(dt) computed on the host. Kernels return
// undiscounted payoff sums; the host discounts and forms the mean and standard error.
//
// Compile-time constants (NVRTC defines): BLOCK (threads per block), RNG (gen.cuh),
// NORMALS (normals.cuh), ANTITHETIC (0 or 1: a sample is the average of the payoffs of
// z and -z), NASSETS (everest only), GREEKS (0 or 1: also the per-sample estimators of
// delta, gamma, vega, theta and rho), NSTRIKES (European and Asian: the strikes priced on
// the same paths, from the `strikes` buffer).
//
// Each sample gives NV values per strike (the payoff; with GREEKS also the five Greek
// estimators, undiscounted), each with its own (sum, sum of squares) accumulator pair,
// folded by block_sums_n: pair j * NV + g is value g of strike j. With GREEKS or
// NSTRIKES > 1 the kernels take two more buffers, `strikes` (NSTRIKES floats; the
// `strike` scalar is then unused) and `coef`, the estimators' constants computed on the
// host (catalog.greek_coef says which is which). The estimators are pathwise where the
// payoff is Lipschitz in the parameter (delta, vega, theta, rho: the payoff indicator
// times the derivative of the price path) and for gamma the pathwise-likelihood-ratio
// mix: the likelihood ratio of the first normal applied to the pathwise delta.
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
#ifndef GREEKS
#define GREEKS 0
#endif
#ifndef NSTRIKES
#define NSTRIKES 1
#endif
#if GREEKS
#define NV 6  // payoff, delta, gamma, vega, theta, rho
#else
#define NV 1
#endif
#define NSUMS (NSTRIKES * NV)
#define EXTRA (GREEKS || NSTRIKES > 1)  // the kernels take `strikes` and `coef`
#define NCOEF 12
#ifndef CONTROL
#define CONTROL 0
#endif
// CONTROL (European and Asian, one strike, no Greeks): the control variate. A sample
// gives three values, the payoff y, the control c and y c, so the pairs are (sum y,
// sum y^2), (sum c, sum c^2), (sum y c, unused); the host (variance.py) knows E[c] and
// forms the optimal coefficient, the adjusted price and its standard error. The control
// is S_T for a European and the geometric-average Asian call for the Asian.
#if CONTROL
#if GREEKS || NSTRIKES > 1
#error "CONTROL takes one strike and no Greeks"
#endif
#undef NSUMS
#define NSUMS 3
#endif

// Adds a sample's values to the thread's accumulators.
__device__ __forceinline__ void accumulate(const float* v, double* s1, double* s2)
{
#pragma unroll
    for (unsigned g = 0; g < NSUMS; ++g) {
        const double x = v[g];
        s1[g] += x;
        s2[g] += x * x;
    }
}

// The block's pairs to `partial`: one pair per block as before, or NSUMS laid out
// [pair][block] (reduce.cuh).
__device__ __forceinline__ void store_sums(const double* s1, const double* s2,
                                           double2* partial)
{
#if NSUMS == 1
    block_sums(s1[0], s2[0], partial);
#else
    block_sums_n<NSUMS>(s1, s2, partial);
#endif
}

#if RNG == RNG_MT
__shared__ unsigned mt_state[BLOCK / 32][MT_N];
#endif

#if RNG == RNG_SOBOL
// Sobol points: the inverse transform, one normal per coordinate (NORMALS is ignored)
__device__ __forceinline__ float4 normal4(Gen& g)
{
    return normal4_icdf(draw4(g));
}
#elif NORMALS == NORMALS_PAIRED
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

// The values of one European path (terminal price st from the normal z) at strike k:
// v[0] the payoff; with GREEKS, with e = +-S_T where the option ends in the money (sign
// of the payoff), the pathwise delta e / S0, the mixed gamma e (z / sig - 1) / S0^2, the
// pathwise vega e (sqrt(T) z - vol T), theta (minus the pathwise dV/dT) r p -
// e (r - q - vol^2/2 + vol z / (2 sqrt(T))) and rho +-K T (undiscounted; c = coef).
__device__ __forceinline__ void european_values(float z, float st, float k, int is_put,
                                                const float* c, float* v)
{
    const float p = vanilla(st, k, is_put);
    v[0] = p;
#if GREEKS
    const float in = p > 0.0f ? (is_put ? -1.0f : 1.0f) : 0.0f;
    const float e = in * st;
    v[1] = e * c[0];
    v[2] = e * (z * c[1] - c[2]);
    v[3] = e * (z * c[3] - c[4]);
    v[4] = c[6] * p - e * (c[7] + z * c[8]);
    v[5] = in * k * c[5];
#endif
}

// One European sample at every strike: the values of z (and of its mirror).
__device__ __forceinline__ void european_sample(float z, float spot, const float* strikes,
                                                float mu, float sig, int is_put,
                                                const float* c, float* v)
{
    const float st = spot * __expf(mu + sig * z);
#if ANTITHETIC
    const float sta = spot * __expf(mu - sig * z);
#endif
#pragma unroll
    for (unsigned j = 0; j < NSTRIKES; ++j) {
        european_values(z, st, strikes[j], is_put, c, v + j * NV);
#if ANTITHETIC
        float w[NV];
        european_values(-z, sta, strikes[j], is_put, c, w);
#pragma unroll
        for (unsigned g = 0; g < NV; ++g)
            v[j * NV + g] = 0.5f * (v[j * NV + g] + w[g]);
#endif
    }
}

#if CONTROL
// The European control: S_T (with ANTITHETIC the average with its mirror's).
__device__ __forceinline__ float european_control(float z, float spot, float mu, float sig)
{
    const float st = spot * __expf(mu + sig * z);
#if ANTITHETIC
    return 0.5f * (st + spot * __expf(mu - sig * z));
#else
    return st;
#endif
}
#endif

// The launch's strikes and estimator constants, in registers.
__device__ __forceinline__ void load_extra(float strike, const float* strikes_in,
                                           const float* coef_in, float* strikes, float* c)
{
#if EXTRA
#pragma unroll
    for (unsigned j = 0; j < NSTRIKES; ++j)
        strikes[j] = strikes_in[j];
#pragma unroll
    for (unsigned i = 0; i < NCOEF; ++i)
        c[i] = coef_in[i];
#else
    strikes[0] = strike;
#pragma unroll
    for (unsigned i = 0; i < NCOEF; ++i)
        c[i] = 0.0f;
#endif
}

#if EXTRA
#define EXTRA_PARAMS , const float* strikes_in, const float* coef_in
#else
#define EXTRA_PARAMS
#define strikes_in ((const float*)0)
#define coef_in ((const float*)0)
#endif

// A European call or put: each thread item is four samples, one per normal of a draw
// (item i covers samples 4i .. 4i+3, so the Philox counter of sample s is (0, s / 4),
// counting from sample 0 of the run).
extern "C" __global__ void __launch_bounds__(BLOCK)
european(double2* partial, const unsigned* gen_state, u64 first_sample, u64 n_samples,
         unsigned seed_lo, unsigned seed_hi, float spot, float strike, float mu, float sig,
         int is_put EXTRA_PARAMS)
{
    Gen g;
    gen_init(g, gen_state, seed_lo, seed_hi);
    float strikes[NSTRIKES], c[NCOEF];
    load_extra(strike, strikes_in, coef_in, strikes, c);
    const u64 items = (n_samples + 3) / 4, first_item = first_sample / 4;
    double s1[NSUMS], s2[NSUMS];
#pragma unroll
    for (unsigned i = 0; i < NSUMS; ++i)
        s1[i] = s2[i] = 0.0;
    for (u64 base = (u64)blockIdx.x * BLOCK; base < items; base += (u64)gridDim.x * BLOCK) {
        const u64 item = base + threadIdx.x;
        gen_sample(g, first_item + item);
        const float4 z = normal4(g);
        const float zs[4] = {z.x, z.y, z.z, z.w};
#if GREEKS
#pragma unroll 1  // the Greeks' code once, not four times
#else
#pragma unroll
#endif
        for (unsigned k = 0; k < 4; ++k) {
            if (4 * item + k < n_samples) {
                float v[NSUMS];
#if GREEKS  // a rolled loop: pick the normal without indexing a local array
                const float zk = k == 0 ? z.x : k == 1 ? z.y : k == 2 ? z.z : z.w;
#else
                const float zk = zs[k];
#endif
                european_sample(zk, spot, strikes, mu, sig, is_put, c, v);
#if CONTROL
                v[1] = european_control(zk, spot, mu, sig);
                v[2] = v[0] * v[1];
#endif
                accumulate(v, s1, s2);
            }
        }
    }
    store_sums(s1, s2, partial);
}

// The values of one Asian path at strike k from sum = sum of S_i / S0, et = sum of
// (S_i / S0) t_i, ex = sum of (S_i / S0) log(S_i / S0) and z1, the first normal: v[0] the
// payoff; with GREEKS, I the in-the-money indicator and A the average, the pathwise
// delta I A / S0, the mixed gamma I A (z1 / sig - 1) / S0^2 (sig = vol sqrt(dt): the
// likelihood ratio of the first step), the pathwise vega, theta and rho from dA/dvol,
// dA/dT and dA/dr (undiscounted; c = coef, catalog.greek_coef).
__device__ __forceinline__ void asian_values(float sum, float et, float ex, float z1,
                                             float spot, float k, unsigned steps,
                                             const float* c, float* v)
{
    const float p = fmaxf(spot * sum / steps - k, 0.0f);
    v[0] = p;
#if GREEKS
    const float in = p > 0.0f ? 1.0f : 0.0f;
    const float a = in * sum / steps;
    v[1] = a;
    v[2] = a * (z1 * c[0] - c[1]);
    v[3] = in * (ex * c[2] - et * c[3]);
    v[4] = c[6] * p - in * (ex + c[8] * et) * c[7];
    v[5] = in * et * c[4] - c[5] * p;
#endif
}

// An arithmetic-average Asian call on the prices after each of `steps` equal steps.
// Normals come four at a time; a path uses ceil(steps / 4) draws.
extern "C" __global__ void __launch_bounds__(BLOCK)
asian(double2* partial, const unsigned* gen_state, u64 first_sample, u64 n_samples,
      unsigned seed_lo, unsigned seed_hi, float spot, float strike, float mu, float sig,
      unsigned steps EXTRA_PARAMS)
{
    Gen g;
    gen_init(g, gen_state, seed_lo, seed_hi);
    float strikes[NSTRIKES], c[NCOEF];
    load_extra(strike, strikes_in, coef_in, strikes, c);
    double s1[NSUMS], s2[NSUMS];
#pragma unroll
    for (unsigned i = 0; i < NSUMS; ++i)
        s1[i] = s2[i] = 0.0;
    for (u64 base = (u64)blockIdx.x * BLOCK; base < n_samples; base += (u64)gridDim.x * BLOCK) {
        const u64 sample = base + threadIdx.x;
        gen_sample(g, first_sample + sample);
        float x = 0.0f, sum = 0.0f, xa = 0.0f, suma = 0.0f;  // log(S/spot); sum of S/spot
#if CONTROL
        float lx = 0.0f, lxa = 0.0f;  // sum of log(S/spot): the geometric average
#endif
#if RNG == RNG_SOBOL
        float bw[SOBOL_STEPS + 1];  // the Brownian bridge's path (gen.cuh)
        sobol_bridge(g, bw, steps);
#endif
#if GREEKS
        float et = 0.0f, ex = 0.0f, eta = 0.0f, exa = 0.0f, z1 = 0.0f;
#endif
        for (unsigned k = 0; k < steps; k += 4) {
#if RNG == RNG_SOBOL
            const float4 z = bridge4(bw, k, steps);
#else
            const float4 z = normal4(g);
#endif
            const float zs[4] = {z.x, z.y, z.z, z.w};
#if GREEKS
            if (k == 0)
                z1 = z.x;
#endif
#pragma unroll
            for (unsigned j = 0; j < 4; ++j) {
                if (k + j < steps) {
                    x += mu + sig * zs[j];
                    const float e = __expf(x);
                    sum += e;
                    xa += mu - sig * zs[j];
                    const float ea = __expf(xa);
                    suma += ea;
#if CONTROL
                    lx += x;
                    lxa += xa;
#endif
#if GREEKS
                    const float t = (float)(k + j + 1) * c[9];  // t_i = i dt
                    et += e * t;
                    ex += e * x;
                    eta += ea * t;
                    exa += ea * xa;
#endif
                }
            }
        }
        float v[NSUMS];
#pragma unroll
        for (unsigned j = 0; j < NSTRIKES; ++j) {
#if GREEKS
            asian_values(sum, et, ex, z1, spot, strikes[j], steps, c, v + j * NV);
#else
            asian_values(sum, 0.0f, 0.0f, 0.0f, spot, strikes[j], steps, c, v + j * NV);
#endif
#if ANTITHETIC
            float w[NV];
#if GREEKS
            asian_values(suma, eta, exa, -z1, spot, strikes[j], steps, c, w);
#else
            asian_values(suma, 0.0f, 0.0f, 0.0f, spot, strikes[j], steps, c, w);
#endif
#pragma unroll
            for (unsigned g = 0; g < NV; ++g)
                v[j * NV + g] = 0.5f * (v[j * NV + g] + w[g]);
#endif
        }
#if CONTROL
        v[1] = fmaxf(spot * __expf(lx / steps) - strikes[0], 0.0f);
#if ANTITHETIC
        v[1] = 0.5f * (v[1] + fmaxf(spot * __expf(lxa / steps) - strikes[0], 0.0f));
#endif
        v[2] = v[0] * v[1];
#endif
        if (sample < n_samples)
            accumulate(v, s1, s2);
    }
    store_sums(s1, s2, partial);
}

// An Everest note on NASSETS assets with correlated returns w = L z (`chol`: the
// row-major lower Cholesky factor of the correlation matrix, NASSETS x NASSETS floats):
// pays max(1, worst of S_i(T) / S_i(0)) per unit of notional, so the capital is
// guaranteed. `asset` holds NASSETS floats per row: mu_i = (r - q_i - vol_i^2 / 2) T,
// sig_i = vol_i sqrt(T), vol_i T, r - q_i - vol_i^2 / 2 and vol_i / (2 sqrt(T)) (the
// last three for GREEKS), then sqrt(T), T and r.
//
// With GREEKS (pathwise: the payoff is Lipschitz; X the worst performance, I = X > 1,
// w its correlated normal): delta with respect to the notional max(1, X) (the value is
// linear in it), gamma 0, the vega of a parallel shift of every volatility
// I X (sqrt(T) w - vol T), theta r p - I X (r - q - vol^2/2 + vol w / (2 sqrt(T))) and
// rho T (I X - p), with the worst asset's vol and q; undiscounted, per unit of notional.
#define NPAD ((NASSETS + 3) / 4 * 4)

extern "C" __global__ void __launch_bounds__(BLOCK)
everest(double2* partial, const unsigned* gen_state, const float* chol, u64 first_sample,
        u64 n_samples, unsigned seed_lo, unsigned seed_hi, const float* asset)
{
    Gen g;
    gen_init(g, gen_state, seed_lo, seed_hi);
    float mu[NASSETS], sig[NASSETS];
#pragma unroll
    for (unsigned i = 0; i < NASSETS; ++i) {
        mu[i] = asset[i];
        sig[i] = asset[NASSETS + i];
    }
#if GREEKS
    float vt[NASSETS], m[NASSETS], th[NASSETS];
#pragma unroll
    for (unsigned i = 0; i < NASSETS; ++i) {
        vt[i] = asset[2 * NASSETS + i];
        m[i] = asset[3 * NASSETS + i];
        th[i] = asset[4 * NASSETS + i];
    }
    const float sqrt_t = asset[5 * NASSETS], big_t = asset[5 * NASSETS + 1],
                rate = asset[5 * NASSETS + 2];
#endif
    double s1[NSUMS], s2[NSUMS];
#pragma unroll
    for (unsigned i = 0; i < NSUMS; ++i)
        s1[i] = s2[i] = 0.0;
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
#if GREEKS
        float ww = 0.0f, wa = 0.0f, vt_w = 0.0f, m_w = 0.0f, th_w = 0.0f, vt_a = 0.0f,
              m_a = 0.0f, th_a = 0.0f;  // the worst asset's w and constants (and mirror's)
#endif
#pragma unroll
        for (unsigned i = 0; i < NASSETS; ++i) {
            float w = 0.0f;
#pragma unroll
            for (unsigned j = 0; j <= i; ++j)
                w += chol[i * NASSETS + j] * z[j];
            const float x = __expf(mu[i] + sig[i] * w), xa = __expf(mu[i] - sig[i] * w);
#if GREEKS
            if (x < worst) {
                ww = w;
                vt_w = vt[i];
                m_w = m[i];
                th_w = th[i];
            }
            if (xa < worsta) {
                wa = -w;
                vt_a = vt[i];
                m_a = m[i];
                th_a = th[i];
            }
#endif
            worst = fminf(worst, x);
            worsta = fminf(worsta, xa);
        }
        float v[NSUMS];
        v[0] = fmaxf(worst, 1.0f);
#if GREEKS
        {
            const float in = worst > 1.0f ? worst : 0.0f;
            v[1] = v[0];
            v[2] = 0.0f;
            v[3] = in * (sqrt_t * ww - vt_w);
            v[4] = rate * v[0] - in * (m_w + th_w * ww);
            v[5] = big_t * (in - v[0]);
        }
#endif
#if ANTITHETIC
        {
            float u[NV];
            u[0] = fmaxf(worsta, 1.0f);
#if GREEKS
            const float in = worsta > 1.0f ? worsta : 0.0f;
            u[1] = u[0];
            u[2] = 0.0f;
            u[3] = in * (sqrt_t * wa - vt_a);
            u[4] = rate * u[0] - in * (m_a + th_a * wa);
            u[5] = big_t * (in - u[0]);
#endif
#pragma unroll
            for (unsigned g = 0; g < NV; ++g)
                v[g] = 0.5f * (v[g] + u[g]);
        }
#endif
        if (sample < n_samples)
            accumulate(v, s1, s2);
    }
    store_sums(s1, s2, partial);
}
