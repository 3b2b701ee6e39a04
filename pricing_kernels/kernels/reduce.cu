// Pass two of the reduction: one block folds the `count` per-block pairs of pass one
// into result[0] (sum) and result[1] (sum of squares). With NSUMS pairs per block
// (block_sums_n: pair k of block i at partial[k * count + i]) it folds each in turn into
// result[2k], result[2k + 1].
#include "reduce.cuh"

#ifndef NSUMS
#define NSUMS 1
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_final(const double2* partial, double* result, unsigned count)
{
#pragma unroll 1
    for (unsigned k = 0; k < NSUMS; ++k) {
        const double2* pk = partial + (size_t)k * count;
        double s1 = 0.0, s2 = 0.0;
        for (unsigned i = threadIdx.x; i < count; i += BLOCK) {  // 16-byte loads, lane-consecutive
            const double2 p = pk[i];
            s1 += p.x;
            s2 += p.y;
        }
        const double2 total = block_fold(s1, s2);
        if (threadIdx.x == 0) {
            result[2 * k] = total.x;
            result[2 * k + 1] = total.y;
        }
        __syncthreads();  // block_fold's arrays are reused by the next pair
    }
}
