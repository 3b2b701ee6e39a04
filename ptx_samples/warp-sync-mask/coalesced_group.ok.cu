// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// The same sharing, with the coalesced group taken inside the branch: lanes 0-7.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void share_leader(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (lane < 8) {
        cg::coalesced_group low = cg::coalesced_threads();
        v = low.shfl(v, 0);
    }
    out[i] = v;
}
