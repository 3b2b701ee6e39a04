// ptxlint: launch block=256 grid=64
// The same exchange with one 8-byte store per pair: float2 stores are served a
// half-warp at a time, and 16 lanes x 8 bytes cover the 32 banks once.
extern "C" __global__ void box_muller(float* out, const float* u)
{
    __shared__ float2 z[256];
    int t = threadIdx.x;
    int base = blockIdx.x * 512;
    float r = sqrtf(-2.0f * __logf(u[base + t]));
    float s, c;
    __sincosf(6.2831853f * u[base + 256 + t], &s, &c);
    z[t] = make_float2(r * c, r * s);
    __syncthreads();
    const float* flat = reinterpret_cast<const float*>(z);
    out[base + t] = flat[t];
    out[base + 256 + t] = flat[t + 256];
}
