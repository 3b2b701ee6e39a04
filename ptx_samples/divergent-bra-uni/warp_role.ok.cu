// ptxlint: launch block=128 grid=8 buffer.0=2048 buffer.1=2048
// Warp-specialised staging in a 128-thread block: warps 0 and 1 copy a 64-float tile
// into shared memory, warps 2 and 3 wait at the barrier and write it back scaled. The
// copy is skipped with an inline-PTX `bra.uni` on the warp index `threadIdx.x / 32`:
// with blockDim.x a multiple of 32 every lane of a warp has the same warp index, so the
// whole warp takes the branch together and ptxas needs no reconvergence point.
extern "C" __global__ void stage_by_warp(const float* in, float* out)
{
    __shared__ float tile[64];
    const unsigned warp = threadIdx.x / 32;
    const unsigned slot = threadIdx.x % 64;
    const float* src = in + blockIdx.x * 64 + slot;
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(tile + slot));
    asm volatile("{\n\t"
                 ".reg .pred consumer;\n\t"
                 ".reg .f32 v;\n\t"
                 "setp.ge.u32 consumer, %0, 2;\n\t"
                 "@consumer bra.uni STAGED;\n\t"
                 "ld.global.nc.f32 v, [%1];\n\t"
                 "st.shared.f32 [%2], v;\n"
                 "STAGED:\n\t"
                 "}" :: "r"(warp), "l"(src), "r"(dst) : "memory");
    __syncthreads();
    if (warp >= 2)
        out[blockIdx.x * 64 + slot] = 2.0f * tile[slot];
}
