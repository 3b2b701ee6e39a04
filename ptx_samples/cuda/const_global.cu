// __constant__ coefficients and an initialised __device__ table.
__constant__ float c_coeffs[16];
__constant__ int c_len = 9;
__device__ int d_lut[8] = {0, 1, 1, 2, 3, 5, 8, 13};
__device__ float d_scale = 2.5f;
__device__ unsigned long long d_counter;

// 1D FIR filter reading taps from constant memory.
extern "C" __global__ void fir(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < c_len; ++k) {
        int j = i - k;
        if (j >= 0) acc += c_coeffs[k] * x[j];
    }
    y[i] = acc * d_scale + (float)d_lut[i & 7];
    if (i == 0) atomicAdd(&d_counter, 1ull);
}
