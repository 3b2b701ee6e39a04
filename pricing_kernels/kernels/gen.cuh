// The generator a Monte Carlo kernel draws from, chosen at compile time by RNG, behind
// one interface: gen_init (kernel start), gen_sample (start of a sample) and draw4
// (four 32-bit words). `gen_state` is the host-seeded state in global memory:
//   RNG_PHILOX  unused (the key is the seed, the counter is (draw, sample_lo, sample_hi, 0)
//               for the 64-bit sample index: (draw, sample, 0, 0) below 2^32);
//   RNG_LCG     one word per thread of the grid, structure of arrays: thread g reads
//               word g, so a warp reads 128 consecutive bytes;
//   RNG_MT      624 words per warp of the grid, copied into shared memory.
// MT and LCG streams belong to threads, so which numbers a sample gets depends on the
// launch geometry; Philox numbers depend only on the seed and the sample index.
#pragma once
#include "rng.cuh"

#define RNG_PHILOX 1
#define RNG_LCG 2
#define RNG_MT 3

#ifndef RNG
#define RNG RNG_PHILOX
#endif
#ifndef BLOCK
#define BLOCK 256
#endif

#if RNG == RNG_PHILOX
struct Gen {
    uint2 key;
    unsigned sample_lo, sample_hi, draw;
};
#define GEN_SHARED
__device__ __forceinline__ void gen_init(Gen& g, const unsigned*, unsigned seed_lo,
                                         unsigned seed_hi)
{
    g.key = make_uint2(seed_lo, seed_hi);
}
__device__ __forceinline__ void gen_sample(Gen& g, unsigned long long sample)
{
    g.sample_lo = (unsigned)sample;
    g.sample_hi = (unsigned)(sample >> 32);
    g.draw = 0;
}
__device__ __forceinline__ uint4 draw4(Gen& g)
{
    return philox4x32_10(make_uint4(g.draw++, g.sample_lo, g.sample_hi, 0u), g.key);
}

#elif RNG == RNG_LCG
struct Gen {
    unsigned x;
};
#define GEN_SHARED
__device__ __forceinline__ void gen_init(Gen& g, const unsigned* state, unsigned, unsigned)
{
    g.x = state[blockIdx.x * BLOCK + threadIdx.x];
}
__device__ __forceinline__ void gen_sample(Gen&, unsigned long long) {}
__device__ __forceinline__ uint4 draw4(Gen& g)
{
    uint4 w;
    w.x = lcg_next(g.x);
    w.y = lcg_next(g.x);
    w.z = lcg_next(g.x);
    w.w = lcg_next(g.x);
    return w;
}

#elif RNG == RNG_MT
struct Gen {
    unsigned* s;  // this warp's 624 words in shared memory
    unsigned lane, pos;
};
// one state per warp; a block of BLOCK threads has BLOCK / 32 of them (9.75 KiB at 256)
#define GEN_SHARED __shared__ unsigned mt_state[BLOCK / 32][MT_N];
__device__ __forceinline__ void mt_load(Gen& g, unsigned (*mt_state)[MT_N],
                                        const unsigned* state)
{
    const unsigned warp = threadIdx.x / 32;
    g.s = mt_state[warp];
    g.lane = threadIdx.x % 32;
    g.pos = MT_ROUNDS * 32;  // as after seeding: the first draw twists
    const unsigned* mine = state + (blockIdx.x * (BLOCK / 32) + warp) * MT_N;
    for (unsigned k = g.lane; k < MT_N; k += 32)
        g.s[k] = mine[k];
    __syncwarp();
}
#define gen_init(g, state, lo, hi) mt_load(g, mt_state, state)
__device__ __forceinline__ void gen_sample(Gen&, unsigned long long) {}
// The whole warp draws together: lane l takes word pos + l of the twisted state. Only
// the 19 full rounds (608 words) of each twist are used so that a draw never straddles
// two twists; the last 16 words are skipped.
__device__ __forceinline__ unsigned mt_next(Gen& g)
{
    if (g.pos == MT_ROUNDS * 32) {
        mt_twist(g.s, g.lane);
        g.pos = 0;
    }
    const unsigned y = mt_temper(g.s[g.pos + g.lane]);
    g.pos += 32;
    return y;
}
__device__ __forceinline__ uint4 draw4(Gen& g)
{
    uint4 w;
    w.x = mt_next(g);
    w.y = mt_next(g);
    w.z = mt_next(g);
    w.w = mt_next(g);
    return w;
}
#else
#error "RNG must be RNG_PHILOX (1), RNG_LCG (2) or RNG_MT (3)"
#endif
