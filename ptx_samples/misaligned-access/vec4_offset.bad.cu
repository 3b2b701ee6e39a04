// ptxlint: launch block=256 grid=4 buffer.0=16400 buffer.1=16384
// float4 copy that skips a one-float header: `in + 1` is only 4-byte aligned, so
// every 16-byte load of the cast pointer is misaligned (cudaErrorMisalignedAddress).
extern "C" __global__ void copy4(const float* in, float4* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4* body = reinterpret_cast<const float4*>(in + 1);
    out[i] = body[i];
}
// ptx-expect: ld\.global\.v4\.[uf]32 => misaligned-access width=16 alignment=4 offset_residue=4
