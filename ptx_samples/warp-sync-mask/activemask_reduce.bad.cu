// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// A warp reduction over the even lanes, with the mask taken by __activemask() before
// the branch: it names the odd lanes too, which never reach the shuffles
// but go on running to the store.
extern "C" __global__ void even_lane_sum(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned active = __activemask();
    float v = in[i];
    if (lane % 2 == 0) {
        for (int offset = 16; offset > 1; offset /= 2)
            v += __shfl_down_sync(active, v, offset);
    }
    out[i] = v;  // the odd lanes store their own value: still running
}
// ptx-expect: shfl\.sync => warp-sync-mask kind=missing mask=0xffffffff lanes=0xaaaaaaaa
