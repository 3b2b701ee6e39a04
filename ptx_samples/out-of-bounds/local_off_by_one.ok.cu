// ptxlint: launch block=256 grid=4 buffer.0=32768 buffer.1=4096 buffer.2=4096
// The fixed twin of local_off_by_one.bad.cu: `j < 8` keeps the data-dependent
// index inside the 8-entry local array.
extern "C" __global__ void pick8(const float* in, const unsigned* pick, float* out)
{
    float v[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int threads = gridDim.x * blockDim.x;
    for (int k = 0; k < 8; ++k) v[k] = in[k * threads + i];
    unsigned j = pick[i];
    if (j < 8) out[i] = v[j];
}
