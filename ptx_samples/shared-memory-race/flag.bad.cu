// ptxlint: launch block=256 grid=64 param.3=0
// One Jacobi step per launch that tells the host about the block's convergence.
// `sweep_worst` records *which* thread saw a large change: every such thread writes its
// own index to `worst` with no order between them, so the value kept changes from run to
// run (a race). `sweep_moved` records only *whether* one did: every writer stores 1, a
// benign write-write race (a note: the PTX memory model still calls it a race).
extern "C" __global__ void sweep_worst(float* x, int* status, const float* b, float eps)
{
    __shared__ int worst;
    const unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
    if (t == 0)
        worst = -1;
    __syncthreads();
    const float next = 0.5f * (x[i] + b[i]);
    if (fabsf(next - x[i]) > eps)
        worst = t;
    x[i] = next;
    __syncthreads();
    if (t == 0)
        status[blockIdx.x] = worst;
}

extern "C" __global__ void sweep_moved(float* x, int* status, const float* b, float eps)
{
    __shared__ int moved;
    const unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
    if (t == 0)
        moved = 0;
    __syncthreads();
    const float next = 0.5f * (x[i] + b[i]);
    if (fabsf(next - x[i]) > eps)
        moved = 1;
    x[i] = next;
    __syncthreads();
    if (t == 0)
        status[blockIdx.x] = moved;
}
// ptx-expect[2]: st\.shared\.u32\s+\[_Z\w*worst\], %r\d+ => shared-memory-race kinds=write-write
// ptx-expect[2]: st\.shared\.u32\s+\[_Z\w*moved\], %r\d+ => shared-memory-race kinds=write-write benign=1
