// FLAWED on purpose (see README.md): the LCG state of each thread is a structure in
// global memory, laid out as an array of structures. Lane g reads word 3g, so a warp's
// 32 lanes span 384 bytes (12 or 13 sectors) for 128 useful bytes: uncoalesced.
// Production twin: lcg_raw in ../rng.cu keeps one array per field.
#include "../rng.cuh"

#ifndef BLOCK
#define BLOCK 256
#endif

struct LcgState {
    unsigned x, a, c;  // value, multiplier, increment
};

extern "C" __global__ void __launch_bounds__(BLOCK)
lcg_raw_aos(unsigned* out, LcgState* state, unsigned draws)
{
    const unsigned threads = gridDim.x * BLOCK, g = blockIdx.x * BLOCK + threadIdx.x;
    LcgState s = state[g];
    for (unsigned d = 0; d < draws; ++d) {
        s.x = s.a * s.x + s.c;
        out[d * threads + g] = s.x;
    }
    state[g].x = s.x;
}
