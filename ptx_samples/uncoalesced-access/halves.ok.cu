// ptxlint: launch block=256 grid=64 param.2=16384
// Complex doubles as a 16-byte struct with 8-byte alignment: nvcc cannot prove 16-byte
// alignment, so it reads each element as two 8-byte halves (+0, +8). Each load alone
// touches twice the sectors its bytes need, but the pair reads every byte of the
// 512-byte run of a warp: 16 sectors for 512 bytes, as one 16-byte load would.
struct Complex { double re, im; };

extern "C" __global__ void magnitude(double* out, const Complex* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Complex c = in[i];
        out[i] = c.re * c.re + c.im * c.im;
    }
}
