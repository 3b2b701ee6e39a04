// ptxlint: launch block=256 grid=4 smem=512 buffer.0=4096 buffer.1=4096
// An extern __shared__ array sized by the launch: 512 bytes of dynamic shared
// memory hold only 128 floats, but all 256 threads store one.
extern "C" __global__ void stage_dynamic(const float* in, float* out)
{
    extern __shared__ float dyn[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    dyn[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = dyn[threadIdx.x ^ 1];
}
// ptx-expect: st\.shared\.f32 => out-of-bounds definite=True size=512 first_bad_byte=512 last_byte=1023
// ptx-expect: ld\.shared\.f32 => out-of-bounds definite=False size=512 first_bad_byte=512 last_byte=1023
