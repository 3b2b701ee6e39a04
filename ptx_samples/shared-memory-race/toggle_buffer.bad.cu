// ptxlint: launch block=256 grid=8
// The same smoothing with a slip in the initial values: pin = pout = 0, and both flip
// together, so on every trip they name the same half: thread t overwrites buf[pout][t]
// while its neighbours may still be reading it.
extern "C" __global__ void relax(float* out, const float* in, int steps)
{
    __shared__ float buf[2][256];
    const unsigned t = threadIdx.x;
    const unsigned left = (t + 255) % 256, right = (t + 1) % 256;
    buf[0][t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    int pin = 0, pout = 0;
    for (int k = 0; k < steps; ++k) {
        buf[pout][t] = 0.25f * buf[pin][left] + 0.5f * buf[pin][t] + 0.25f * buf[pin][right];
        __syncthreads();
        pout = 1 - pout;
        pin = 1 - pin;
    }
    out[blockIdx.x * 256 + t] = buf[pin][t];
}
// ptx-expect[6]: st\.shared\.f32 => shared-memory-race kinds=write-read
