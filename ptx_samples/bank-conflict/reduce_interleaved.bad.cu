// ptxlint: launch block=256 grid=64
// Two interleaved-addressing tree reductions of 256 floats per block. The first selects
// the active threads with tid % (2*s): the survivors of a step sit 2*s words apart, but
// each reads and writes its own word, so every active lane of a warp is in its own bank.
// The second compacts the active threads (index = 2*s*tid): the lanes of a warp read
// words 2*s apart, and as s grows fewer lanes pass `index < blockDim.x`; the worst step
// is 8-way (s = 4: 32 lanes on 4 banks; s = 8: 16 lanes on 2; s = 16: 8 lanes on 1).
extern "C" __global__ void __launch_bounds__(256)
reduce_divergent(float* out, const float* in)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void __launch_bounds__(256)
reduce_strided_index(float* out, const float* in)
{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        unsigned int index = 2 * s * tid;
        if (index < blockDim.x)
            sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}
// ptx-expect[2]: ld\.shared\.f32\s+%f2, => bank-conflict ways=8
// ptx-expect[2]: ld\.shared\.f32\s+%f3, => bank-conflict ways=8
// ptx-expect: st\.shared\.f32\s+\[%r19\] => bank-conflict ways=8
