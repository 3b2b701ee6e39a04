// ptxlint: launch block=32,8 grid=32,32 param.2=1024 param.3=1024
// Tiled transpose with an unpadded 32x32 tile: the row-wise store is conflict-free, the
// column read tile[threadIdx.x][...] puts all 32 lanes in one bank.
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_unpadded(float* out, const float* in, int width, int height)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
// ptx-expect: ld\.shared\.f32 => bank-conflict ways=32 bank=0
