// Just enough CUDA to compile the pricing kernels as C++ and run them on the CPU, for
// testing them without a GPU (tests/pricing/host_runner.py). One std::thread per CUDA
// thread, one block at a time: __shared__ variables become statics shared by the
// block's threads, __syncthreads a barrier of the block, __syncwarp a barrier of the
// 32 threads of a warp. Fast-math intrinsics map to the C library's accurate functions,
// except __logf (below).
#pragma once
#include <barrier>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }

inline unsigned __umulhi(unsigned a, unsigned b)
{
    return static_cast<unsigned>((static_cast<uint64_t>(a) * b) >> 32);
}
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
// the explicitly rounded operations of the Sobol inverse normal (rng.cuh); GCC may still
// contract them into FMAs after inlining, so the host runner is not bit-exact there
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline unsigned __float_as_uint(float x)
{
    unsigned u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
inline float __uint_as_float(unsigned u)
{
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
// __logf is the hardware's approximate logarithm: on [0.5, 2] its absolute error may be
// up to 2^-21.41 (CUDA C Programming Guide, intrinsic functions). The shim returns the
// pessimistic side of that bound, +2^-22, so that the kernels are run against what the
// hardware may do: near 1, where |log x| < 2^-22, the result is >= 0 (a Box-Muller
// radius must not turn that into sqrt of a negative number).
inline float __logf(float x)
{
    return std::log(x) + ((x >= 0.5f && x <= 2.0f) ? 0x1p-22f : 0.0f);
}
inline float __expf(float x) { return std::exp(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }

namespace host {
inline thread_local dim3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;
inline std::barrier<>* block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;

template <class... A, std::size_t... I>
void call(void (*f)(A...), void** args, std::index_sequence<I...>)
{
    f(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}

// Runs kernel `f` on grid x block threads; `args` points at each argument as
// cuLaunchKernel's kernelParams do.
template <class... A>
void launch(void (*f)(A...), unsigned grid, unsigned block, void** args)
{
    block_dim.x = block;
    grid_dim.x = grid;
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> bar(block);
        block_barrier = &bar;
        warp_barriers.clear();
        for (unsigned w = 0; w < (block + 31) / 32; ++w)
            warp_barriers.push_back(std::make_unique<std::barrier<>>(
                std::min(32u, block - 32 * w)));
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; ++t)
            threads.emplace_back([=] {
                thread_idx.x = t;
                block_idx.x = b;
                call(f, args, std::index_sequence_for<A...>{});
            });
        for (auto& th : threads)
            th.join();
    }
}
}  // namespace host

#define threadIdx (host::thread_idx)
#define blockIdx (host::block_idx)
#define blockDim (host::block_dim)
#define gridDim (host::grid_dim)
inline void __syncthreads() { host::block_barrier->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xFFFFFFFFu)
{
    host::warp_barriers[host::thread_idx.x / 32]->arrive_and_wait();
}

#define HOST_EXPORT(kernel) \
    extern "C" void run_##kernel(unsigned grid, unsigned block, void** args) \
    { host::launch(kernel, grid, block, args); }
