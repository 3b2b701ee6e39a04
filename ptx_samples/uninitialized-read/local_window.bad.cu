// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096 buffer.2=4096
// A per-thread window of 8 values of which only 7 are filled; the pick index comes
// from memory, so the array lives in the local depot and w[7] is read unwritten.
extern "C" __global__ void pick(const float* in, const int* which, float* out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float w[8];
    for (int k = 0; k < 7; ++k)
        w[k] = in[(i + k) % 1024];
    out[i] = w[which[i] & 7];
}
// ptx-expect: ld\.local\.f32 => uninitialized-read kind=local bytes=28-31
