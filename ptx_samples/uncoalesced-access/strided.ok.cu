// ptxlint: launch block=256 grid=64
// The same loads and atomics with consecutive lanes at consecutive words: 4 sectors each.
extern "C" __global__ void contiguous(float* out, const float* in, unsigned* count, float* hist)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n = gridDim.x * blockDim.x;
    float a = in[i];
    float b = in[i + n];
    float c = in[i + 2 * n];
    unsigned slot = atomicAdd(&count[i], 1u);
    atomicAdd(&hist[i], a);
    out[i] = a + b + c + slot;
}
