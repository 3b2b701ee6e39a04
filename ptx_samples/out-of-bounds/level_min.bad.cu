// ptxlint: launch block=256 grid=1 param.2=100 buffer.0=1024 buffer.1=404
// Off by one: thread `level` reads v[level + 1]; at level = steps = 100 that is v[101],
// one past the 101 floats of v (`level -= min(level, 32)` itself stays in 0..steps, as
// in the clean twin).
extern "C" __global__ void level_sum(float* out, const float* v, unsigned steps)
{
    float sum = 0.0f;
    for (unsigned level = steps; level > 0; level -= level < 32u ? level : 32u)
        if (threadIdx.x <= level)
            sum += v[threadIdx.x + 1];
    out[threadIdx.x] = sum;
}
// ptx-expect: ld\.global\.f32 => out-of-bounds definite=False size=404 first_bad_byte=404 last_byte=407
