// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// Lanes with a key in the lower quarter form a coalesced group and share the group
// leader's value. The group is taken before the test that narrows it to the lanes
// below 8, so its shuffle names lanes 8-31, which never execute it.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void share_leader(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    cg::coalesced_group all = cg::coalesced_threads();
    if (lane < 8)
        v = all.shfl(v, 0);
    out[i] = v;
}
// ptx-expect: shfl\.sync => warp-sync-mask kind=missing mask=0xffffffff lanes=0xffffff00
