// ptxlint: launch block=32 grid=8
// One warp reads a 32x32 float array at word strides 2, 4, 8, 16 and 32 (2- to 32-way
// conflicts) and bumps a counter at a 32-word stride (32-way on the atomic).
extern "C" __global__ void strided_words(float* out, const float* in)
{
    __shared__ float s[32 * 32];
    int t = threadIdx.x;
#pragma unroll 1
    for (int k = 0; k < 32; ++k)
        s[k * 32 + t] = in[blockIdx.x * 1024 + k * 32 + t];
    __syncthreads();
    float r = s[2 * t] + s[4 * t] + s[8 * t] + s[16 * t] + s[32 * t];
    atomicAdd(&s[32 * t + 1], r);
    __syncthreads();
    out[blockIdx.x * 32 + t] = s[t];
}
// ptx-expect: ld\.shared\.f32\s+%f2, => bank-conflict ways=4 bank=0
// ptx-expect: ld\.shared\.f32\s+%f3, => bank-conflict ways=2 bank=0
// ptx-expect: ld\.shared\.f32\s+%f5, => bank-conflict ways=8 bank=0
// ptx-expect: ld\.shared\.f32\s+%f7, => bank-conflict ways=16 bank=0
// ptx-expect: ld\.shared\.f32\s+%f9, => bank-conflict ways=32 bank=0
// ptx-expect: atom\.shared\.add\.f32 => bank-conflict ways=32 bank=1
