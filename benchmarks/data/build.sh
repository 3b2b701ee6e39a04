#!/usr/bin/env bash
# Regenerates the benchmark PTX from its CUDA source (CUDA 13.0 nvcc).
set -euo pipefail
cd "$(dirname "$0")"
nvcc -arch=sm_80 -ptx -o mc_bench.ptx mc_bench.cu
