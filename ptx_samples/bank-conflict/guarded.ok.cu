// ptxlint: launch block=64 grid=32
// The first half-warp gathers every sixth word of a shared table: 16 lanes at a stride of
// 6 words fall on 16 different banks (lane 16 would share lane 0's bank, but it does not
// run the load).
extern "C" __global__ void gather_sixth(float* out, const float* in)
{
    __shared__ float table[64 * 6];
    int idx = threadIdx.x;
    for (int k = idx; k < 64 * 6; k += 64)
        table[k] = in[blockIdx.x * 64 * 6 + k];
    __syncthreads();
    if (idx < 16)
        out[blockIdx.x * 16 + idx] = table[idx * 6];
}
