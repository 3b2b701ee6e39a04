// ptxlint: launch block=32,8 grid=2,8 param.0=64 param.1=64 param.2=64 buffer.4=16384 buffer.5=16384 buffer.7=16384
// Naive SGEMM, C = alpha*A*B + beta*C (row-major, M = N = K = 64), one thread per element
// of C with the row taken from threadIdx.x: the 32 lanes of a warp own 32 rows of A, and
// on every trip of the loop over i they read A[row*K + i], K floats (256 bytes) apart:
// 32 sectors a request where 4 would do (unrolled by nvcc: 4 loads a trip from a pointer
// it bumps by 16 bytes, one finding for the 4). C, read and written after the loop, is a
// row apart too.
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int i = 0; i < K; ++i)
            acc += A[row * K + i] * B[i * N + col];
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }
}
// ptx-expect: ld\.global\.f32\s+%f15, => uncoalesced-access stride_bytes=256
// ptx-expect: ld\.global\.f32\s+%f27, => uncoalesced-access sectors_per_request=32 stride_bytes=256
// ptx-expect: st\.global\.f32 => uncoalesced-access sectors_per_request=32 stride_bytes=256
