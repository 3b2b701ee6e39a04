// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4
// Every thread of every block folds its value into out[0] with a plain read and
// write: the threads overwrite each other's maxima (an atomic is needed).
extern "C" __global__ void peak(const int* in, int* out)
{
    const int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    out[0] = max(out[0], v);
}
// ptx-expect: st\.global\.u32 => global-memory-race kinds=write-read cross_block=True
