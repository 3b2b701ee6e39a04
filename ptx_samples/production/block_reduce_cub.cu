// ptxlint: launch block=256 grid=64 param.2=65536 buffer.0=262144 buffer.1=256
// Block sums with CUB: a warp-transposed blocked load of 4 items per thread, then
// cub::BlockReduce; instantiated for float and int (two kernels, one template).
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>

template <int BLOCK, int ITEMS, typename T>
__global__ void __launch_bounds__(BLOCK) block_sum(const T* __restrict__ in, T* __restrict__ out, int n)
{
    using Load = cub::BlockLoad<T, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Reduce = cub::BlockReduce<T, BLOCK>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Reduce::TempStorage reduce;
    } temp;
    const int tile = blockIdx.x * BLOCK * ITEMS;
    T items[ITEMS];
    Load(temp.load).Load(in + tile, items, n - tile, T(0));
    __syncthreads();
    T total = Reduce(temp.reduce).Sum(items);
    if (threadIdx.x == 0)
        out[blockIdx.x] = total;
}

template __global__ void block_sum<256, 4, float>(const float*, float*, int);
template __global__ void block_sum<256, 4, int>(const int*, int*, int);
