// ptxlint: launch grid=64
// No block shape is given. `shift_left` is written for blocks of up to 256 threads (its
// tile holds 256 floats, indexed by threadIdx.x); `fill_table` reads no thread index: it
// is written for one thread per block, every thread filling the whole table. A race that
// needs a bigger block than the kernel is written for is a note that says so; the
// defect here holds for any block of two threads or more: `shift_left` reads its
// neighbour's element before the barrier that would order it after the write.
#define TILE 256
#define TABLE 32
extern "C" __global__ void shift_left(const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float tile[TILE];
    const unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = in[i];
    const float right = t + 1 < TILE ? tile[t + 1] : 0.f;
    __syncthreads();
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
// ptx-expect: st\.shared\.f32 \t\[%r[0-9]+\], %f[0-9]+; => shared-memory-race kinds=write-read
// ptx-expect[1]: st\.shared\.f32 \t\[_ZZ10fill_tableE5table\] => shared-memory-race min_threads=2
