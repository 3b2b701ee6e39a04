// ptxlint: launch block=256 grid=64 param.3=0
// The twin: the largest index wins through an atomic, and the block votes with
// __syncthreads_or instead of a shared flag.
extern "C" __global__ void sweep_worst(float* x, int* status, const float* b, float eps)
{
    __shared__ int worst;
    const unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
    if (t == 0)
        worst = -1;
    __syncthreads();
    const float next = 0.5f * (x[i] + b[i]);
    if (fabsf(next - x[i]) > eps)
        atomicMax(&worst, (int)t);
    x[i] = next;
    __syncthreads();
    if (t == 0)
        status[blockIdx.x] = worst;
}

extern "C" __global__ void sweep_moved(float* x, int* status, const float* b, float eps)
{
    const unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
    const float next = 0.5f * (x[i] + b[i]);
    const int moved = __syncthreads_or(fabsf(next - x[i]) > eps);
    x[i] = next;
    if (t == 0)
        status[blockIdx.x] = moved;
}
