// ptxlint: launch block=128 grid=2 param.4=256 param.5=64 buffer.0=65536 buffer.1=65536 buffer.2=256 buffer.3=256
// Naive layer norm over a row-major batch (rows = 256 rows of n = 64 floats), one thread
// per row: the three passes over the row walk per-thread pointers, in + row*n and out +
// row*n, that nvcc bumps by 16 bytes a trip (unrolled: 4 loads a trip, one finding for the
// 4). Lane t reads (and writes) row t: the 32 lanes of a warp are n floats (256 bytes)
// apart on every trip, 32 sectors a request where 4 would do.
extern "C" __global__ void layer_norm_rows(float* out, const float* in, const float* gamma,
                                           const float* beta, int rows, int n, float eps)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const float* x = in + (size_t)row * n;
    float* y = out + (size_t)row * n;
    float mean = 0.0f;
    for (int i = 0; i < n; ++i)
        mean += x[i];
    mean /= n;
    float var = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float d = x[i] - mean;
        var += d * d;
    }
    const float rstd = rsqrtf(var / n + eps);
    for (int i = 0; i < n; ++i)
        y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
}
// ptx-expect: ld\.global\.f32\s+%f(23|35|50), => uncoalesced-access stride_bytes=256
// ptx-expect[1]: st\.global\.f32 => uncoalesced-access stride_bytes=256
