// ptxlint: launch block=64 grid=16
// The twin: __syncwarp() between each read and the write that follows, and between each
// write and the next read (cf. the CUDA programming guide's warp-synchronous reduction).
__device__ void warp_reduce(float* s, unsigned t)
{
#pragma unroll
    for (unsigned off = 32; off > 0; off /= 2) {
        const float v = s[t] + s[t + off];
        __syncwarp();
        s[t] = v;
        __syncwarp();
    }
}

extern "C" __global__ void block_sum64(float* out, const float* in)
{
    __shared__ float s[64];
    const unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32)
        warp_reduce(s, t);
    if (t == 0)
        out[blockIdx.x] = s[0];
}
