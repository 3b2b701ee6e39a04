// ptxlint: launch block=512 grid=64 buffer.0=262144
// Bitonic sort of 1024 keys per block in shared memory, as the CUDA samples write it: 55
// compare-exchange stages, one barrier each. For strides 1-16, pos = 2t - (t & (stride-1))
// spreads a warp's 32 lanes over 64 words: a real 2-way bank conflict, on every access of
// those stages; from stride 32 on, a warp's lanes touch 32 consecutive words.
// ptx-expect: shared\.f32\s+(%f\d+, )?\[%r(4|6|8|10|12)(\+\d+)?\] => bank-conflict ways=2
// (nvcc addresses strides 1-16 through %r4-%r12)
#define N 1024
extern "C" __global__ void __launch_bounds__(512) bitonic_sort(float* data)
{
    __shared__ float s[N];
    const unsigned t = threadIdx.x;
    float* row = data + blockIdx.x * N;
    s[t] = row[t];
    s[t + N / 2] = row[t + N / 2];
    __syncthreads();

    for (unsigned size = 2; size <= N; size <<= 1) {

        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            const unsigned pos = 2 * t - (t & (stride - 1));
            const bool up = ((pos & size) == 0);
            const float a = s[pos], b = s[pos + stride];
            if ((a > b) == up) {
                s[pos] = b;
                s[pos + stride] = a;
            }
            __syncthreads();
        }
    }
    row[t] = s[t];
    row[t + N / 2] = s[t + N / 2];
}
