// ptxlint: launch block=256 grid=4 buffer.0=4096 buffer.1=4096
// Block-wide staging buffer declared one element short: 255 floats for a
// 256-thread block, so thread 255 writes past its end and the reversed read of
// thread 0 lands there too.
extern "C" __global__ void stage_reverse(const float* in, float* out)
{
    __shared__ float buf[255];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = 2.0f * buf[blockDim.x - 1 - threadIdx.x];
}
// ptx-expect: st\.shared\.f32 => out-of-bounds definite=True size=1020 first_bad_byte=1020 last_byte=1023
// ptx-expect: ld\.shared\.f32 => out-of-bounds definite=True size=1020 first_bad_byte=1020 last_byte=1023
