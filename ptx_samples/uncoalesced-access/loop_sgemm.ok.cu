// ptxlint: launch block=32,8 grid=2,8 param.0=64 param.1=64 param.2=64 buffer.4=16384 buffer.5=16384 buffer.7=16384
// Naive SGEMM, C = alpha*A*B + beta*C (row-major, M = N = K = 64), one thread per element
// of C with the column taken from threadIdx.x: the 32 lanes of a warp share one row of A
// (a broadcast: one sector), read 32 consecutive floats of a row of B, and write 32
// consecutive floats of C. Coalesced on every trip of the loop over i.
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int i = 0; i < K; ++i)
            acc += A[row * K + i] * B[i * N + col];
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }
}
