// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// The same partial sums: the 8 lower ranks are a tile of their own (tiled_partition<8>
// of the 16-thread tile would name them), here simply a tile of 8.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tile_partials(const float* in, float* out)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (tile.thread_rank() < 8) {
        cg::thread_block_tile<8> half = cg::tiled_partition<8>(tile);
        for (int offset = 4; offset > 0; offset /= 2)
            v += half.shfl_down(v, offset);
    }
    out[i] = v;
}
