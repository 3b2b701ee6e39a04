// Monte Carlo-style kernel for benchmarks/emulate.py: one path per thread, an LCG for
// uniforms, a normal-ish variate from log/sqrt, a geometric step with exp, 64 steps,
// one store. Regenerate the PTX with build.sh (nvcc -arch=sm_80 -ptx).
extern "C" __global__ void mc_paths(float* out, unsigned seed, float s0, float drift,
                                    float vol, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned state = seed ^ (unsigned)(i * 2654435761u);
    float s = s0, acc = 0.0f;
    for (int k = 0; k < steps; ++k) {
        state = state * 1664525u + 1013904223u;
        float u1 = (state >> 8) * (1.0f / 16777216.0f) + 1e-7f;
        state = state * 1664525u + 1013904223u;
        float u2 = (state >> 8) * (1.0f / 16777216.0f);
        float z = sqrtf(-2.0f * logf(u1)) * (2.0f * u2 - 1.0f);
        s = s * expf(drift + vol * z);
        acc += s;
    }
    out[i] = acc / steps;
}
