// A kernel calling out-of-line device functions, so the PTX has .func with a return
// parameter, call with argument lists, and (via a function pointer) call through a
// register with a .callprototype.

struct Pair { float lo, hi; };

__device__ __noinline__ float clamp_scale(float x, float lo, float hi, float k)
{
    return fminf(fmaxf(x, lo), hi) * k;
}

__device__ __noinline__ Pair min_max(const float* p, int n)
{
    Pair r{p[0], p[0]};
    for (int i = 1; i < n; ++i) { r.lo = fminf(r.lo, p[i]); r.hi = fmaxf(r.hi, p[i]); }
    return r;
}

__device__ __noinline__ float op_square(float x) { return x * x; }
__device__ __noinline__ float op_negate(float x) { return -x; }

typedef float (*unary_op)(float);

extern "C" __global__ void call_kernel(const float* in, float* out, int n, int which)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Pair mm = min_max(in + (i & ~7), 8);
    unary_op f = (which & 1) ? op_square : op_negate;   // indirect call
    out[i] = f(clamp_scale(in[i], mm.lo, mm.hi, 0.5f));
}
