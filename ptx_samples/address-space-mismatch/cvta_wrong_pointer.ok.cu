// ptxlint: launch block=256 grid=4 buffer.0=4096 buffer.1=4096
// The fixed twin of cvta_wrong_pointer.bad.cu: the inline-asm store gets the shared
// address of the tile slot, converted with __cvta_generic_to_shared.
extern "C" __global__ void stage(const float* in, float* out)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned slot = (unsigned)__cvta_generic_to_shared(&tile[threadIdx.x]);
    asm volatile("st.shared.f32 [%0], %1;" :: "r"(slot), "f"(in[i]) : "memory");
    __syncthreads();
    out[i] = tile[255 - threadIdx.x];
}
