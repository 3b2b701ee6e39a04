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
            const unsigned far = i < MT_N - MT_M ? s[i + MT_M] : s[i - (MT_N - MT_M)];
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
