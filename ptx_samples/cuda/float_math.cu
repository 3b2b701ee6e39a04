// Single- and double-precision math: library calls (expf, logf, sincosf...) expand inline
// into long sequences, __fdividef/__expf into approximate ex2/rcp forms.
extern "C" __global__ void float_math(const float* x, float* out, double* dout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float s, c;
    sincosf(v, &s, &c);
    float r = expf(v) + logf(fabsf(v) + 1.0f) + sqrtf(fabsf(v)) + __fdividef(s, c + 2.0f)
              + __expf(-v) + __logf(v * v + 1.0f) + rsqrtf(v * v + 1.0f) + powf(fabsf(v), 1.5f);
    out[i] = __saturatef(r) + fmaf(v, v, r) + truncf(r) + roundf(v);
    double d = (double)v;
    dout[i] = sqrt(d * d + 1.0) + exp(d) / (1.0 + d * d) + fma(d, 3.0, -1.0) + log1p(fabs(d));
}

// Integer <-> float conversions with explicit rounding intrinsics.
extern "C" __global__ void conversions(const float* x, int* ri, unsigned* ru,
                                       long long* rl, double* rd, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    ri[i] = __float2int_rn(v) + __float2int_rz(v) + __float2int_rd(v) + __float2int_ru(v);
    ru[i] = __float2uint_rn(v) ^ __float_as_uint(v);
    rl[i] = __float2ll_rz(v) + (long long)__double2int_rn((double)v * 1e3);
    rd[i] = __int2double_rn(ri[i]) + __ll2double_rn(rl[i]) + __fadd_rz(v, 1.0f) + __fmul_ru(v, v);
}
