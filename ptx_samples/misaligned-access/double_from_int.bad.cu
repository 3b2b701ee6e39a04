// ptxlint: launch block=256 grid=4
// Reads a double out of an int array at an odd index: &words[2*i + 1] is 4 modulo
// 8, so every 8-byte load is misaligned.
extern "C" __global__ void widen(const int* words, double* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = *reinterpret_cast<const double*>(&words[2 * i + 1]);
}
// ptx-expect: ld\.global\.f64 => misaligned-access width=8 alignment=4 offset_residue=4
