// ptxlint: launch block=256 grid=16 buffer.0=8192 buffer.1=16384
// Stages half a tile: the first 128 threads load one word each, then every thread reads
// its word after the barrier, so threads 128-255 read words no thread of the block wrote
// (shared memory is never initialised by the host).
extern "C" __global__ void scale_tile(const float* in, float* out)
{
    __shared__ float tile[256];
    const unsigned t = threadIdx.x;  // blockDim.x == 256
    if (t < 128)
        tile[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    out[blockIdx.x * 256 + t] = 2.0f * tile[t];
}
// ptx-expect: ld\.shared\.f32 => uninitialized-read kind=shared object=tile bytes=512-1023 threads=128
