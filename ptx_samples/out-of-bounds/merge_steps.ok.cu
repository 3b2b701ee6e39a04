// ptxlint: launch block=256 grid=4 buffer.0=4096
// Odd-even merge steps over a block's 256 keys: in the merge of width `size`, a thread
// whose offset in its run is at least `stride` takes the larger of its key and the key
// `stride` before it. offset = t & (size - 1) <= t, so t - stride never goes below 0
// (issue #22: a note about bytes before `s` without the block shape; kept as a
// regression sample).
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
            if (offset >= stride)
                other = s[t - stride];
            __syncthreads();
            if (offset >= stride && other > mine)
                s[t] = other;
            __syncthreads();
        }
    }
    block[t] = s[t];
}
