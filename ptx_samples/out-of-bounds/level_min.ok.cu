// ptxlint: launch block=256 grid=1 param.2=100 buffer.0=1024 buffer.1=404
// `level -= min(level, 32)` never goes below 0 (unsigned), so level stays in 0..steps
// and v[threadIdx.x] is read only when threadIdx.x <= level <= 100 (v holds 101 floats).
// Interval subtraction alone wraps: [1, 100] - [1, 32] covers the whole u32 range.
extern "C" __global__ void level_sum(float* out, const float* v, unsigned steps)
{
    float sum = 0.0f;
    for (unsigned level = steps; level > 0; level -= level < 32u ? level : 32u)
        if (threadIdx.x <= level)
            sum += v[threadIdx.x];
    out[threadIdx.x] = sum;
}
