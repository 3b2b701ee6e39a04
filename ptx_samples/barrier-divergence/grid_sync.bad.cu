// ptxlint: launch block=256 grid=16
// Two passes over a cooperative launch with a grid-wide barrier between them. Blocks
// beyond the data return early, so they never arrive at grid.sync(): the other blocks
// wait for them forever. (Within a block every thread agrees, so no __syncthreads()
// rule sees it: the grid barrier is recognised by its arrive-and-spin code.)
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void two_pass(float* out, float* partial, const float* in, int blocks)
{
    const cg::grid_group grid = cg::this_grid();
    if ((int)blockIdx.x >= blocks)
        return;
    const int i = blockIdx.x * 256 + threadIdx.x;
    partial[i] = 2.0f * in[i];
    grid.sync();
    out[i] = partial[(i + 256) % (blocks * 256)];
}
// ptx-expect[1]: barrier\.sync => barrier-divergence skipped_by=block grid=True
