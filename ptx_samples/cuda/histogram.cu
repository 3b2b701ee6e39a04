// 256-bin byte histogram: privatised per block in shared memory, merged with global atomics.
#define BINS 256

extern "C" __global__ void histogram256(const unsigned char* data, int n, unsigned int* bins)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&bins[b], local[b]);
}

// Float-weighted histogram: shared atomicAdd on float, atomicMax/atomicCAS on the side.
extern "C" __global__ void weighted_hist(const int* keys, const float* w, int n,
                                         float* sums, int* max_key, unsigned long long* first)
{
    __shared__ float acc[64];
    if (threadIdx.x < 64) acc[threadIdx.x] = 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i] & 63;
        atomicAdd(&acc[k], w[i]);
        atomicMax(max_key, keys[i]);
        atomicCAS(first, 0ull, (unsigned long long)i + 1);
    }
    __syncthreads();
    if (threadIdx.x < 64) atomicAdd(&sums[threadIdx.x], acc[threadIdx.x]);
}
