// Cooperative groups: tiled partitions, coalesced groups, and a grid-wide sync
// (the kernel must be launched with cudaLaunchCooperativeKernel).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_tile_reduce(const int* in, int* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int i = block.group_index().x * block.size() + block.thread_rank();
    int v = i < n ? in[i] : 0;
    int s = cg::reduce(warp, v, cg::plus<int>());
    if (warp.thread_rank() == 0) atomicAdd(out, s);

    if (v & 1) {                                  // only odd values take part
        cg::coalesced_group odd = cg::coalesced_threads();
        int rank = odd.thread_rank();
        int leader = odd.shfl(v, 0);
        if (rank == 0) atomicMax(out + 1, leader + (int)odd.size());
    }
}

extern "C" __global__ void cg_grid_two_phase(float* data, float* scratch, int n)
{
    cg::grid_group grid = cg::this_grid();
    unsigned long long i = grid.thread_rank();
    if (i < n) scratch[i] = data[i] * 2.0f;
    grid.sync();
    if (i < n) data[i] = scratch[(i + 1) % n] + scratch[i];
}
