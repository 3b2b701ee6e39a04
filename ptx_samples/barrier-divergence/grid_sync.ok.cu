// ptxlint: launch block=256 grid=16
// The twin: every block reaches grid.sync(); only the work is guarded.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void two_pass(float* out, float* partial, const float* in, int blocks)
{
    const cg::grid_group grid = cg::this_grid();
    const bool active = (int)blockIdx.x < blocks;
    const int i = blockIdx.x * 256 + threadIdx.x;
    if (active)
        partial[i] = 2.0f * in[i];
    grid.sync();
    if (active)
        out[i] = partial[(i + 256) % (blocks * 256)];
}
