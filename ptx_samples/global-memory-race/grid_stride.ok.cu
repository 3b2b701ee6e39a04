// ptxlint: launch block=128 grid=8 buffer.0=16384 buffer.1=16384
// The fix: a grid-stride pattern, the stride the whole grid, so each element belongs to
// one thread.
constexpr int BLOCK = 128, ITEMS = 4;  // launched with blockDim.x == BLOCK

extern "C" __global__ void saxpy(const float* x, float* y)
{
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int i = blockIdx.x * BLOCK + threadIdx.x + k * BLOCK * gridDim.x;
        y[i] = 2.0f * x[i] + y[i];
    }
}
