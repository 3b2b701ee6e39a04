// FLAWED on purpose (see README.md): the MT607 generator of each thread as an array of
// structures in global memory: thread g's 19 state words and its a, b, c are 22
// consecutive words, so when a warp reads or writes one state word its 32 lanes are 88
// bytes apart (32 sectors for 128 useful bytes): uncoalesced.
// Production twin: mt607_raw in ../rng.cu (structure of arrays: word k of thread g at
// k * threads + g).
#include "../rng.cuh"

#ifndef BLOCK
#define BLOCK 256
#endif

struct Mt607Aos {
    unsigned x[MT607_N];
    unsigned a, b, c;
};

extern "C" __global__ void __launch_bounds__(BLOCK)
mt607_raw_aos(unsigned* out, Mt607Aos* state, unsigned draws)
{
    const unsigned threads = gridDim.x * BLOCK, g = blockIdx.x * BLOCK + threadIdx.x;
    Mt607Aos* m = state + g;
    const unsigned a = m->a, b = m->b, c = m->c;
    unsigned i = 0, cur = m->x[0];
    for (unsigned d = 0; d < draws; ++d) {
        const unsigned nxt_i = i + 1 == MT607_N ? 0u : i + 1;
        const unsigned far_i = i + MT607_M >= MT607_N ? i + MT607_M - MT607_N : i + MT607_M;
        const unsigned nxt = m->x[nxt_i];
        const unsigned y = (cur & MT607_UPPER) | (nxt & MT607_LOWER);
        const unsigned v = m->x[far_i] ^ (y >> 1) ^ ((y & 1u) ? a : 0u);
        m->x[i] = v;
        i = nxt_i;
        cur = nxt;
        unsigned t = v ^ (v >> 12);
        t ^= (t << 7) & b;
        t ^= (t << 15) & c;
        out[d * threads + g] = t ^ (t >> 18);
    }
}
