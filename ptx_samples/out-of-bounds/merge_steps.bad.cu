// ptxlint: launch block=256 grid=4 buffer.0=4096
// The same steps with an off-by-one guard, `offset + 1 >= stride`: thread 0 has offset 0
// and, for stride 1, reads s[-1], the word before the array.
#define N 256
extern "C" __global__ void merge_steps(int* data)
{
    __shared__ int s[N];
    const unsigned t = threadIdx.x;
    int* block = data + blockIdx.x * N;
    s[t] = block[t];
    __syncthreads();
#pragma unroll 1
    for (unsigned size = 2; size <= N; size <<= 1) {
#pragma unroll 1
        for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
            const unsigned offset = t & (size - 1);
            const int mine = s[t];
            int other = mine;
            if (offset + 1 >= stride)
                other = s[t - stride];
            __syncthreads();
            if (offset >= stride && other > mine)
                s[t] = other;
            __syncthreads();
        }
    }
    block[t] = s[t];
}
// ptx-expect[2]: ld\.shared\.u32 => out-of-bounds
