// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// The same reduction, with __activemask() taken inside the branch: the even lanes.
extern "C" __global__ void even_lane_sum(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (lane % 2 == 0) {
        const unsigned active = __activemask();
        for (int offset = 16; offset > 1; offset /= 2)
            v += __shfl_down_sync(active, v, offset);
    }
    out[i] = v;
}
