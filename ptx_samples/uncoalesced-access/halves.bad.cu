// ptxlint: launch block=256 grid=64 param.2=16384
// Complex doubles inside a 32-byte record: the two halves read together still cover only
// half of each lane's 32 bytes, 32 sectors for 512 bytes (twice the ideal 16).
struct Sample { double re, im, weight, time; };

extern "C" __global__ void magnitude(double* out, const Sample* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double re = in[i].re, im = in[i].im;
        out[i] = re * re + im * im;
    }
}
// ptx-expect: ld\.global\.f64\s+%fd\d+, \[%rd\d+\]; => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=16 stride_bytes=32 instructions=2
