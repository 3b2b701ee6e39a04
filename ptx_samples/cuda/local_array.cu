// Per-thread array indexed by a runtime value: nvcc must keep it in local memory,
// so the PTX has a __local_depot, %SP/%SPL and ld.local/st.local.
extern "C" __global__ void local_sort8(const int* in, int* out, const int* pick)
{
    int v[8];
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    for (int k = 0; k < 8; ++k) v[k] = in[base + k];
    // insertion sort with data-dependent indices
    for (int a = 1; a < 8; ++a) {
        int x = v[a], b = a - 1;
        while (b >= 0 && v[b] > x) { v[b + 1] = v[b]; --b; }
        v[b + 1] = x;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v[pick[threadIdx.x] & 7];
}
