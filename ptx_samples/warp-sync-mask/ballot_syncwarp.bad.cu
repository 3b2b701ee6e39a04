// ptxlint: launch block=256 grid=4 buffer.0=8192 buffer.1=8192
// Each warp stages the 24 values of a 24-wide row through shared memory; the writers
// are named with a ballot and the __syncwarp that publishes their stores takes that
// mask. But the exchange is written for a 16-wide row: only lanes 0-15 reach the
// __syncwarp, and lanes 16-23 of the mask never arrive (they go on to the store).
#define ROW 24
extern "C" __global__ void stage_rows(const float* in, float* out)
{
    __shared__ float rows[8][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool writer = lane < ROW;
    const unsigned writers = __ballot_sync(0xffffffffu, writer);
    float v = in[i];
    if (lane < 16) {
        rows[warp][lane] = v;
        __syncwarp(writers);
        v += rows[warp][lane ^ 1];
    }
    out[i] = v;
}
// ptx-expect: bar\.warp\.sync => warp-sync-mask kind=missing mask=0x00ffffff lanes=0x00ff0000
