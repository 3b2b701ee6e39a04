// ptxlint: launch block=256 grid=120 param.1=1048576 buffer.2=4194304 buffer.3=4194304
// y = a*x + y over float4 through the parameters, in a grid-stride loop, with a scalar
// tail for n % 4 (the host passes 16-byte aligned buffers, as cudaMalloc returns).
extern "C" __global__ void axpy4(float a, int n, const float* __restrict__ x, float* __restrict__ y)
{
    const int n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        const float4 xv = x4[i];
        float4 yv = y4[i];
        yv.x += a * xv.x; yv.y += a * xv.y; yv.z += a * xv.z; yv.w += a * xv.w;
        y4[i] = yv;
    }
    const int tail = 4 * n4 + blockIdx.x * blockDim.x + threadIdx.x;
    if (tail < n)
        y[tail] += a * x[tail];
}
