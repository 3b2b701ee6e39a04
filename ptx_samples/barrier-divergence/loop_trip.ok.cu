// ptxlint: launch block=64 grid=16 param.2=1000
// The twin: every thread makes the same number of trips (the block walks the array a
// tile at a time); threads past the end load a zero instead of leaving the loop.
extern "C" __global__ void rotate_tiles(float* out, const float* in, int n)
{
    __shared__ float s[64];
    const int t = threadIdx.x;
    float acc = 0.0f;
    for (int base = 0; base < n; base += 64) {
        const int i = base + t;
        s[t] = i < n ? in[i] : 0.0f;
        __syncthreads();
        acc += s[(t + 1) % 64];
        __syncthreads();
    }
    out[blockIdx.x * 64 + t] = acc;
}
