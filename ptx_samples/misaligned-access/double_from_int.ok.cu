// ptxlint: launch block=256 grid=4
// The fixed twin of double_from_int.bad.cu: the double starts at an even int index,
// a multiple of 8 bytes.
extern "C" __global__ void widen(const int* words, double* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = *reinterpret_cast<const double*>(&words[2 * i]);
}
