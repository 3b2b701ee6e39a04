// ptxlint: launch block=32,8 grid=32,32 param.2=1024 param.3=1024 buffer.0=4194304 buffer.1=4194304
// Tiled matrix transpose through a padded 32x33 shared tile (8 rows of threads, 4 rows
// each), the conflict-free version of the classic example.
#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out,
                                     int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
