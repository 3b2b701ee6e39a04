// Standard normals from uniforms by Box-Muller: (u1, u2) -> r = sqrt(-2 ln u1),
// theta = 2 pi (u2 - 1/2); z1 = r cos theta, z2 = r sin theta. The angle is centred
// on 0 because __sincosf is accurate on [-pi, pi].
//
// Two forms, chosen by NORMALS:
//   NORMALS_THREAD (1)  each thread turns its own four uniforms into two pairs;
//   NORMALS_PAIRED (2)  lanes 2k and 2k+1 form the pairs: the even lane computes r from
//                       its uniforms, the odd lane the angles, and they swap them through
//                       shared memory. Each lane still uses one uniform per normal, and
//                       the expensive functions run once per lane instead of twice.
#pragma once
#include "rng.cuh"

#define NORMALS_THREAD 1
#define NORMALS_PAIRED 2

// The radicand is clamped at 0: for u within 2^-24 of 1, |log u| < 2^-23 is below the
// absolute error of __logf (2^-21.41 on [0.5, 2]), which may then return a value >= 0,
// and sqrtf of a negative number is NaN (one NaN poisons the whole sum).
__device__ __forceinline__ float bm_radius(float u)
{
    return sqrtf(fmaxf(-2.0f * __logf(u), 0.0f));
}
__device__ __forceinline__ float bm_angle(float u) { return 2.0f * PI_F * (u - 0.5f); }

__device__ __forceinline__ float4 normal4_thread(uint4 w)
{
    float s0, c0, s1, c1;
    const float r0 = bm_radius(uniform01(w.x)), r1 = bm_radius(uniform01(w.z));
    __sincosf(bm_angle(uniform01(w.y)), &s0, &c0);
    __sincosf(bm_angle(uniform01(w.w)), &s1, &c1);
    return make_float4(r0 * c0, r0 * s0, r1 * c1, r1 * s1);
}

// `xchg` holds one float4 per thread of the block: 16-byte accesses are served a
// quarter-warp at a time, and 8 lanes x 16 bytes cover the 32 banks once.
// Both lanes of a pair must call this together (the whole warp, in practice).
__device__ __forceinline__ float4 normal4_paired(uint4 w, float4* xchg, unsigned t)
{
    const bool even = (t & 1u) == 0;
    float4 mine;
    if (even)
        mine = make_float4(bm_radius(uniform01(w.x)), bm_radius(uniform01(w.y)),
                           bm_radius(uniform01(w.z)), bm_radius(uniform01(w.w)));
    else
        mine = make_float4(bm_angle(uniform01(w.x)), bm_angle(uniform01(w.y)),
                           bm_angle(uniform01(w.z)), bm_angle(uniform01(w.w)));
    xchg[t] = mine;
    __syncwarp();
    const float4 other = xchg[t ^ 1u];
    __syncwarp();  // the partner has read `mine` before the next call overwrites it
    const float4 r = even ? mine : other, a = even ? other : mine;
    float4 z;
    z.x = r.x * (even ? __cosf(a.x) : __sinf(a.x));
    z.y = r.y * (even ? __cosf(a.y) : __sinf(a.y));
    z.z = r.z * (even ? __cosf(a.z) : __sinf(a.z));
    z.w = r.w * (even ? __cosf(a.w) : __sinf(a.w));
    return z;
}
