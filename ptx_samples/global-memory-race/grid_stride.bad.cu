// ptxlint: launch block=128 grid=8 buffer.0=16384 buffer.1=16384
// Each thread handles ITEMS elements, a block apart: the stride is the block size where
// it should be the whole grid, so block b also updates the elements of blocks b + 1,
// b + 2 and b + 3 (and reads them while those blocks write them).
constexpr int BLOCK = 128, ITEMS = 4;  // launched with blockDim.x == BLOCK

extern "C" __global__ void saxpy(const float* x, float* y)
{
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = blockIdx.x * BLOCK + threadIdx.x + k * BLOCK;
        y[i] = 2.0f * x[i] + y[i];
    }
}
// ptx-expect: st\.global\.f32 => global-memory-race cross_block=True
