// ptxlint: launch block=128 grid=2 param.4=256 param.5=64 buffer.0=65536 buffer.1=65536 buffer.2=256 buffer.3=256
// Layer norm over a feature-major batch (element i of row r at in[i*rows + r], rows =
// 256, n = 64), one thread per row: on every trip of the three passes the 32 lanes of a
// warp touch 32 consecutive floats, 4 sectors a request; gamma[i] and beta[i] are one
// address for the whole warp.
extern "C" __global__ void layer_norm_columns(float* out, const float* in,
                                              const float* gamma, const float* beta,
                                              int rows, int n, float eps)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    float mean = 0.0f;
    for (int i = 0; i < n; ++i)
        mean += in[(size_t)i * rows + row];
    mean /= n;
    float var = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float d = in[(size_t)i * rows + row] - mean;
        var += d * d;
    }
    const float rstd = rsqrtf(var / n + eps);
    for (int i = 0; i < n; ++i) {
        const size_t at = (size_t)i * rows + row;
        out[at] = (in[at] - mean) * rstd * gamma[i] + beta[i];
    }
}
