// ptxlint: launch block=128 grid=64
// A warp-striped load (CUB's BLOCK_LOAD_STRIPED): item j of every thread comes from
// in[j * 128 + tid], so each of the 8 loads reads 128 consecutive bytes per warp.
#define ITEMS 8

extern "C" __global__ void __launch_bounds__(128) tile_sum(int* out, const int* in)
{
    const int* p = in + blockIdx.x * 128 * ITEMS + threadIdx.x;
    int items[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        items[j] = p[j * 128];
    int sum = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        sum += items[j];
    out[blockIdx.x * 128 + threadIdx.x] = sum;
}
