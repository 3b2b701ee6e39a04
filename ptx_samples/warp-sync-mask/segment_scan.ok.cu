// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// The same segmented scan: both half-warps run the shuffle, so the mask names both;
// `width` keeps each segment's exchange inside its half.
extern "C" __global__ void segment_scan(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int d = 1; d < 16; d *= 2) {
        const float t = __shfl_up_sync(0xffffffffu, v, d, 16);
        if ((lane & 15) >= d)
            v += t;
    }
    out[i] = v;
}
