// The generator a Monte Carlo kernel draws from, chosen at compile time by RNG, behind
// one interface: gen_init (kernel start), gen_sample (start of a sample) and draw4
// (four 32-bit words). `gen_state` is the host-seeded state in global memory:
//   RNG_PHILOX  unused (the key is the seed, the counter is (draw, sample_lo, sample_hi, 0)
//               for the 64-bit sample index: (draw, sample, 0, 0) below 2^32);
//   RNG_LCG     one word per thread of the grid, structure of arrays: thread g reads
//               word g, so a warp reads 128 consecutive bytes;
//   RNG_MT      624 words per warp of the grid, copied into shared memory;
//   RNG_SOBOL   word 0: the offset of the direction numbers (32 words per dimension, the
//               dimensions the product draws; the kernels take it as 1 + 6 *
//               SOBOL_BRIDGE_STEPS); before them, for the Asian, the Brownian bridge
//               schedule (sobol_bridge). The 64-bit sample index is the point index
//               (low word) and the replication (high word): each replication has its own
//               digital shift, the Philox words of (draw, replication, SOBOL_TAG, 0)
//               under the seed's key, and the host forms the standard error from the
//               replications' means. A draw4 gives four dimensions of the sample's point
//               (European item i: dimensions 0-3 of point i are its four samples);
//   RNG_MT607   one MT607 generator per thread: 19 state words then a, b, c, structure
//               of arrays over the threads of the grid (rng.cuh); thread g uses parameter
//               set g mod (sets shipped), seeded on the host (rng.py, mt607_state).
// MT, MT607 and LCG streams belong to threads, so which numbers a sample gets depends on the
// launch geometry; Philox numbers depend only on the seed and the sample index.
#pragma once
#include "rng.cuh"

#define RNG_PHILOX 1
#define RNG_LCG 2
#define RNG_MT 3
#define RNG_SOBOL 4
#define RNG_MT607 5

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

#elif RNG == RNG_SOBOL
#ifndef SOBOL_BRIDGE_STEPS
#define SOBOL_BRIDGE_STEPS 0  // steps of the bridge schedule in gen_state (0: none)
#endif
struct Gen {
    const unsigned* v;  // direction numbers
    const unsigned* bridge;  // the Brownian bridge schedule (Asian)
    uint2 key;
    unsigned gray, rep, draw;
};
#define GEN_SHARED
__device__ __forceinline__ void gen_init(Gen& g, const unsigned* state, unsigned seed_lo,
                                         unsigned seed_hi)
{
    // the direction numbers follow the head word and the bridge schedule (six words per
    // step), an offset fixed at compile time so that the pre-launch check bounds every
    // load of them (read from state[0], it would be a loaded value it cannot bound)
    g.v = state + 1 + 6 * SOBOL_BRIDGE_STEPS;
    g.bridge = state + 1;
    g.key = make_uint2(seed_lo, seed_hi);
}
__device__ __forceinline__ void gen_sample(Gen& g, unsigned long long sample)
{
    const unsigned i = (unsigned)sample;
    g.gray = i ^ (i >> 1);
    g.rep = (unsigned)(sample >> 32);
    g.draw = 0;
}
__device__ __forceinline__ uint4 draw4(Gen& g)
{
    const uint4 shift = philox4x32_10(make_uint4(g.draw, g.rep, SOBOL_TAG, 0u), g.key);
    const unsigned d = 4 * g.draw++;
    return make_uint4(sobol_word(g.v, d, g.gray) ^ shift.x,
                      sobol_word(g.v, d + 1, g.gray) ^ shift.y,
                      sobol_word(g.v, d + 2, g.gray) ^ shift.z,
                      sobol_word(g.v, d + 3, g.gray) ^ shift.w);
}
// The Brownian path of an Asian sample in units of sqrt(dt): w[0] = 0 and w[1..steps]
// filled in the schedule's order from the normals of dimensions 0, 1, ... (dimension 0
// gives the endpoint, the best-distributed coordinate the largest variance). Schedule
// entry k (SoA over `steps`): the point m, its known neighbours l and r, the weights
// a, b, c as float bits: w[m] = (a w[l] + b w[r]) + c z_k, rounded as the host does.
__device__ __forceinline__ void sobol_bridge(Gen& g, float* w, unsigned steps)
{
    const unsigned* s = g.bridge;
    w[0] = 0.0f;
    for (unsigned k = 0; k < steps; k += 4) {
        const float4 z = normal4_icdf(draw4(g));
        const float zs[4] = {z.x, z.y, z.z, z.w};
#pragma unroll
        for (unsigned j = 0; j < 4; ++j) {
            const unsigned i = k + j;
            if (i < steps) {
                const float a = __uint_as_float(s[3 * steps + i]);
                const float b = __uint_as_float(s[4 * steps + i]);
                const float c = __uint_as_float(s[5 * steps + i]);
                w[s[i]] = __fadd_rn(__fadd_rn(__fmul_rn(a, w[s[steps + i]]),
                                              __fmul_rn(b, w[s[2 * steps + i]])),
                                    __fmul_rn(c, zs[j]));
            }
        }
    }
}
// Normals k .. k + 3 of the path for the step loop: the standardised increments
// w[j + 1] - w[j] (0 past the last step).
__device__ __forceinline__ float4 bridge4(const float* w, unsigned k, unsigned steps)
{
    float z[4];
#pragma unroll
    for (unsigned j = 0; j < 4; ++j)
        z[j] = k + j < steps ? __fadd_rn(w[k + j + 1], -w[k + j]) : 0.0f;
    return make_float4(z[0], z[1], z[2], z[3]);
}
#ifndef SOBOL_STEPS
#define SOBOL_STEPS 64
#endif

#elif RNG == RNG_MT607
typedef Mt607 Gen;
#define GEN_SHARED
__device__ __forceinline__ void gen_init(Gen& g, const unsigned* state, unsigned, unsigned)
{
    // the state is written back as the generator runs (the kernels' gen_state is const
    // for the other generators, which only read it)
    mt607_load(g, const_cast<unsigned*>(state), gridDim.x * BLOCK,
               blockIdx.x * BLOCK + threadIdx.x);
}
__device__ __forceinline__ void gen_sample(Gen&, unsigned long long) {}
__device__ __forceinline__ uint4 draw4(Gen& g)
{
    uint4 w;
    w.x = mt607_next(g);
    w.y = mt607_next(g);
    w.z = mt607_next(g);
    w.w = mt607_next(g);
    return w;
}
#else
#error "RNG must be RNG_PHILOX (1), RNG_LCG (2), RNG_MT (3), RNG_SOBOL (4) or RNG_MT607 (5)"
#endif
