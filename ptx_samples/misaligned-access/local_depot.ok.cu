// ptxlint: launch block=128 grid=32
// ptxlint: disable-file=uninitialized-read
// Each thread keeps five running sums in a local array that a non-inlined helper folds.
// The array lives in the kernel's `__local_depot`, declared `.align 8`; the helper sees
// it through its pointer argument. The fixed twin of local_depot.bad.cu: the helper reads
// doubles, which the depot's `.align 8` aligns (it was taken as 1-byte aligned in the
// helper, a false warning on every one of these loads).
// (uninitialized-read is left out: it does not yet see the caller's writes from the
// helper, which reads what the kernel stored.)
struct Acc { double v[5]; };
__device__ __noinline__ double fold(const Acc* a)
{
    return a->v[0] + a->v[1] * a->v[2] + a->v[3] * a->v[4];
}
extern "C" __global__ void moments(const double* __restrict__ x, double* __restrict__ out, int n)
{
    Acc acc = {};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double v = x[i];
        acc.v[0] += 1.0; acc.v[1] += v; acc.v[2] += v * v; acc.v[3] += v * v * v;
        acc.v[4] += v * v * v * v;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = fold(&acc);
}
