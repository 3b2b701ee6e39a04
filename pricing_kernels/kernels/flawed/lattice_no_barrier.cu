// FLAWED on purpose (see README.md): the barrier between two steps of a pass is
// missing. A step reads nodes t and t + 1 of the tile the previous step wrote, while
// thread t + 1 may still be writing them: a race, and a wrong price on real hardware.
// Production twin: ../binomial.cu.
//
// Binomial lattice (Cox-Ross-Rubinstein) for European and American calls and puts,
// with the classic tiled scheme: one block per option, CACHE_SIZE threads, one node
// per thread in a CACHE_SIZE tile of shared memory, and the current level kept in a
// global buffer when it is wider than the tile.
//
// A pass loads CACHE_SIZE nodes of level L into the tile and steps back `d` levels
// (d <= CACHE_DELTA) inside it: after k steps only the first CACHE_SIZE - k entries are
// still exact, so each pass writes back CACHE_SIZE - CACHE_DELTA nodes of level L - d.
// Passes over one level go left to right and never read what an earlier pass wrote
// (pass p writes nodes [a, a + TILE_OUT), pass p + 1 reads from a + TILE_OUT on), so the
// global level is updated in place.
//
// Node j of level i (j up-moves out of i) has price spot * u^(2j - i); values are
// discounted expectations, pu and pd already include the one-step discount factor.
#ifndef CACHE_SIZE
#define CACHE_SIZE 256
#endif
#ifndef CACHE_DELTA
#define CACHE_DELTA 32
#endif
#define TILE_OUT (CACHE_SIZE - CACHE_DELTA)

__device__ __forceinline__ float exercise(float spot, float strike, float log_u, unsigned i,
                                          unsigned j, int is_put)
{
    const float s = spot * __expf(log_u * (2.0f * j - (float)i));
    return fmaxf(is_put ? strike - s : s - strike, 0.0f);
}

// levels: n_options * (steps + 1) floats of scratch; price[o]: the value at the root.
extern "C" __global__ void __launch_bounds__(CACHE_SIZE)
binomial_no_barrier(float* price, float* levels, const float* spot, const float* strike,
                    unsigned steps, float log_u, float pu, float pd, int is_put, int american)
{
    // two tiles: a step reads one and writes the other, so one barrier per step suffices
    __shared__ float tile[2][CACHE_SIZE];
    const unsigned t = threadIdx.x, o = blockIdx.x;
    const float s0 = spot[o], k = strike[o];
    float* v = levels + o * (steps + 1);

    for (unsigned j = t; j <= steps; j += CACHE_SIZE)
        v[j] = exercise(s0, k, log_u, steps, j, is_put);
    __syncthreads();

    for (unsigned level = steps; level > 0;) {
        const unsigned d = level < CACHE_DELTA ? level : CACHE_DELTA;
        for (unsigned a = 0; a + d <= level; a += TILE_OUT) {
            const unsigned node = a + t;
            tile[0][t] = node <= level ? v[node] : 0.0f;
            __syncthreads();
            for (unsigned step = 1; step <= d; ++step) {
                const float* from = tile[(step - 1) & 1];
                if (t < CACHE_SIZE - step) {  // still exact after `step` steps
                    float x = pu * from[t + 1] + pd * from[t];
                    if (american)
                        x = fmaxf(x, exercise(s0, k, log_u, level - step, node, is_put));
                    tile[step & 1][t] = x;
                }
                // FLAW: no __syncthreads() here
            }
            if (t < TILE_OUT && node + d <= level)
                v[node] = tile[d & 1][t];
            __syncthreads();  // the tile is reloaded by the next pass
        }
        level -= d;
    }
    if (t == 0)
        price[o] = v[0];
}
