#!/usr/bin/env bash
# Regenerates the PTX of these test kernels (CUDA 13.0 nvcc).
set -euo pipefail
cd "$(dirname "$0")"
nvcc -arch=sm_80 -ptx -o control.ptx control.cu
