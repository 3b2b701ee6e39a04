// ptxlint: launch block=128 grid=8 buffer.0=131072 buffer.1=128
// The same scan, but each lane stops at its own sentinel (`if (v < 0) break;` instead
// of the vote): lanes leave the loop at different steps and go on towards the final
// store while the others still run __syncwarp() with the full mask, waiting for lanes
// that are running elsewhere.
extern "C" __global__ void row_pair_max_lanes(const int* in, int* out)
{
    __shared__ int scratch[4][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned row = blockIdx.x * 4 + warp;
    const int* src = in + row * 1024;
    int total = 0;
    for (int step = 0; step < 32; ++step) {
        const int v = src[step * 32 + lane];
        if (v < 0)
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
// ptx-expect[1]: bar\.warp\.sync => barrier-divergence mask=0xffffffff
// ptx-expect[2]: bar\.warp\.sync => barrier-divergence mask=0xffffffff
// ptx-expect: redux\.sync => warp-sync-mask kind=may-skip mask=0xffffffff
