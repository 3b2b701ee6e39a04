// ptxlint: launch block=256 grid=64
// Sequential addressing: the active threads are the first s, and each reads the word s
// further on, so consecutive lanes read consecutive words at every step.
extern "C" __global__ void __launch_bounds__(256)
reduce_sequential(float* out, const float* in)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}
