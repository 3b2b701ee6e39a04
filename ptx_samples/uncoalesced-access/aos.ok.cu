// ptxlint: launch block=256 grid=16 param.3=4096
// Structure of arrays: each field is its own array, read by consecutive lanes.
extern "C" __global__ void momentum(float* px, const float* mass, const float* vx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        px[i] = mass[i] * vx[i];
}
