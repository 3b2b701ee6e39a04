// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// An inclusive scan of 16-value segments, one per half-warp (width 16). The shuffle's
// mask was written for one segment: every lane of the warp runs the shuffle, and
// lanes 16-31 are not in 0x0000ffff (compute-sanitizer synccheck: "Invalid arguments").
extern "C" __global__ void segment_scan(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int d = 1; d < 16; d *= 2) {
        const float t = __shfl_up_sync(0x0000ffffu, v, d, 16);
        if ((lane & 15) >= d)
            v += t;
    }
    out[i] = v;
}
// ptx-expect: shfl\.sync => warp-sync-mask kind=outside mask=0x0000ffff lanes=0xffff0000
