// Grid-stride vector add: c[i] = a[i] + b[i] for every i < n.
// Exercises: 64-bit address arithmetic, a loop whose stride is gridDim.x * blockDim.x.
extern "C" __global__ void vector_add(const float* __restrict__ a,
                                      const float* __restrict__ b,
                                      float* __restrict__ c, int n)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

// Same loop with float4 accesses, so ld.global.nc.v4.f32 shows up.
extern "C" __global__ void vector_add4(const float4* __restrict__ a,
                                       const float4* __restrict__ b,
                                       float4* __restrict__ c, int n4)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
