// ptxlint: launch block=64 grid=32
// Two warps per block: warp 0 stages the block's 32 inputs, warp 1 moves them one place
// up; its last lane has nowhere to go and stays idle.
extern "C" __global__ void shift_up(float* out, const float* in)
{
    __shared__ float staged[32], shifted[32];
    unsigned tid = threadIdx.x, warp = tid / 32;
    if (warp == 0)
        staged[tid] = in[blockIdx.x * 32 + tid];
    __syncthreads();
    if (warp == 1 && tid != 63)
        shifted[tid - 31] = staged[tid - 32];
    __syncthreads();
    if (warp == 0)
        out[blockIdx.x * 32 + tid] = tid == 0 ? 0.0f : shifted[tid];
}
