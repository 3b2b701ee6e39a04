// ptxlint: launch block=256 grid=4 buffer.0=4096 buffer.1=4096
// Stages through shared memory with an inline-asm store, but converts the wrong
// pointer: __cvta_generic_to_shared of the *global* input element instead of the
// tile slot, so `cvta.to.shared` gets a global address.
extern "C" __global__ void stage(const float* in, float* out)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned slot = (unsigned)__cvta_generic_to_shared(in + i);
    asm volatile("st.shared.f32 [%0], %1;" :: "r"(slot), "f"(in[i]) : "memory");
    __syncthreads();
    out[i] = tile[255 - threadIdx.x];
}
// ptx-expect: cvta\.to\.shared => address-space-mismatch instruction_space=shared address_space=global
// ptx-expect: ld\.shared\.f32 => uninitialized-read kind=shared
