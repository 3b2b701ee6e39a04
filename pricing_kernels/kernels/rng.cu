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
