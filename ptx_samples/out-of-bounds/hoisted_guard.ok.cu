// ptxlint: launch block=256 grid=4 param.1=1000 buffer.0=4000
// nvcc computes the address `a + 4*i` once, before the first guard `i < n`, and uses it
// under both guards: each guard must bound an address computed before it. Threads
// 1000..1023 of the grid touch nothing.
extern "C" __global__ void bump(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (i < n)
        a[i] = x + 1.0f;
}
