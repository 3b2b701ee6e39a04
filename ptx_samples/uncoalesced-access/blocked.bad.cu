// ptxlint: launch block=128 grid=64
// A direct blocked load (CUB's BLOCK_LOAD_DIRECT): each thread reads 8 consecutive ints,
// unrolled into 8 loads at a 32-byte lane stride. Every one of them touches 32 sectors to
// deliver 128 bytes: one pattern, eight instructions.
#define ITEMS 8

extern "C" __global__ void __launch_bounds__(128) tile_sum(int* out, const int* in)
{
    const int* p = in + (blockIdx.x * 128 + threadIdx.x) * ITEMS;
    int items[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        items[j] = p[j];
    int sum = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j)
        sum += items[j];
    out[blockIdx.x * 128 + threadIdx.x] = sum;
}
// ptx-expect: ld\.global\.u32\s+%r\d+, \[%rd\d+\]; => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=4 stride_bytes=32 instructions=8
