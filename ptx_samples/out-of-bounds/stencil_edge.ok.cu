// ptxlint: launch block=256 grid=4 param.2=1024 buffer.0=4096 buffer.1=4096
// The fixed twin of stencil_edge.bad.cu: the tile has one halo element, which the
// last thread loads (clamped to the last input element at the end of the input).
extern "C" __global__ void smooth(const float* in, float* out, int n)
{
    __shared__ float tile[257];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    if (threadIdx.x == blockDim.x - 1)
        tile[threadIdx.x + 1] = in[min(i + 1, n - 1)];
    __syncthreads();
    out[i] = 0.5f * (tile[threadIdx.x] + tile[threadIdx.x + 1]);
}
