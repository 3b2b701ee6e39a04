// ptxlint: launch block=256 grid=4 param.2=1000 buffer.0=4000 buffer.1=4000
// No `if (i < n)` guard: the grid has 1024 threads but the buffers hold n = 1000
// floats, so threads 232..255 of the last block read and write past the end.
// Only this grid and n make it fail (a grid of exactly n threads would not).
extern "C" __global__ void scale(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2.0f * in[i];
}
// ptx-expect: ld\.global\.f32 => out-of-bounds definite=False size=4000 first_bad_byte=4000 last_byte=4095
// ptx-expect: st\.global\.f32 => out-of-bounds definite=False size=4000 first_bad_byte=4000 last_byte=4095
