// Random number generators of the pricer, device side. Host twins: pricing_kernels/rng.py
// (bit for bit on the raw 32-bit outputs).
//
// Every generator hands out 32-bit words; `uniform01` turns one into a float in (0, 1)
// that the host reproduces exactly: 23 random bits m give (2m + 1) / 2^24, an odd
// multiple of 2^-24 below 2^24, so the int->float conversion is exact and log(u) finite.
#pragma once

#define PI_F 3.14159265358979f

__device__ __forceinline__ float uniform01(unsigned x)
{
    return __uint2float_rn(((x >> 9) << 1) | 1u) * 0x1p-24f;
}

// ---- Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11): counter-based, the default.
// A sample's numbers depend only on (seed, sample index, draw index), never on the
// launch geometry, which is why the CPU path reproduces the GPU's paths exactly.
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u  // golden ratio
#define PHILOX_W1 0xBB67AE85u  // sqrt(3) - 1

__device__ __forceinline__ uint4 philox4x32_10(uint4 c, uint2 k)
{
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        const unsigned hi0 = __umulhi(PHILOX_M0, c.x), lo0 = PHILOX_M0 * c.x;
        const unsigned hi1 = __umulhi(PHILOX_M1, c.z), lo1 = PHILOX_M1 * c.z;
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k.x += PHILOX_W0;
        k.y += PHILOX_W1;
    }
    return c;
}

// ---- LCG: x <- 1664525 x + 1013904223 (mod 2^32), one stream per thread.
// Statistically weak and kept as a baseline only: the low bits have tiny periods
// (bit k repeats every 2^(k+1) steps), and streams started from nearby seeds are
// correlated. uniform01 uses the top 23 bits, which hides the worst of it.
#define LCG_A 1664525u
#define LCG_C 1013904223u

__device__ __forceinline__ unsigned lcg_next(unsigned& x)
{
    x = LCG_A * x + LCG_C;
    return x;
}

// ---- MT19937 (Matsumoto and Nishimura, 1998), one generator per warp.
// The 624-word state lives in shared memory and the 32 lanes twist it together in
// chunks of 32 words. Within a chunk every lane reads its three words before any lane
// writes (a __syncwarp between), and the words a chunk reads were either not yet
// rewritten (i + 1 and i + 397 ahead of the chunk) or already rewritten by an earlier
// chunk (i - 227 for i >= 227, and word 0 for i = 623), exactly as in the sequential
// recurrence. Tempered outputs are read straight from the twisted state.
#define MT_N 624
#define MT_M 397
#define MT_MATRIX_A 0x9908B0DFu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7FFFFFFFu
#define MT_ROUNDS 19  // whole rounds of 32 lanes per twist: 608 of the 624 words

__device__ __forceinline__ void mt_twist(unsigned* s, unsigned lane)
{
    for (unsigned base = 0; base < MT_N; base += 32) {
        const unsigned i = base + lane;
        unsigned v = 0;
        if (i < MT_N) {
            const unsigned next = i + 1 < MT_N ? s[i + 1] : s[0];
            // the chunk at 224 reads far words on both sides of the wrap (621-623 and
            // 0-28): lanes 0-2 and 16-18 share banks 13-15, a 2-way conflict in 1 of the
            // twist's 20 chunks, cheaper than the extra chunk that splitting it costs
            const unsigned far = i < MT_N - MT_M ? s[i + MT_M] : s[i - (MT_N - MT_M)];  // ptxlint: disable=bank-conflict
            const unsigned y = (s[i] & MT_UPPER) | (next & MT_LOWER);
            v = far ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
        }
        __syncwarp();
        if (i < MT_N)
            s[i] = v;
        __syncwarp();
    }
}

__device__ __forceinline__ unsigned mt_temper(unsigned y)
{
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    y ^= y >> 18;
    return y;
}

// ---- Inverse normal: Wichura's AS 241 (PPND7, single precision), for Sobol points.
// Every operation is an explicitly rounded float32 operation (__fmul_rn, __fadd_rn,
// __fdiv_rn, __fsqrt_rn are never contracted into FMAs) in the order of the host twin
// (rng.py, inverse_normal), and the logarithm is built from such operations too, so host
// and device agree bit for bit. The far tail (-log p > 25) is not needed: uniform01 >=
// 2^-24.
#define FMUL __fmul_rn
#define FADD __fadd_rn

// log x for normal x > 0: x = 2^e f, f in [sqrt(1/2), sqrt(2)); log f = 2 atanh(s) with
// s = (f - 1) / (f + 1), to s^9.
__device__ __forceinline__ float log_f32(float x)
{
    const unsigned bits = __float_as_uint(x);
    int e = (int)((bits >> 23) & 0xFFu) - 127;
    float f = __uint_as_float((bits & 0x7FFFFFu) | 0x3F800000u);
    if (f > 1.41421356237f) {
        f = FMUL(f, 0.5f);
        e += 1;
    }
    const float s = __fdiv_rn(FADD(f, -1.0f), FADD(f, 1.0f));
    const float s2 = FMUL(s, s);
    float poly = FMUL(1.0f / 9.0f, s2);
    poly = FMUL(FADD(poly, 1.0f / 7.0f), s2);
    poly = FMUL(FADD(poly, 1.0f / 5.0f), s2);
    poly = FMUL(FADD(poly, 1.0f / 3.0f), s2);
    poly = FADD(poly, 1.0f);
    return FADD(FMUL((float)e, 0.693147180559945f), FMUL(FMUL(2.0f, s), poly));
}

__device__ __forceinline__ float inv_normal(float u)
{
    const float q = FADD(u, -0.5f);
    if (fabsf(q) <= 0.425f) {
        const float r = FADD(0.180625f, -FMUL(q, q));
        float num = FMUL(59.109374720f, r);
        num = FMUL(FADD(num, 159.29113202f), r);
        num = FMUL(FADD(num, 50.434271938f), r);
        num = FADD(num, 3.3871327179f);
        float den = FMUL(67.187563600f, r);
        den = FMUL(FADD(den, 78.757757664f), r);
        den = FMUL(FADD(den, 17.895169469f), r);
        den = FADD(den, 1.0f);
        return __fdiv_rn(FMUL(q, num), den);
    }
    const float p = fminf(u, FADD(1.0f, -u));
    const float t = FADD(__fsqrt_rn(-log_f32(p)), -1.6f);
    float num = FMUL(0.17023821103f, t);
    num = FMUL(FADD(num, 1.3067284816f), t);
    num = FMUL(FADD(num, 2.7568153900f), t);
    num = FADD(num, 1.4234372777f);
    float den = FMUL(0.12021132975f, t);
    den = FMUL(FADD(den, 0.73700164250f), t);
    den = FADD(den, 1.0f);
    const float x = __fdiv_rn(num, den);
    return q < 0.0f ? -x : x;
}

__device__ __forceinline__ float4 normal4_icdf(uint4 w)
{
    return make_float4(inv_normal(uniform01(w.x)), inv_normal(uniform01(w.y)),
                       inv_normal(uniform01(w.z)), inv_normal(uniform01(w.w)));
}

// ---- Sobol points: dimension d of point `gray` (the Gray code i ^ (i >> 1) of the point
// index i) is the XOR of the direction numbers v[d * 32 + b] of the bits b set in gray.
// Every lane of a warp reads the same dimension's words (a broadcast).
#define SOBOL_TAG 0x50B01u

__device__ __forceinline__ unsigned sobol_word(const unsigned* v, unsigned d, unsigned gray)
{
    unsigned x = 0;
    for (unsigned b = 0; b < 32; ++b)
        x ^= v[d * 32 + b] & (0u - ((gray >> b) & 1u));
    return x;
}

// ---- MT607 (w = 32, n = 19, m = 9, r = 1: period 2^607 - 1), one generator per thread
// with its own parameters (a, b, c) from pricing_kernels/params.py. The state is
// structure of arrays in global memory: word k of thread g at s[k * stride + g], so a
// warp's loads and stores of one word are 128 consecutive bytes. A step reads two words
// (x_(i+1) and x_(i+m); x_i is kept from the previous step) and writes one.
#define MT607_N 19
#define MT607_M 9
#define MT607_UPPER 0xFFFFFFFEu
#define MT607_LOWER 0x00000001u

struct Mt607 {
    unsigned* s;  // this thread's word 0; word k at s[k * stride]
    unsigned stride, i, cur, a, b, c;
};

__device__ __forceinline__ void mt607_load(Mt607& m, unsigned* state, unsigned stride,
                                           unsigned g)
{
    m.s = state + g;
    m.stride = stride;
    m.i = 0;
    m.cur = m.s[0];
    m.a = state[(MT607_N + 0) * stride + g];
    m.b = state[(MT607_N + 1) * stride + g];
    m.c = state[(MT607_N + 2) * stride + g];
}

__device__ __forceinline__ unsigned mt607_next(Mt607& m)
{
    const unsigned nxt_i = m.i + 1 == MT607_N ? 0u : m.i + 1;
    const unsigned far_i = m.i + MT607_M >= MT607_N ? m.i + MT607_M - MT607_N : m.i + MT607_M;
    const unsigned nxt = m.s[nxt_i * m.stride];
    const unsigned y = (m.cur & MT607_UPPER) | (nxt & MT607_LOWER);
    const unsigned v = m.s[far_i * m.stride] ^ (y >> 1) ^ ((y & 1u) ? m.a : 0u);
    m.s[m.i * m.stride] = v;
    m.i = nxt_i;
    m.cur = nxt;
    unsigned t = v ^ (v >> 12);
    t ^= (t << 7) & m.b;
    t ^= (t << 15) & m.c;
    return t ^ (t >> 18);
}
