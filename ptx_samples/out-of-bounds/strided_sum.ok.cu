// ptxlint: launch block=256 param.2=65536
// ptxlint: disable-file=bank-conflict,uninitialized-read
// The textbook reduction with interleaved addressing and a strided index: at step s,
// thread tid works on index = 2*s*tid when that is below blockDim.x, adding the element
// s further on. Only the block shape is given (no grid): the facts that keep
// `index + s` inside the tile (index a multiple of 2*s, s a power of two) come from a
// run of one block, as the address and every branch deciding it depend on the block
// shape alone. The fixed twin of strided_sum.bad.cu (s < blockDim.x): no finding
// (before, `sdata[index + s]` was a false "may be out of bounds" warning).
// (The bank conflicts of this version are real, and the subject of the next version of
// the textbook reduction, not of this sample; uninitialized-read does not yet see that
// `index + s` stays inside the tile.)
#define BLOCK 256
extern "C" __global__ void block_sum(const float* __restrict__ in, float* __restrict__ out,
                                     unsigned n)
{
    __shared__ float sdata[BLOCK];
    const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        const unsigned index = 2 * s * tid;
        if (index < blockDim.x)
            sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sdata[0];
}
