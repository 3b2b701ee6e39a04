// ptxlint: launch block=256 grid=4 param.1=1000 buffer.0=4000
// Off by one: the guards `i <= n` let thread 1000 load and store a[1000], one float
// past the n = 1000 of the buffer (nvcc computes the address before the guards, as in
// the clean twin).
extern "C" __global__ void bump(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i <= n ? a[i] : 0.0f;
    __syncthreads();
    if (i <= n)
        a[i] = x + 1.0f;
}
// ptx-expect: ld\.global\.f32 => out-of-bounds definite=False size=4000 first_bad_byte=4000 last_byte=4003
// ptx-expect: st\.global\.f32 => out-of-bounds definite=False size=4000 first_bad_byte=4000 last_byte=4003
