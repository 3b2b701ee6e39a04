// ptxlint: launch block=128 grid=8 buffer.0=131072 buffer.1=128
// Each warp scans one row of up to 1024 ints, 32 at a time, and stops at the first
// chunk holding a negative sentinel. The lanes decide together with __any_sync (one
// answer for the whole warp), so the warp leaves the loop in step and every lane runs
// the same number of __syncwarp()s; __reduce_add_sync gives every lane the chunk's sum.
extern "C" __global__ void row_pair_max(const int* in, int* out)
{
    __shared__ int scratch[4][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned row = blockIdx.x * 4 + warp;
    const int* src = in + row * 1024;
    int total = 0;
    for (int step = 0; step < 32; ++step) {
        const int v = src[step * 32 + lane];
        if (__any_sync(0xffffffffu, v < 0))
            break;
        scratch[warp][lane] = v;
        __syncwarp();
        const int right = scratch[warp][(lane + 1) % 32];
        __syncwarp();
        total += __reduce_add_sync(0xffffffffu, max(v, right));
    }
    if (lane == 0)
        out[row] = total;
}
