// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// Tiles of 16 threads reduce 8 partial sums each. The shuffle is a method of the tile,
// so its mask names all 16 lanes of the tile, but it is called inside the branch that
// only the 8 lower ranks take: the upper 8 never arrive
// (nvcc tests bit 3 of the rank: lanes 0-7 and 16-23 of each warp take the branch).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tile_partials(const float* in, float* out)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (tile.thread_rank() < 8) {
        for (int offset = 4; offset > 0; offset /= 2)
            v += tile.shfl_down(v, offset);
    }
    out[i] = v;  // the upper ranks store their own value: still running
}
// ptx-expect: shfl\.sync => warp-sync-mask kind=missing mask=per-lane lanes=0xff00ff00
