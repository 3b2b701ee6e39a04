// Matrix transpose, out[x][y] = in[y][x], launched with 2D blocks of TILE x ROWS threads.
#define TILE 32
#define ROWS 8

// Naive: reads are coalesced, writes are strided by `height`.
extern "C" __global__ void transpose_naive(float* out, const float* in, int width, int height)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        if (x < width && y + j < height)
            out[x * height + (y + j)] = in[(y + j) * width + x];
    }
}

// Tiled through shared memory; the +1 column padding avoids bank conflicts on the column read.
extern "C" __global__ void transpose_tiled(float* out, const float* in, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
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
