// ptxlint: launch block=256 grid=16
// The twin: a barrier between the stores and the reads.
extern "C" __global__ void neighbour_sum(float* out, const float* in)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
    s[t] = in[i];
    __syncthreads();
    out[i] = s[t] + s[(t + 1) % 256];
}
