// ptxlint: launch block=256 grid=4 buffer.0=16400 buffer.1=16384
// The fixed twin of vec4_offset.bad.cu: the header is padded to a whole float4,
// so `in + 4` keeps the 16-byte alignment of the buffer.
extern "C" __global__ void copy4(const float* in, float4* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4* body = reinterpret_cast<const float4*>(in + 4);
    out[i] = body[i];
}
