// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096 buffer.2=4096
// The fix: the window is filled completely before the indexed read.
extern "C" __global__ void pick(const float* in, const int* which, float* out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float w[8];
    for (int k = 0; k < 8; ++k)
        w[k] = in[(i + k) % 1024];
    out[i] = w[which[i] & 7];
}
