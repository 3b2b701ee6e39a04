// A translation unit whose only purpose is to make nvcc instantiate a realistic set of
// CUB device-wide algorithms, so that its PTX is a large, compiler-generated corpus
// (templated kernels, heavy inlining, .loc/inlined_at chains, shared-memory unions,
// warp shuffles, decoupled look-back scans) for parser and analysis stress tests.
//
// Each host function below calls a cub::Device* entry point the usual two-phase way
// (size query, then run); calling them from host code is what instantiates the kernels.
// Nothing here is ever launched by ptxlint. One instantiation per algorithm keeps the
// PTX near 39k lines for sm_90 (each extra key/value type adds 3k-12k lines).
// Compiled by generate.py into a cache; the PTX is not committed.
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <cstdint>

namespace ptxlint_corpus {

// Two-phase CUB call: the first call only reports the scratch size.
template <typename Call>
cudaError_t run_with_temp(Call call, cudaStream_t stream)
{
    size_t temp_bytes = 0;
    cudaError_t err = call(nullptr, temp_bytes);
    if (err != cudaSuccess) return err;
    void* temp = nullptr;
    err = cudaMallocAsync(&temp, temp_bytes, stream);
    if (err != cudaSuccess) return err;
    err = call(temp, temp_bytes);
    cudaFreeAsync(temp, stream);
    return err;
}

// ---- radix sort -------------------------------------------------------------------
cudaError_t sort_keys_u32(const std::uint32_t* in, std::uint32_t* out, int n, cudaStream_t s)
{
    return run_with_temp([&](void* t, size_t& b) {
        return cub::DeviceRadixSort::SortKeys(t, b, in, out, n, 0, 32, s);
    }, s);
}

cudaError_t sort_pairs_u32_i32(const std::uint32_t* keys_in, std::uint32_t* keys_out,
                               const int* vals_in, int* vals_out, int n, cudaStream_t s)
{
    return run_with_temp([&](void* t, size_t& b) {
        return cub::DeviceRadixSort::SortPairs(t, b, keys_in, keys_out, vals_in, vals_out, n,
                                               0, 32, s);
    }, s);
}

// ---- reduce -----------------------------------------------------------------------
cudaError_t sum_f32(const float* in, float* out, int n, cudaStream_t s)
{
    return run_with_temp([&](void* t, size_t& b) {
        return cub::DeviceReduce::Sum(t, b, in, out, n, s);
    }, s);
}

// ---- scan -------------------------------------------------------------------------
cudaError_t inclusive_sum_i32(const int* in, int* out, int n, cudaStream_t s)
{
    return run_with_temp([&](void* t, size_t& b) {
        return cub::DeviceScan::InclusiveSum(t, b, in, out, n, s);
    }, s);
}

// ---- histogram ----------------------------------------------------------------------
cudaError_t histogram_even_u8(const unsigned char* samples, int* bins, int num_levels,
                              int n, cudaStream_t s)
{
    return run_with_temp([&](void* t, size_t& b) {
        return cub::DeviceHistogram::HistogramEven(t, b, samples, bins, num_levels, 0, 256, n, s);
    }, s);
}

// ---- select ---------------------------------------------------------------------------
struct IsMultipleOf3 {
    __host__ __device__ bool operator()(const int& x) const { return x % 3 == 0; }
};

cudaError_t select_mult3_i32(const int* in, int* out, int* num_selected, int n, cudaStream_t s)
{
    return run_with_temp([&](void* t, size_t& b) {
        return cub::DeviceSelect::If(t, b, in, out, num_selected, n, IsMultipleOf3{}, s);
    }, s);
}

}  // namespace ptxlint_corpus
