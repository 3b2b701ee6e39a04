// Two instances of one template kernel, each reading a shared tile by column in an
// unrolled loop: one CUDA line (17) gives 32-way bank conflicts on 8 PTX loads. Built by
// tests/data/build.sh (nvcc 13.0); read by tests/test_grouping.py and friends.
#define TILE 32

template <typename T>
__global__ void column_sum(T* out, const T* in, int n)
{
    __shared__ T tile[TILE][TILE];
    int x = threadIdx.x, y = threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        tile[y + j][x] = in[(y + j) * n + x];
    __syncthreads();
    T sum = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
        sum += tile[x][y + 8 * k];
    out[y * n + x] = sum;
}

template __global__ void column_sum<float>(float*, const float*, int);
template __global__ void column_sum<int>(int*, const int*, int);
