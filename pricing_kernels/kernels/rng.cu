// Raw generator outputs, for comparing the device generators with their host twins bit
// for bit (tests, --device gpu|emulator) and for timing them (benchmarks/pricing.py).
#include "normals.cuh"

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef NORMALS
#define NORMALS NORMALS_THREAD
#endif

// out[i] = Philox4x32-10 of the counter (c0 + i, c1, c2, c3) under the key (k0, k1).
extern "C" __global__ void __launch_bounds__(BLOCK)
philox_raw(uint4* out, unsigned n, unsigned c0, unsigned c1, unsigned c2, unsigned c3,
           unsigned k0, unsigned k1)
{
    const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        out[i] = philox4x32_10(make_uint4(c0 + i, c1, c2, c3), make_uint2(k0, k1));
}

// Thread g of the grid continues the LCG from state[g] for `draws` steps and writes
// its d-th word to out[d * threads + g]; the final state goes back to state[g].
extern "C" __global__ void __launch_bounds__(BLOCK)
lcg_raw(unsigned* out, unsigned* state, unsigned draws)
{
    const unsigned threads = gridDim.x * BLOCK, g = blockIdx.x * BLOCK + threadIdx.x;
    unsigned x = state[g];
    for (unsigned d = 0; d < draws; ++d)
        out[d * threads + g] = lcg_next(x);
    state[g] = x;
}

// Warp w of the grid twists the 624-word state[w] `twists` times and writes every
// tempered word, in generator order, to out[w * twists * 624 ...]: seeded with
// init_genrand(5489), warp 0 writes the reference MT19937 sequence.
extern "C" __global__ void __launch_bounds__(BLOCK)
mt_raw(unsigned* out, const unsigned* state, unsigned twists)
{
    __shared__ unsigned mt_state[BLOCK / 32][MT_N];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned w = blockIdx.x * (BLOCK / 32) + warp;
    unsigned* s = mt_state[warp];
    for (unsigned k = lane; k < MT_N; k += 32)
        s[k] = state[w * MT_N + k];
    __syncwarp();
    unsigned* mine = out + w * twists * MT_N;
    for (unsigned r = 0; r < twists; ++r) {
        mt_twist(s, lane);
        for (unsigned k = lane; k < MT_N; k += 32)
            mine[r * MT_N + k] = mt_temper(s[k]);
        __syncwarp();  // the next twist rewrites what the lanes just read
    }
}

// Four standard normals per thread from the Philox words of counter (0, i, 0, 0), by
// the Box-Muller form NORMALS selects: out[i] = normals of thread i. Every thread of
// the grid computes (the paired form needs both lanes); only i < n store.
extern "C" __global__ void __launch_bounds__(BLOCK)
normals(float4* out, unsigned n, unsigned k0, unsigned k1)
{
    const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    const uint4 w = philox4x32_10(make_uint4(0u, i, 0u, 0u), make_uint2(k0, k1));
#if NORMALS == NORMALS_PAIRED
    __shared__ float4 xchg[BLOCK];
    const float4 z = normal4_paired(w, xchg, threadIdx.x);
#else
    const float4 z = normal4_thread(w);
#endif
    if (i < n)
        out[i] = z;
}

// Four standard normals per thread from the given words (the words of `normals`, but
// chosen by the caller): the extreme uniforms 2^-24 and 1 - 2^-24 are tested this way.
// Threads past n use zero words, as the paired form needs every lane.
extern "C" __global__ void __launch_bounds__(BLOCK)
box_muller(float4* out, const uint4* words, unsigned n)
{
    const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    const uint4 w = i < n ? words[i] : make_uint4(0u, 0u, 0u, 0u);
#if NORMALS == NORMALS_PAIRED
    __shared__ float4 xchg[BLOCK];
    const float4 z = normal4_paired(w, xchg, threadIdx.x);
#else
    const float4 z = normal4_thread(w);
#endif
    if (i < n)
        out[i] = z;
}

// Sobol words and their inverse-normal transforms: thread i takes point i of replication
// `rep` (the sample index rep * 2^32 + i) and writes dimension 4 d + j of its point to
// words[(4 d + j) * n + i] and its normal to normals[...], d < draws. `state` is the
// RNG_SOBOL gen_state (gen.cuh).
#undef RNG
#define RNG 4
#include "gen.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK)
sobol_raw(unsigned* words, float* normals, const unsigned* state, unsigned n, unsigned rep,
          unsigned draws, unsigned k0, unsigned k1)
{
    const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    Gen g;
    gen_init(g, state, k0, k1);
    gen_sample(g, ((unsigned long long)rep << 32) | i);
    for (unsigned d = 0; d < draws; ++d) {
        const uint4 w = draw4(g);
        const float4 z = normal4_icdf(w);
        if (i < n) {
            const unsigned at = 4 * d * n + i;
            words[at] = w.x;
            words[at + n] = w.y;
            words[at + 2 * n] = w.z;
            words[at + 3 * n] = w.w;
            normals[at] = z.x;
            normals[at + n] = z.y;
            normals[at + 2 * n] = z.z;
            normals[at + 3 * n] = z.w;
        }
    }
}

// The standardised increments of the Brownian bridge of point i of replication `rep`:
// out[j * n + i] = w[j + 1] - w[j], j < steps (at most SOBOL_STEPS).
#ifndef SOBOL_STEPS
#define SOBOL_STEPS 64
#endif
extern "C" __global__ void __launch_bounds__(BLOCK)
sobol_bridge_raw(float* out, const unsigned* state, unsigned n, unsigned rep, unsigned steps,
                 unsigned k0, unsigned k1)
{
    const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    Gen g;
    gen_init(g, state, k0, k1);
    gen_sample(g, ((unsigned long long)rep << 32) | i);
    float w[SOBOL_STEPS + 1];
    sobol_bridge(g, w, steps);
    if (i < n)
        for (unsigned j = 0; j < steps; ++j)
            out[j * n + i] = __fadd_rn(w[j + 1], -w[j]);
}

// Thread g of the grid runs its MT607 generator from the gen_state `state` (structure of
// arrays, rng.py mt607_state) for `draws` words, writing the d-th to out[d * threads + g];
// the state words are updated in place.
extern "C" __global__ void __launch_bounds__(BLOCK)
mt607_raw(unsigned* out, unsigned* state, unsigned draws)
{
    const unsigned threads = gridDim.x * BLOCK, g = blockIdx.x * BLOCK + threadIdx.x;
    Mt607 m;
    mt607_load(m, state, threads, g);
    for (unsigned d = 0; d < draws; ++d)
        out[d * threads + g] = mt607_next(m);
}
