// Asynchronous global->shared copies on sm_80: the __pipeline primitives (cp.async +
// commit/wait groups) and cuda::memcpy_async with a block-scoped cuda::barrier.
#include <cuda_pipeline.h>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define TILE 256

// Double-buffered tile sum: stage k+1 is in flight while stage k is consumed.
extern "C" __global__ void pipelined_sum(const float* in, float* out, int tiles)
{
    __shared__ alignas(16) float buf[2][TILE];
    float acc = 0.0f;
    int t = threadIdx.x;
    const float* base = in + (size_t)blockIdx.x * tiles * TILE;
    __pipeline_memcpy_async(&buf[0][t], base + t, sizeof(float));
    __pipeline_commit();
    for (int k = 0; k < tiles; ++k) {
        if (k + 1 < tiles)
            __pipeline_memcpy_async(&buf[(k + 1) & 1][t], base + (k + 1) * TILE + t, sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        acc += buf[k & 1][(t + 1) % TILE];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + t] = acc;
}

// 16-byte cp.async.cg via __pipeline_memcpy_async with a float4 payload.
extern "C" __global__ void copy16(const float4* in, float4* out)
{
    __shared__ float4 stage[TILE];
    __pipeline_memcpy_async(&stage[threadIdx.x], &in[blockIdx.x * TILE + threadIdx.x], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[blockIdx.x * TILE + threadIdx.x] = stage[TILE - 1 - threadIdx.x];
}

// cuda::memcpy_async of a whole tile, completion tracked by a cuda::barrier in shared memory.
extern "C" __global__ void barrier_copy(const int* in, int* out)
{
    __shared__ alignas(16) int tile[TILE];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    cuda::memcpy_async(block, tile, in + blockIdx.x * TILE, cuda::aligned_size_t<16>(sizeof(tile)), bar);
    bar.arrive_and_wait();
    out[blockIdx.x * TILE + threadIdx.x] = tile[threadIdx.x] * 2;
}
