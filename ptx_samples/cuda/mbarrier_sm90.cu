// Explicit mbarrier use on sm_90 via cuda::ptx wrappers: a producer warp issues
// cp.async.bulk copies that complete_tx on the barrier; consumers wait on the phase parity.
#include <cuda/ptx>
#include <cuda/barrier>
#include <cstdint>
namespace ptx = cuda::ptx;

#define BYTES 4096

extern "C" __global__ void bulk_copy_mbarrier(const int4* in, int4* out)
{
    __shared__ alignas(128) int4 tile[BYTES / 16];
    __shared__ alignas(8) uint64_t bar;
    if (threadIdx.x == 0) {
        ptx::mbarrier_init(&bar, 1);
        ptx::fence_proxy_async(ptx::space_shared);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, tile,
                           in + blockIdx.x * (BYTES / 16), BYTES, &bar);
        (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                             &bar, BYTES);
    }
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) { }
    out[blockIdx.x * (BYTES / 16) + threadIdx.x] = tile[(threadIdx.x + 1) % (BYTES / 16)];
}

// Hand-rolled inline-asm mbarrier, arrive by every thread then test_wait in a loop.
extern "C" __global__ void mbarrier_inline(int* out)
{
    __shared__ alignas(8) unsigned long long bar;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(addr), "r"(blockDim.x));
    __syncthreads();
    unsigned long long state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(addr) : "memory");
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.test_wait.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(addr), "l"(state) : "memory");
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = (int)(state & 0xff);
}
