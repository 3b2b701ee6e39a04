// ptxlint: launch block=256 grid=8
// The same marks with an off-by-one in the second test: `prev >= 0` overlaps `k > 0`, so
// for a positive row[t] thread t writes s[t + 1] = row[t] while thread t + 1 writes -1
// there: which one stays depends on the schedule.
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
    if (t > 0 && prev >= 0)
        s[t] = -1;
    __syncthreads();
    slots[blockIdx.x * 256 + t] = s[t];
}
// ptx-expect: st\.shared\.u32\s+\[%r\d+\+4\] => shared-memory-race kinds=write-write
