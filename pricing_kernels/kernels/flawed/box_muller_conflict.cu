// FLAWED on purpose (see README.md): the paired Box-Muller exchange keeps a row of four
// floats per thread and writes it one float at a time. Lanes are 16 bytes apart, so
// the 32 lanes of a 4-byte store fall on 8 banks: a 4-way bank conflict per store.
// Production twin: normal4_paired in ../normals.cuh stores one float4 per lane.
#include "../normals.cuh"

#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
normals_paired_rows(float4* out, unsigned n, unsigned k0, unsigned k1)
{
    __shared__ float rows[BLOCK * 4];
    const unsigned t = threadIdx.x, i = blockIdx.x * BLOCK + t;
    const uint4 w = philox4x32_10(make_uint4(0u, i, 0u, 0u), make_uint2(k0, k1));
    const float u[4] = {uniform01(w.x), uniform01(w.y), uniform01(w.z), uniform01(w.w)};
    const bool even = (t & 1u) == 0;
    float mine[4], other[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        mine[k] = even ? bm_radius(u[k]) : bm_angle(u[k]);
        rows[4 * t + k] = mine[k];
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < 4; ++k)
        other[k] = rows[4 * (t ^ 1u) + k];
    float z[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
        z[k] = even ? mine[k] * __cosf(other[k]) : other[k] * __sinf(mine[k]);
    if (i < n)
        out[i] = make_float4(z[0], z[1], z[2], z[3]);
}
