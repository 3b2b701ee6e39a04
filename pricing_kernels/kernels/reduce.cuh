// The two-pass reduction of payoffs to (sum, sum of squares), in float64: a float32 sum
// of 10^7 payoffs keeps about three significant digits. Pass one runs at the end of each
// Monte Carlo kernel (block_sums: one double2 per block), pass two is reduce_final in
// reduce.cu (one block folds the per-block pairs).
#pragma once

#ifndef BLOCK
#define BLOCK 256
#endif

// The block's totals of s1 and s2, valid in thread 0. Every thread of the block must
// call it (it has barriers). 8-byte accesses are served a half-warp at a time, and
// 16 lanes x 8 bytes cover the 32 banks once.
__device__ __forceinline__ double2 block_fold(double s1, double s2)
{
    __shared__ double sum1[BLOCK], sum2[BLOCK];
    const unsigned t = threadIdx.x;
    sum1[t] = s1;
    sum2[t] = s2;
    __syncthreads();
#pragma unroll
    for (unsigned half = BLOCK / 2; half > 0; half /= 2) {
        if (t < half) {
            sum1[t] += sum1[t + half];
            sum2[t] += sum2[t + half];
        }
        __syncthreads();
    }
    return make_double2(sum1[0], sum2[0]);
}

__device__ __forceinline__ void block_sums(double s1, double s2, double2* partial)
{
    const double2 total = block_fold(s1, s2);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = total;
}

// Several (sum, sum of squares) pairs per thread (a price and its Greeks, several
// strikes): pair k of the block goes to partial[k * gridDim.x + blockIdx.x], so pass two
// reads each pair's blocks lane-consecutively. The pairs are folded one after the
// other through block_fold's arrays; the barrier after each store keeps a fast thread
// from overwriting sum1[0] before every thread has read the previous total.
template <unsigned K>
__device__ __forceinline__ void block_sums_n(const double* s1, const double* s2,
                                             double2* partial)
{
#pragma unroll
    for (unsigned k = 0; k < K; ++k) {
        const double2 total = block_fold(s1[k], s2[k]);
        if (threadIdx.x == 0)
            partial[k * gridDim.x + blockIdx.x] = total;
        __syncthreads();
    }
}
