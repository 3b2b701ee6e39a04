// ptxlint: launch block=256 grid=16 buffer.0=16384 buffer.1=16384
// Each warp normalises one 32-float row: the row's sum is reduced with __shfl_down_sync
// and broadcast from lane 0 with __shfl_sync, so every lane of the warp holds the same
// total. A warp whose row is not all zeros rescales it and reads it back reversed
// through shared memory, with a __syncwarp() between the write and the read; the whole
// warp takes that branch together, so the full mask is right.
extern "C" __global__ void normalise_rows(const float* in, float* out)
{
    __shared__ float rows[8][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * 256 + threadIdx.x;
    float v = in[i];
    float sum = v;
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    sum = __shfl_sync(0xffffffffu, sum, 0);  // lane 0 holds the row's total
    if (sum != 0.0f) {
        rows[warp][lane] = v / sum;
        __syncwarp();
        v = rows[warp][31 - lane];
    }
    out[i] = v;
}
