// ptxlint: launch block=256 grid=4 param.2=1000 buffer.0=4000 buffer.1=4096
// The tail lanes no longer return: they skip the exchange but go on to store a zero
// into the padding. They are still running when the others reach __syncwarp() with the
// full mask, which then waits for lanes that never execute it.
extern "C" __global__ void warp_differences_padded(const float* in, float* out, int n)
{
    __shared__ float chunk[8][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int i = blockIdx.x * 256 + threadIdx.x;
    float d = 0.0f;
    if (i < n) {
        chunk[warp][lane] = in[i];
        __syncwarp();
        d = chunk[warp][lane] - chunk[warp][max(lane, 1u) - 1];
    }
    out[i] = d;
}
// ptx-expect: bar\.warp\.sync => barrier-divergence mask=0xffffffff
