// ptxlint: launch block=256 grid=16
// Each thread stores its element and reads its right neighbour's with no barrier between:
// thread t + 1 may not have written s[t + 1] yet.
extern "C" __global__ void neighbour_sum(float* out, const float* in)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
    s[t] = in[i];
    out[i] = s[t] + s[(t + 1) % 256];
}
// ptx-expect: st\.shared => shared-memory-race kinds=write-read
