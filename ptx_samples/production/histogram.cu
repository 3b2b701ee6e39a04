// ptxlint: launch block=256 grid=120 smem=8192 param.2=4194304 param.3=256 buffer.0=4194304 buffer.1=1024
// Byte histogram with one sub-histogram per warp in dynamic shared memory (fewer
// colliding atomics), merged per block and added to the global bins.
#define WARPS 8
extern "C" __global__ void histogram(const unsigned char* __restrict__ in, unsigned* __restrict__ bins,
                                     int n, int nbins)
{
    extern __shared__ unsigned sub[];  // WARPS * nbins
    const int warp = threadIdx.x / 32;
    for (int b = threadIdx.x; b < WARPS * nbins; b += blockDim.x)
        sub[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&sub[warp * nbins + (in[i] * nbins >> 8)], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
        unsigned total = 0;
        for (int w = 0; w < WARPS; ++w)
            total += sub[w * nbins + b];
        atomicAdd(&bins[b], total);
    }
}
