// ptxlint: launch block=256 grid=8
// Marks run boundaries of a row of keys: slot t + 1 takes the key of thread t when it is
// positive, slot t is -1 when the key before it is not. Thread t writes s[t + 1] only if
// row[t] > 0, thread t + 1 writes it only if row[t] <= 0: one word of `keys`, which the
// kernel never writes, so the two writes never both happen.
extern "C" __global__ void mark_runs(int* slots, const int* keys)
{
    __shared__ int s[257];
    const int t = threadIdx.x;
    const int* row = keys + blockIdx.x * 256;
    const int k = row[t];
    const int prev = t > 0 ? row[t - 1] : 0;
    s[t] = 0;
    if (t == 0)
        s[256] = 0;
    __syncthreads();
    if (k > 0)
        s[t + 1] = k;
    if (t > 0 && prev <= 0)
        s[t] = -1;
    __syncthreads();
    slots[blockIdx.x * 256 + t] = s[t];
}
