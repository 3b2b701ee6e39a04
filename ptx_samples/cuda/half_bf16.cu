// Half and bfloat16: scalar and packed (half2 / bfloat162) arithmetic and conversions.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void half_axpy(const __half2* x, __half2* y, __half alpha_h, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __half2 a = __half2half2(alpha_h);
    __half2 r = __hfma2(a, x[i], y[i]);
    r = __hmax2(r, __float2half2_rn(0.0f));
    y[i] = __hmul2(r, __h2div(r, __hadd2(r, __float2half2_rn(1.0f))));
}

extern "C" __global__ void bf16_mix(const __nv_bfloat162* x, const float* f,
                                    __nv_bfloat162* out, float* fo, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __nv_bfloat162 v = x[i];
    __nv_bfloat162 w = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    __nv_bfloat162 r = __hfma2(v, w, __float2bfloat162_rn(0.25f));
    out[i] = __hmin2(r, v);
    fo[i] = __bfloat162float(__low2bfloat16(r)) + __bfloat162float(__high2bfloat16(r))
            + __half2float(__float2half_rz(f[i])) + __half2float(hexp(__float2half(f[i])));
}
