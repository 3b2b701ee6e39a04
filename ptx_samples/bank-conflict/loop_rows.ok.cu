// ptxlint: launch block=32 grid=64
// Each thread buffers its column of a SEG x 32 tile in a private row of shared memory (a
// per-thread array indexed in a loop, which registers cannot hold) and writes it back
// flipped. Rows padded to SEG + 1 words (an odd stride) put the 32 lanes in 32 different
// banks on every trip: conflict free.
template <int SEG>
__device__ void flip_columns(float* rows, float* out, const float* in, int t)
{
    float* row = rows + t * (SEG + 1);  // one pad word per row
#pragma unroll 1
    for (int k = 0; k < SEG; ++k)
        row[k] = in[k * 32 + t];
#pragma unroll 1
    for (int k = 0; k < SEG; ++k)
        out[k * 32 + t] = row[SEG - 1 - k];
}

extern "C" __global__ void flip_tiles(float* out, const float* in)
{
    __shared__ float rows2[32 * 3], rows4[32 * 5], rows8[32 * 9], rows16[32 * 17];
    int t = threadIdx.x;
    size_t tile = blockIdx.x * (size_t)(32 * 30);
    flip_columns<2>(rows2, out + tile, in + tile, t);
    flip_columns<4>(rows4, out + tile + 64, in + tile + 64, t);
    flip_columns<8>(rows8, out + tile + 192, in + tile + 192, t);
    flip_columns<16>(rows16, out + tile + 448, in + tile + 448, t);
}
