#!/usr/bin/env bash
# Regenerates the nvcc-built samples of this directory (CUDA 13.0 nvcc) and annotates
# them: annotate.py copies each source's `// ptxlint:` header and the CUDA text into the
# PTX and turns its `// ptx-expect:` lines into `// expect:` annotations (it fails when a
# pattern no longer matches: review the new PTX then). generic.*.ptx are hand-written.
set -euo pipefail
cd "$(dirname "$0")"
annotate=(python3 annotate.py)

nvcc -arch=sm_80 -ptx -lineinfo -o transpose.bad.ptx transpose.bad.cu
"${annotate[@]}" transpose.bad.cu transpose.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o transpose.ok.ptx transpose.ok.cu
"${annotate[@]}" transpose.ok.cu transpose.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o strided.bad.ptx strided.bad.cu
"${annotate[@]}" strided.bad.cu strided.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o strided.ok.ptx strided.ok.cu
"${annotate[@]}" strided.ok.cu strided.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o vector.bad.ptx vector.bad.cu
"${annotate[@]}" vector.bad.cu vector.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o vector.ok.ptx vector.ok.cu
"${annotate[@]}" vector.ok.cu vector.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o aos.bad.ptx aos.bad.cu
"${annotate[@]}" aos.bad.cu aos.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o aos.ok.ptx aos.ok.cu
"${annotate[@]}" aos.ok.cu aos.ok.ptx
# one source, three launches: width unknown (a conditional warning), 1 (coalesced), 32
nvcc -arch=sm_80 -ptx -lineinfo -o param_stride.bad.ptx param_stride.bad.cu
"${annotate[@]}" param_stride.bad.cu param_stride.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o param_stride.ok.ptx param_stride.bad.cu
"${annotate[@]}" param_stride.bad.cu param_stride.ok.ptx --no-expect \
    --launch "block=256 grid=64 param.2=1"
nvcc -arch=sm_80 -ptx -lineinfo -o param_given.bad.ptx param_stride.bad.cu
"${annotate[@]}" param_stride.bad.cu param_given.bad.ptx --launch "block=256 grid=64 param.2=32" \
    --expect 'ld\.global\.f32 => uncoalesced-access sectors_per_request=32 stride_bytes=128'
nvcc -arch=sm_80 -ptx -lineinfo -o param_given.ok.ptx param_stride.bad.cu
"${annotate[@]}" param_stride.bad.cu param_given.ok.ptx --no-expect \
    --launch "block=256 grid=64 param.2=1"

# one row per thread in a loop: nvcc's per-thread pointers carried round the loop
nvcc -arch=sm_80 -ptx -lineinfo -o loop_sgemm.bad.ptx loop_sgemm.bad.cu
"${annotate[@]}" loop_sgemm.bad.cu loop_sgemm.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o loop_sgemm.ok.ptx loop_sgemm.ok.cu
"${annotate[@]}" loop_sgemm.ok.cu loop_sgemm.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o loop_layernorm.bad.ptx loop_layernorm.bad.cu
"${annotate[@]}" loop_layernorm.bad.cu loop_layernorm.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o loop_layernorm.ok.ptx loop_layernorm.ok.cu
"${annotate[@]}" loop_layernorm.ok.cu loop_layernorm.ok.ptx

# accesses served together: a 16-byte element read in halves, a blocked load of 8 ints
for name in halves blocked; do
    for kind in bad ok; do
        nvcc -arch=sm_80 -ptx -lineinfo -o "$name.$kind.ptx" "$name.$kind.cu"
        "${annotate[@]}" "$name.$kind.cu" "$name.$kind.ptx"
    done
done

# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' "$(dirname "$0")"/*.ptx
