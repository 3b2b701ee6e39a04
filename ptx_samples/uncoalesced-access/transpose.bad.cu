// ptxlint: launch block=32,8 grid=32,32 param.2=1024 param.3=1024
// Naive transpose of a 1024x1024 matrix with 32x8 blocks: the reads are coalesced, but
// consecutive lanes write a whole column (height = 1024 floats) apart.
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_naive(float* out, const float* in, int width, int height)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height)
            out[x * height + (y + j)] = in[(y + j) * width + x];
}
// ptx-expect: st\.global\.f32 => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=4 stride_bytes=4096
