// ptxlint: launch block=256 grid=4 param.2=1000
// Threads past the end of the array return before the barrier. The hardware counts only
// threads that have not exited, so this usually works, but bar.sync is .aligned: the PTX
// ISA leaves it undefined in code that not every thread of the block runs.
extern "C" __global__ void shift_left(float* out, const float* in, int n)
{
    __shared__ float s[256];
    const int t = threadIdx.x, i = blockIdx.x * 256 + t;
    if (i >= n)
        return;
    s[t] = in[i];
    __syncthreads();
    out[i] = s[(t + 1) % 256];
}
// ptx-expect: bar\.sync => barrier-divergence skipped_by=exit
