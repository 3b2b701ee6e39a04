#!/usr/bin/env bash
# Regenerates the nvcc-built PTX of this directory (CUDA 13.0 nvcc).
set -euo pipefail
cd "$(dirname "$0")"
nvcc -arch=sm_80 -ptx -lineinfo -o templates.ptx templates.cu
nvcc -arch=sm_80 -ptx -G -o templates_debug.ptx templates.cu
# nvcc records the absolute path: keep the name only (ptxlint looks beside the PTX)
sed -i "s|\.file\t1 \".*/templates.cu\"|.file\t1 \"templates.cu\"|" templates.ptx templates_debug.ptx
