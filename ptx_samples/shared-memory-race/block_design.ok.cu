// ptxlint: launch grid=64
// No block shape is given. `shift_left` is written for blocks of up to 256 threads (its
// tile holds 256 floats, indexed by threadIdx.x); `fill_table` reads no thread index: it
// is written for one thread per block, every thread filling the whole table. A race that
// needs a bigger block than the kernel is written for is a note that says so (here
// `fill_table`'s). The fixed twin of block_design.bad.cu: `shift_left` reads its
// neighbour's element after the barrier.
#define TILE 256
#define TABLE 32
extern "C" __global__ void shift_left(const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float tile[TILE];
    const unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = in[i];
    __syncthreads();
    const float right = t + 1 < TILE ? tile[t + 1] : 0.f;
    out[i] = right - tile[t];
}
extern "C" __global__ void fill_table(float* __restrict__ out, float step)
{
    __shared__ float table[TABLE];
    for (int k = 0; k < TABLE; ++k)
        table[k] = k * step;
    __syncthreads();
    atomicAdd(&out[blockIdx.x % 8], table[blockIdx.x % TABLE]);
}
