// ptxlint: launch block=256 grid=1,1 param.0=128 param.1=128 param.2=128 buffer.4=65536 buffer.5=65536 buffer.6=65536
// Register-blocked SGEMM (128x128 tile, BK = 8, 8x8 results per thread, float4 copies):
// a warp is two rows of 16 threads (threadIdx.x / (BN/TN)), so the row-major A tile puts
// the two rows 64 words apart in one bank (2-way), and each quarter-warp's float4 reads of
// B at a 32-byte lane stride hit every bank pair twice (2-way). None of these addresses has
// a lane form: each lane's is evaluated on its own. The results go out as two float4 per
// row at a 32-byte lane stride: a blocked store, 32 sectors per request for 16 (reported
// once per pair).
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256)
sgemm_blocked(int M, int N, int K, float alpha, const float* A, const float* B, float* C)
{
    __shared__ __align__(16) float As[BM * BK];  // [BM][BK], row-major like A
    __shared__ __align__(16) float Bs[BK * BN];  // [BK][BN]
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
        reinterpret_cast<float4*>(&As[innerRowA * BK + innerColA * 4])[0] =
            reinterpret_cast<const float4*>(&A[innerRowA * K + innerColA * 4])[0];
        reinterpret_cast<float4*>(&Bs[innerRowB * BN + innerColB * 4])[0] =
            reinterpret_cast<const float4*>(&B[innerRowB * N + innerColB * 4])[0];
        __syncthreads();
        A += BK;
        B += BK * N;
        for (int k = 0; k < BK; ++k) {
            for (int i = 0; i < TM; ++i)
                regM[i] = As[(threadRow * TM + i) * BK + k];
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&regN[j]) =
                    *reinterpret_cast<const float4*>(&Bs[k * BN + threadCol * TN + j]);
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j)
                    acc[i * TN + j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; j += 4)
            reinterpret_cast<float4*>(&C[(threadRow * TM + i) * N + threadCol * TN + j])[0] =
                make_float4(alpha * acc[i * TN + j], alpha * acc[i * TN + j + 1],
                            alpha * acc[i * TN + j + 2], alpha * acc[i * TN + j + 3]);
}
// ptx-expect: ld\.shared\.f32 => bank-conflict ways=2
// ptx-expect: ld\.shared\.v4\.f32\s+\{%f386, => bank-conflict ways=2 bank=0
// ptx-expect: ld\.shared\.v4\.f32\s+\{%f394, => bank-conflict ways=2 bank=4
// ptx-expect: st\.global\.v4\.f32\s+\[%rd\d+\], => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=16 instructions=2
