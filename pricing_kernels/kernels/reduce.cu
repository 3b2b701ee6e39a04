// Pass two of the reduction: one block folds the `count` per-block pairs of pass one
// into result[0] (sum) and result[1] (sum of squares).
#include "reduce.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_final(const double2* partial, double* result, unsigned count)
{
    double s1 = 0.0, s2 = 0.0;
    for (unsigned i = threadIdx.x; i < count; i += BLOCK) {  // 16-byte loads, lane-consecutive
        const double2 p = partial[i];
        s1 += p.x;
        s2 += p.y;
    }
    const double2 total = block_fold(s1, s2);
    if (threadIdx.x == 0) {
        result[0] = total.x;
        result[1] = total.y;
    }
}
