// sm_90 thread-block clusters: each block of a 2-block cluster reads its neighbour's shared
// memory (distributed shared memory, mapa + ld.shared::cluster) between cluster barriers.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_exchange(const int* in, int* out)
{
    __shared__ int mine[128];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    mine[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
    cluster.sync();
    int* theirs = cluster.map_shared_rank(mine, rank ^ 1);
    out[blockIdx.x * 128 + threadIdx.x] = mine[threadIdx.x] + theirs[127 - threadIdx.x];
    cluster.sync();                          // keep our smem alive until the neighbour is done
}

// Cluster size chosen at launch; uses the query intrinsics and a cluster-scoped atomic.
extern "C" __global__ void __launch_bounds__(256) cluster_histo(const unsigned char* in, unsigned* bins, int n)
{
    __shared__ unsigned h[256];
    cg::cluster_group cluster = cg::this_cluster();
    h[threadIdx.x] = 0;
    cluster.sync();
    unsigned nblocks = cluster.num_blocks();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned v = in[i];
        unsigned* dst = cluster.map_shared_rank(h, v % nblocks);   // spread bins over the cluster
        atomicAdd(dst + v, 1u);
    }
    cluster.sync();
    atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}
