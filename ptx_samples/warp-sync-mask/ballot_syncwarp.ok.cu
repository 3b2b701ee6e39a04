// ptxlint: launch block=256 grid=4 buffer.0=8192 buffer.1=8192
// The same staging, with the exchange guarded by the ballot's own predicate: every
// lane the mask names reaches the __syncwarp.
#define ROW 24
extern "C" __global__ void stage_rows(const float* in, float* out)
{
    __shared__ float rows[8][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool writer = lane < ROW;
    const unsigned writers = __ballot_sync(0xffffffffu, writer);
    float v = in[i];
    if (writer) {
        rows[warp][lane] = v;
        __syncwarp(writers);
        v += rows[warp][lane ^ 1];
    }
    out[i] = v;
}
