#!/usr/bin/env bash
# Regenerates every .ptx in this directory from its .cu with the CUDA 13.0 nvcc.
# The generated PTX is committed; rerun this after editing a .cu (or after a compiler
# upgrade, then review the diff). Each line is the exact command used.
set -euo pipefail
cd "$(dirname "$0")"

nvcc -arch=sm_75 -ptx -lineinfo -o vector_add.ptx vector_add.cu
nvcc -arch=sm_80 -ptx -lineinfo -o transpose.ptx transpose.cu
nvcc -arch=sm_80 -ptx -lineinfo -o reduce.ptx reduce.cu
nvcc -arch=sm_80 -ptx -lineinfo -o histogram.ptx histogram.cu
nvcc -arch=sm_80 -ptx -lineinfo -o device_call.ptx device_call.cu
nvcc -arch=sm_80 -ptx -lineinfo -o local_array.ptx local_array.cu
nvcc -arch=sm_80 -ptx -lineinfo -o const_global.ptx const_global.cu
nvcc -arch=sm_80 -ptx -lineinfo -o switch_dense.ptx switch_dense.cu
nvcc -arch=sm_86 -ptx -lineinfo -o float_math.ptx float_math.cu
nvcc -arch=sm_89 -ptx -lineinfo -o half_bf16.ptx half_bf16.cu
nvcc -arch=sm_80 -ptx -lineinfo -o async_copy.ptx async_copy.cu
nvcc -arch=sm_80 -ptx -lineinfo -o coop_groups.ptx coop_groups.cu
nvcc -arch=sm_90 -ptx -lineinfo -o cluster_sm90.ptx cluster_sm90.cu
nvcc -arch=sm_90 -ptx -lineinfo -o mbarrier_sm90.ptx mbarrier_sm90.cu
# -G: device debug build (no -lineinfo; -G implies full debug info)
nvcc -arch=sm_80 -ptx -G -o debug_build.ptx debug_build.cu
