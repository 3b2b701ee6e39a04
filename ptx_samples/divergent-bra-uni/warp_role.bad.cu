// ptxlint: launch block=128 grid=8 buffer.0=2048 buffer.1=2048
// The same staging with a 48-float tile copied by three 16-thread groups: the role is
// `threadIdx.x / 16 >= 3`, which splits warp 1 (threads 32-47 copy, 48-63 do not), yet
// the branch around the copy is still marked `bra.uni`. ptxas inserts no reconvergence
// point for it, so the warp is not split correctly.
extern "C" __global__ void stage_by_group(const float* in, float* out)
{
    __shared__ float tile[48];
    const unsigned group = threadIdx.x / 16;
    const unsigned slot = threadIdx.x % 48;
    const float* src = in + blockIdx.x * 48 + slot;
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile + slot));
    asm volatile("{\n\t"
                 ".reg .pred consumer;\n\t"
                 ".reg .f32 v;\n\t"
                 "setp.ge.u32 consumer, %0, 3;\n\t"
                 "@consumer bra.uni STAGED;\n\t"
                 "ld.global.nc.f32 v, [%1];\n\t"
                 "st.shared.f32 [%2], v;\n"
                 "STAGED:\n\t"
                 "}" :: "r"(group), "l"(src), "r"(dst) : "memory");
    __syncthreads();
    if (group >= 3 && threadIdx.x < 96)
        out[blockIdx.x * 48 + slot] = 2.0f * tile[slot];
}
// ptx-expect: bra\.uni => divergent-bra-uni source=%tid.x operand=guard
