// ptxlint: launch block=16,2 grid=1
// The same fragments from a tile padded to 72 halves (144-byte rows): row r of a phase
// starts in bank 4r % 32, so the 8 rows of a phase cover the 32 banks once.
//
#include <cuda_fp16.h>

extern "C" __global__ void fragments(unsigned* out, const unsigned* in)
{
    __shared__ __align__(16) __half tile[16][72];
    int t = threadIdx.y * 16 + threadIdx.x;
#pragma unroll 1
    for (int k = 0; k < 18; ++k)
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
