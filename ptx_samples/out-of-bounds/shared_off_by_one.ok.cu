// ptxlint: launch block=256 grid=4 buffer.0=4096 buffer.1=4096
// The fixed twin of shared_off_by_one.bad.cu: the staging buffer holds one float
// per thread of the 256-thread block.
extern "C" __global__ void stage_reverse(const float* in, float* out)
{
    __shared__ float buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = 2.0f * buf[blockDim.x - 1 - threadIdx.x];
}
