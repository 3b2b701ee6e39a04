// ptxlint: launch block=256 grid=64 param.2=16384
// Per-block moments of a Monte Carlo estimate, one double2 (sum, sum of squares) per
// block, built for sm_100: nvcc and NVRTC declare every pointer parameter
// `.ptr .align 1` there, which promises nothing about the cudaMalloc'd buffer behind it
// (no finding of its own). The defect: the results start one double into `out` (its
// first slot holds a count), so each 16-byte store is 8 bytes off a 16-byte boundary.
#define BLOCK 256
extern "C" __global__ void block_moments(const float* __restrict__ x,
                                         double* __restrict__ out, int n)
{
    __shared__ double s1[BLOCK], s2[BLOCK];
    const unsigned t = threadIdx.x, i = blockIdx.x * BLOCK + t;
    const double v = i < n ? x[i] : 0.0;
    s1[t] = v;
    s2[t] = v * v;
    __syncthreads();
    for (unsigned half = BLOCK / 2; half > 0; half /= 2) {
        if (t < half) {
            s1[t] += s1[t + half];
            s2[t] += s2[t + half];
        }
        __syncthreads();
    }
    if (t == 0)
        reinterpret_cast<double2*>(out + 1)[blockIdx.x] = make_double2(s1[0], s2[0]);
}
// ptx-expect: st\.global\.v2\.f64 => misaligned-access width=16 alignment=8 offset_residue=8
