// ptxlint: launch block=128 grid=8 buffer.0=4096 buffer.1=4096
// Pairs of 16-float rows: the lower half-warp of each warp owns a row and sums it with
// a butterfly, but the shuffle inside `if (lane < 16)` keeps the full-warp mask, so it
// waits for lanes 16-31, which never execute it
// but are still running: they go on to the store (compute-sanitizer synccheck: "Barrier
// error detected. Missing thread(s) in warp").
extern "C" __global__ void row_sums(const float* in, float* out)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (lane < 16) {
        for (int offset = 8; offset > 0; offset /= 2)
            v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    out[i] = v;  // lanes 16-31 pass their value through: still running
}
// ptx-expect: shfl\.sync => warp-sync-mask kind=missing mask=0xffffffff lanes=0xffff0000
