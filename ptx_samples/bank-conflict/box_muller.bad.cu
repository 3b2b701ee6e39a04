// ptxlint: launch block=256 grid=64
// Box-Muller: thread t turns (u1, u2) into the pair (z0, z1) and parks it at z[2t],
// z[2t+1]; after the barrier thread t copies z[t] and z[t + 256] out, so each output
// value comes from an even or odd neighbour. The interleaved stores step by 2 words:
// 2-way conflicts.
extern "C" __global__ void box_muller(float* out, const float* u)
{
    __shared__ float z[512];
    int t = threadIdx.x;
    int base = blockIdx.x * 512;
    float r = sqrtf(-2.0f * __logf(u[base + t]));
    float s, c;
    __sincosf(6.2831853f * u[base + 256 + t], &s, &c);
    z[2 * t] = r * c;
    z[2 * t + 1] = r * s;
    __syncthreads();
    out[base + t] = z[t];
    out[base + 256 + t] = z[t + 256];
}
// ptx-expect: st\.shared\.f32\s+\[%r\d+\], => bank-conflict ways=2 bank=0
// ptx-expect: st\.shared\.f32\s+\[%r\d+\+4\], => bank-conflict ways=2 bank=1
