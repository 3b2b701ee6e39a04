// ptxlint: launch block=64 grid=16 param.2=1000
// Each thread walks its own elements and synchronises on every trip: with n = 1000 and
// 64 threads, threads 0-39 make 16 trips and threads 40-63 make 15, so the last trip's
// barriers wait for threads that have left the loop.
extern "C" __global__ void rotate_tiles(float* out, const float* in, int n)
{
    __shared__ float s[64];
    const int t = threadIdx.x;
    float acc = 0.0f;
    for (int i = t; i < n; i += 64) {
        s[t] = in[i];
        __syncthreads();
        acc += s[(t + 1) % 64];
        __syncthreads();
    }
    out[blockIdx.x * 64 + t] = acc;
}
// ptx-expect[1]: bar\.sync => barrier-divergence skipped_by=exit
// ptx-expect[2]: bar\.sync => barrier-divergence skipped_by=exit
// ptx-expect[1]: ld\.shared\.f32 => uninitialized-read kind=shared
