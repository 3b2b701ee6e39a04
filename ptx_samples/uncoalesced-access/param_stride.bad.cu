// ptxlint: launch block=256 grid=64
// Column gather with a runtime row pitch: coalesced only when width == 1.
extern "C" __global__ void gather_column(float* out, const float* in, unsigned width)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    out[i] = in[i * width];
}
// ptx-expect: ld\.global\.f32 => uncoalesced-access sectors_per_request=32 ideal_sectors_per_request=4 parameter=gather_column_param_2
