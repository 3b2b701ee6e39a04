// ptxlint: launch block=256 grid=8
// A periodic three-point smoothing, ping-ponging between two halves of one buffer:
// `pin` and `pout` flip together after the step barrier, so pin + pout == 1 on every
// trip and a step never reads the half it writes.
extern "C" __global__ void relax(float* out, const float* in, int steps)
{
    __shared__ float buf[2][256];
    const unsigned t = threadIdx.x;
    const unsigned left = (t + 255) % 256, right = (t + 1) % 256;
    buf[0][t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    int pin = 0, pout = 1;
    for (int k = 0; k < steps; ++k) {
        buf[pout][t] = 0.25f * buf[pin][left] + 0.5f * buf[pin][t] + 0.25f * buf[pin][right];
        __syncthreads();
        pout = 1 - pout;
        pin = 1 - pin;
    }
    out[blockIdx.x * 256 + t] = buf[pin][t];
}
