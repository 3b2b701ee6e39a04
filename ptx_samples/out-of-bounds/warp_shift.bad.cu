// ptxlint: launch block=64 grid=32
// Two warps per block: warp 0 stages the block's 32 inputs, warp 1 moves them one place
// up. Off by one: lane 31 of warp 1 writes shifted[32], past the end.
extern "C" __global__ void shift_up(float* out, const float* in)
{
    __shared__ float staged[32], shifted[32];
    unsigned tid = threadIdx.x, warp = tid / 32;
    if (warp == 0)
        staged[tid] = in[blockIdx.x * 32 + tid];
    __syncthreads();
    if (warp == 1)
        shifted[tid - 31] = staged[tid - 32];
    __syncthreads();
    if (warp == 0)
        out[blockIdx.x * 32 + tid] = tid == 0 ? 0.0f : shifted[tid];
}
// ptx-expect: st\.shared\.f32\s+\[%r\d+\+-124\] => out-of-bounds definite=True size=128 first_bad_byte=128 last_byte=131
