// Compiled with -G (device debug): no optimisation, full DWARF sections in the PTX if
// the compiler still emits them.
__device__ int scale_by(int x, int k) { return x * k; }

extern "C" __global__ void debug_saxpy(float a, const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = scale_by(i, 2);
        y[i] = a * x[i] + y[i] + (float)k;
    }
}
