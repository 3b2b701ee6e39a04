// ptxlint: launch block=256 grid=4 param.2=1024 buffer.0=4096 buffer.1=4096
// Two-point stencil through a shared tile without a halo: the last thread of the
// block reads tile[256], one past the end of the 256-float tile.
extern "C" __global__ void smooth(const float* in, float* out, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = 0.5f * (tile[threadIdx.x] + tile[threadIdx.x + 1]);
}
// ptx-expect: ld\.shared\.f32\s+%f\d+, \[%r\d+\+4\] => out-of-bounds definite=True size=1024 first_bad_byte=1024 last_byte=1027
