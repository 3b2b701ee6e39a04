// ptxlint: launch block=256 grid=16 buffer.0=8192 buffer.1=16384
// The fix: each of the first 128 threads stages two words, so the whole tile is written
// before the barrier.
extern "C" __global__ void scale_tile(const float* in, float* out)
{
    __shared__ float tile[256];
    const unsigned t = threadIdx.x;  // blockDim.x == 256
    if (t < 128) {
        tile[t] = in[blockIdx.x * 128 + t];
        tile[t + 128] = -in[blockIdx.x * 128 + t];
    }
    __syncthreads();
    out[blockIdx.x * 256 + t] = 2.0f * tile[t];
}
