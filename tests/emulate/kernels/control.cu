// Control-flow kernels for tests/emulate/test_control.py (see build.sh).
__device__ __noinline__ int add_scaled(int x, int k) { return x * 3 + k; }

__device__ __noinline__ unsigned long long fact(unsigned n)
{
    if (n <= 1) return 1;
    return n * fact(n - 1);  // recursion with a lane-dependent depth
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

typedef int (*op_t)(int);
__device__ __noinline__ int twice(int x) { return 2 * x; }
__device__ __noinline__ int square(int x) { return x * x; }

// if/else, a loop with a lane-dependent trip count, nested divergence, early exit
extern "C" __global__ void branches(int* out, int* loops, int* nested, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v;
    if (i & 1) v = 10 * i; else v = -i;
    out[i] = v;
    int s = 0;
    for (int k = 0; k <= i % 37; ++k) s += k * k;
    loops[i] = s;
    int w = 0;
    if (i % 3 == 0) {
        if (i % 5 == 0) w = 15; else w = 3;
    } else {
        for (int k = 0; k < (i & 7); ++k) { if (k == 4) break; w += k; }
    }
    nested[i] = w;
}

extern "C" __global__ void calls(int* out, unsigned long long* facts, int* fibs,
                                 int* indirect)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = add_scaled(i, 7);
    facts[i] = fact(i % 21);
    fibs[i] = fib(i % 12);
    op_t f = (i & 1) ? twice : square;
    indirect[i] = f(i);
}

extern "C" __global__ void switcher(int* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int r;
    switch (i % 8) {
    case 0: r = 11; break;
    case 1: r = 22; break;
    case 2: r = 33; break;
    case 3: r = 44; break;
    case 4: r = 55; break;
    case 5: r = 66; break;
    case 6: r = 77; break;
    default: r = 88;
    }
    out[i] = r + i;
}

// local arrays indexed by the thread (the stack frame and local memory)
extern "C" __global__ void local_arrays(int* out)
{
    int buf[16];
    int i = threadIdx.x;
    for (int k = 0; k < 16; ++k) buf[k] = k * i;
    out[i] = buf[i % 16] + buf[(i * 7) % 16];
}
