// ptxlint: launch block=64 grid=32
// The first half-warp gathers every eighth word of a shared table: 16 lanes at a stride
// of 8 words fall on 4 banks, 4 words each (a 4-way conflict), even though only half of
// the warp runs the load.
extern "C" __global__ void gather_eighth(float* out, const float* in)
{
    __shared__ float table[64 * 8];
    int idx = threadIdx.x;
    for (int k = idx; k < 64 * 8; k += 64)
        table[k] = in[blockIdx.x * 64 * 8 + k];
    __syncthreads();
    if (idx < 16)
        out[blockIdx.x * 16 + idx] = table[idx * 8];
}
// ptx-expect: ld\.shared\.f32 => bank-conflict ways=4 bank=0
