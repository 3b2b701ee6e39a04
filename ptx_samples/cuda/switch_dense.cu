// A dense 16-case switch. nvcc 13.0 lowers it to a setp/bra binary tree, not brx.idx.
extern "C" __global__ void opcode_dispatch(const int* ops, const float* a, const float* b,
                                           float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], r;
    switch (ops[i]) {
    case 0:  r = x + y; break;
    case 1:  r = x - y; break;
    case 2:  r = x * y; break;
    case 3:  r = x / y; break;
    case 4:  r = fminf(x, y); break;
    case 5:  r = fmaxf(x, y); break;
    case 6:  r = x * x + y; break;
    case 7:  r = sqrtf(x); break;
    case 8:  r = -x; break;
    case 9:  r = fabsf(x - y); break;
    case 10: r = x * 0.5f; break;
    case 11: r = y * 3.0f - x; break;
    case 12: r = floorf(x); break;
    case 13: r = ceilf(y); break;
    case 14: r = x > y ? 1.0f : 0.0f; break;
    case 15: r = rsqrtf(y); break;
    default: r = 0.0f; break;
    }
    out[i] = r;
}
