// ptxlint: launch block=256 grid=4 param.2=1000
// The twin: every thread of the block reaches block.sync(); only the work is guarded.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void shift_left(float* out, const float* in, int n)
{
    __shared__ float s[256];
    const cg::thread_block block = cg::this_thread_block();
    const int t = threadIdx.x, i = blockIdx.x * 256 + t;
    s[t] = i < n ? in[i] : 0.0f;
    block.sync();
    if (i < n)
        out[i] = s[(t + 1) % 256];
}
