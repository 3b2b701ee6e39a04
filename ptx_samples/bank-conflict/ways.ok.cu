// ptxlint: launch block=32 grid=8
// The same reads with odd word strides 3, 5, 9, 17 and 33 (each lane in its own bank:
// rows padded by one word), a broadcast read of s[0], and the counters one word apart
// (after a barrier: s[t + 1] is a word another thread may still be reading).
extern "C" __global__ void padded_words(float* out, const float* in)
{
    __shared__ float s[33 * 32];
    int t = threadIdx.x;
#pragma unroll 1
    for (int k = 0; k < 33; ++k)
        s[k * 32 + t] = in[blockIdx.x * 1056 + k * 32 + t];
    __syncthreads();
    float r = s[3 * t] + s[5 * t] + s[9 * t] + s[17 * t] + s[33 * t] + s[0];
    __syncthreads();
    atomicAdd(&s[t + 1], r);
    __syncthreads();
    out[blockIdx.x * 32 + t] = s[t];
}
