// ptxlint: launch block=256 grid=4 param.2=1000
// Cooperative groups: threads past the end of the array return before block.sync(),
// which compiles to `barrier.sync` without `.aligned`. The hardware releases it without
// the exited threads, but CUDA requires every thread of the group to take part in a
// collective: undefined behaviour (a warning, like `__syncthreads()` in early_exit).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void shift_left(float* out, const float* in, int n)
{
    __shared__ float s[256];
    const cg::thread_block block = cg::this_thread_block();
    const int t = threadIdx.x, i = blockIdx.x * 256 + t;
    if (i >= n)
        return;
    s[t] = in[i];
    block.sync();
    out[i] = s[(t + 1) % 256];
}
// ptx-expect: barrier\.sync => barrier-divergence skipped_by=exit
