// Bitonic sort of 1024 keys in shared memory, fully unrolled: 55 compare-exchange stages,
// each its own barrier interval (the shape of the 409-line sorting-network outlier).
// ptxlint: launch block=512 grid=64 buffer.0=262144
#define N 1024
extern "C" __global__ void __launch_bounds__(512) bitonic_sort(float* data)
{
    __shared__ float s[N];
    const unsigned t = threadIdx.x;
    float* row = data + blockIdx.x * N;
    s[t] = row[t];
    s[t + N / 2] = row[t + N / 2];
    __syncthreads();
#pragma unroll
    for (unsigned size = 2; size <= N; size <<= 1) {
#pragma unroll
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            const unsigned pos = 2 * t - (t & (stride - 1));
            const bool up = ((pos & size) == 0);
            const float a = s[pos], b = s[pos + stride];
            if ((a > b) == up) {
                s[pos] = b;
                s[pos + stride] = a;
            }
            __syncthreads();
        }
    }
    row[t] = s[t];
    row[t + N / 2] = s[t + N / 2];
}
