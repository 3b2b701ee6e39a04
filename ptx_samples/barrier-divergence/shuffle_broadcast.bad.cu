// ptxlint: launch block=256 grid=16 buffer.0=16384 buffer.1=16384
// The rows are 16 floats, one per half-warp: the sum is reduced and broadcast with
// width 16, so each half-warp holds its own total and takes the branch on its own, but
// the __syncwarp() inside it kept the full mask. When one half's row is all zeros its
// lanes go on to the store without the others, who wait for them at the __syncwarp.
extern "C" __global__ void normalise_half_rows(const float* in, float* out)
{
    __shared__ float rows[8][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * 256 + threadIdx.x;
    float v = in[i];
    float sum = v;
    for (int offset = 8; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset, 16);
    sum = __shfl_sync(0xffffffffu, sum, 0, 16);  // lane 0 of each half-warp
    if (sum != 0.0f) {
        rows[warp][lane] = v / sum;
        __syncwarp();
        v = rows[warp][lane ^ 15];
    }
    out[i] = v;
}
// ptx-expect: bar\.warp\.sync => barrier-divergence mask=0xffffffff
