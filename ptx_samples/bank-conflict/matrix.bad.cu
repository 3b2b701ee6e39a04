// ptxlint: launch block=16,2 grid=1
// ldmatrix/stmatrix .x4 on a 16x64 half tile whose rows are 128 bytes: lane l gives the
// address of row l % 16, column block l / 16 (threadIdx = (l % 16, l / 16)). The 8 rows
// of one phase all start in bank 0: 8-way.
#include <cuda_fp16.h>

extern "C" __global__ void fragments(unsigned* out, const unsigned* in)
{
    __shared__ __align__(16) __half tile[16][64];
    int t = threadIdx.y * 16 + threadIdx.x;
#pragma unroll 1
    for (int k = 0; k < 16; ++k)
        reinterpret_cast<unsigned*>(tile)[k * 32 + t] = in[k * 32 + t];
    __syncthreads();
    unsigned a = (unsigned)__cvta_generic_to_shared(&tile[threadIdx.x][threadIdx.y * 8]);
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
    __syncthreads();
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                 :: "r"(a), "r"(r3), "r"(r2), "r"(r1), "r"(r0) : "memory");
    __syncthreads();
    out[t] = reinterpret_cast<unsigned*>(tile)[t];
}
// ptx-expect: ldmatrix => bank-conflict ways=8 bank=0
// ptx-expect: stmatrix => bank-conflict ways=8 bank=0
