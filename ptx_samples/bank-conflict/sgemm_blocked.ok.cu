// ptxlint: launch block=256 grid=1,1 param.0=128 param.1=128 param.2=128 buffer.4=65536 buffer.5=65536 buffer.6=65536
// The same SGEMM with conflict-free shared layouts: the A tile is stored transposed with
// rows padded to BM + 4 floats (the two columns a warp stores land in different bank
// halves), read as float4 broadcasts; each thread reads its 8 B columns as two float4 half
// a tile apart, so a quarter-warp reads 128 consecutive bytes.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define PAD 4

extern "C" __global__ void __launch_bounds__(256)
sgemm_blocked(int M, int N, int K, float alpha, const float* A, const float* B, float* C)
{
    __shared__ __align__(16) float As[BK * (BM + PAD)];  // [BK][BM + PAD], transposed
    __shared__ __align__(16) float Bs[BK * BN];           // [BK][BN]
    const int threadRow = threadIdx.x / (BN / TN);
    const int threadCol = threadIdx.x % (BN / TN);
    const int innerRowA = threadIdx.x / (BK / 4);
    const int innerColA = threadIdx.x % (BK / 4);
    const int innerRowB = threadIdx.x / (BN / 4);
    const int innerColB = threadIdx.x % (BN / 4);
    A += blockIdx.y * BM * K;
    B += blockIdx.x * BN;
    C += blockIdx.y * BM * N + blockIdx.x * BN;

    float acc[TM * TN] = {};
    float regM[TM], regN[TN];
    for (int bk = 0; bk < K; bk += BK) {
        float4 a = reinterpret_cast<const float4*>(&A[innerRowA * K + innerColA * 4])[0];
        As[(innerColA * 4 + 0) * (BM + PAD) + innerRowA] = a.x;
        As[(innerColA * 4 + 1) * (BM + PAD) + innerRowA] = a.y;
        As[(innerColA * 4 + 2) * (BM + PAD) + innerRowA] = a.z;
        As[(innerColA * 4 + 3) * (BM + PAD) + innerRowA] = a.w;
        reinterpret_cast<float4*>(&Bs[innerRowB * BN + innerColB * 4])[0] =
            reinterpret_cast<const float4*>(&B[innerRowB * N + innerColB * 4])[0];
        __syncthreads();
        A += BK;
        B += BK * N;
        for (int k = 0; k < BK; ++k) {
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&regM[i]) = *reinterpret_cast<const float4*>(
                    &As[k * (BM + PAD) + threadRow * TM + i]);
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&regN[j]) = *reinterpret_cast<const float4*>(
                    &Bs[k * BN + (j / 4) * (BN / 2) + threadCol * 4]);
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j)
                    acc[i * TN + j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; j += 4)
            reinterpret_cast<float4*>(
                &C[(threadRow * TM + i) * N + (j / 4) * (BN / 2) + threadCol * 4])[0] =
                make_float4(alpha * acc[i * TN + j], alpha * acc[i * TN + j + 1],
                            alpha * acc[i * TN + j + 2], alpha * acc[i * TN + j + 3]);
}
