// ptxlint: launch block=32 grid=64
// Each thread buffers its column of a SEG x 32 tile in a private row of shared memory (a
// per-thread array indexed in a loop, which registers cannot hold) and writes it back
// flipped. Row t starts at word t*SEG, so on every trip of the two loops that walk a row
// (forwards, then backwards) lane t is in bank (t*SEG + k) % 32: SEG = 2, 4, 8 and 16
// give 2-, 4-, 8- and 16-way conflicts.
template <int SEG>
__device__ void flip_columns(float* rows, float* out, const float* in, int t)
{
    float* row = rows + t * SEG;
#pragma unroll 1
    for (int k = 0; k < SEG; ++k)
        row[k] = in[k * 32 + t];
#pragma unroll 1
    for (int k = 0; k < SEG; ++k)
        out[k * 32 + t] = row[SEG - 1 - k];
}

extern "C" __global__ void flip_tiles(float* out, const float* in)
{
    __shared__ float rows2[32 * 2], rows4[32 * 4], rows8[32 * 8], rows16[32 * 16];
    int t = threadIdx.x;
    size_t tile = blockIdx.x * (size_t)(32 * 30);
    flip_columns<2>(rows2, out + tile, in + tile, t);
    flip_columns<4>(rows4, out + tile + 64, in + tile + 64, t);
    flip_columns<8>(rows8, out + tile + 192, in + tile + 192, t);
    flip_columns<16>(rows16, out + tile + 448, in + tile + 448, t);
}
// ptx-expect[1]: st\.shared\.f32 => bank-conflict ways=2
// ptx-expect[1]: ld\.shared\.f32 => bank-conflict ways=2
// ptx-expect[2]: st\.shared\.f32 => bank-conflict ways=4
// ptx-expect[2]: ld\.shared\.f32 => bank-conflict ways=4
// ptx-expect[3]: st\.shared\.f32 => bank-conflict ways=8
// ptx-expect[3]: ld\.shared\.f32 => bank-conflict ways=8
// ptx-expect[4]: st\.shared\.f32 => bank-conflict ways=16
// ptx-expect[4]: ld\.shared\.f32 => bank-conflict ways=16
