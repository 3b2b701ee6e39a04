// ptxlint: launch block=32,8 grid=32,32 param.2=1024 param.3=1024
// The same transpose with rows padded to 33 floats: lane i of the column read is in
// bank (i + row) % 32, so no two lanes share a bank.
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_padded(float* out, const float* in, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
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
