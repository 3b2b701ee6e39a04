// ptxlint: launch block=256 grid=4 param.2=1000 buffer.0=4000 buffer.1=4000
// Each lane subtracts its left neighbour within the warp (lane 0 gives 0), through
// shared memory. Threads
// past the end of the array return first: __syncwarp() waits only for the lanes of its
// mask that have not exited, so the tail warp's remaining lanes meet without them.
extern "C" __global__ void warp_differences(const float* in, float* out, int n)
{
    __shared__ float chunk[8][32];
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int i = blockIdx.x * 256 + threadIdx.x;
    if (i >= n)
        return;
    chunk[warp][lane] = in[i];
    __syncwarp();
    out[i] = chunk[warp][lane] - chunk[warp][max(lane, 1u) - 1];
}
