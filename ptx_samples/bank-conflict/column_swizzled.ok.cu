// ptxlint: launch block=32,8 grid=32,32 param.2=1024 param.3=1024
// An unpadded 32x32 tile with the column index XOR-swizzled by the row: element
// (r, c) lives at tile[r][c ^ r], so the column read puts lane i in bank (i ^ row): no
// conflict. (`xor` has no lane form: with the block shape, each lane's address is
// computed on its own.)
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_swizzled(float* out, const float* in, int width, int height)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        int r = threadIdx.y + j;
        tile[r][threadIdx.x ^ r] = in[(y + j) * width + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        int c = threadIdx.y + j;
        out[(y + j) * height + x] = tile[threadIdx.x][c ^ threadIdx.x];
    }
}
