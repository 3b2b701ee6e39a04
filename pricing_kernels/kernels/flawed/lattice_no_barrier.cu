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
//
// Everything is float64: a node is pu * up + pd * down at every one of the n levels, so
// float32 coefficients (relative rounding ~3e-8, and pu + pd no longer the one-step
// discount) bias the root by about n x 3e-8 relative, and the lattice stopped converging
// (O(1/n)) near 512 steps. With doubles the rounding per level is 1e-16 and the lattice
// converges like the float64 one well past 8192 steps.
//
// Prices of nodes come from the host's float64 powers of u, never from __expf (whose
// relative error, ~2^-21, would show at 16384 steps) nor from a double exp() (whose
// slow-path branches cost the pre-launch analysis its precision): the host fills the
// last level with the payoffs and passes powers[t] = u^(2t - steps), t < CACHE_SIZE, and
// u, u^(2 TILE_OUT) and u^CACHE_DELTA. An American thread then keeps the price of its
// node by products only: times u per step (its node moves down a level), u^(2 TILE_OUT)
// per pass (the next pass's node is TILE_OUT to the right), u^CACHE_DELTA per group of
// levels; at most steps / CACHE_DELTA + steps / TILE_OUT + CACHE_DELTA products, each
// rounded once: about 1e-13 relative at 16384 steps.
#ifndef CACHE_SIZE
#define CACHE_SIZE 256
#endif
#ifndef CACHE_DELTA
#define CACHE_DELTA 32
#endif
#define TILE_OUT (CACHE_SIZE - CACHE_DELTA)

__device__ __forceinline__ double payoff(double s, double strike, int is_put)
{
    return fmax(is_put ? strike - s : s - strike, 0.0);
}

// levels: n_options * (steps + 1) doubles, the last level's payoffs on entry (scratch
// after); price[o]: the value at the root.
extern "C" __global__ void __launch_bounds__(CACHE_SIZE)
binomial_no_barrier(double* price, double* levels, const double* spot,
                    const double* strike, const double* powers, unsigned steps, double u,
                    double u_pass, double u_delta, double pu, double pd, int is_put,
                    int american)
{
    // two tiles: a step reads one and writes the other, so one barrier per step suffices
    __shared__ double tile[2][CACHE_SIZE];
    const unsigned t = threadIdx.x, o = blockIdx.x;
    const double k = strike[o];
    double* v = levels + o * (steps + 1);
    double row = spot[o] * powers[t];  // node t of the current level (American only)

    for (unsigned level = steps; level > 0;) {
        const unsigned d = level < CACHE_DELTA ? level : CACHE_DELTA;
        double start = row;  // node a + t of `level`
        for (unsigned a = 0; a + d <= level; a += TILE_OUT) {
            const unsigned node = a + t;
            double s = start;
            tile[0][t] = node <= level ? v[node] : 0.0;
            __syncthreads();
            for (unsigned step = 1; step <= d; ++step) {
                const double* from = tile[(step - 1) & 1];
                s *= u;  // node `node` of level `level - step`
                if (t < CACHE_SIZE - step) {  // still exact after `step` steps
                    double x = pu * from[t + 1] + pd * from[t];
                    if (american)
                        x = fmax(x, payoff(s, k, is_put));
                    tile[step & 1][t] = x;
                }
                // FLAW: no __syncthreads() here
            }
            if (t < TILE_OUT && node + d <= level)
                v[node] = tile[d & 1][t];
            __syncthreads();  // the tile is reloaded by the next pass
            start *= u_pass;
        }
        row *= u_delta;
        level -= d;
    }
    if (t == 0)
        price[o] = v[0];
}
