#!/usr/bin/env bash
# Regenerates the nvcc-built samples of this directory (CUDA 13.0 nvcc) and annotates
# them with ../uncoalesced-access/annotate.py (header, quoted CUDA, `// ptx-expect:` lines
# turned into `// expect:`). generic.*.ptx are hand-written.
set -euo pipefail
cd "$(dirname "$0")"
annotate=(python3 ../uncoalesced-access/annotate.py)
nvcc -arch=sm_80 -ptx -lineinfo -o ways.bad.ptx ways.bad.cu
"${annotate[@]}" ways.bad.cu ways.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o ways.ok.ptx ways.ok.cu
"${annotate[@]}" ways.ok.cu ways.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o column.bad.ptx column.bad.cu
"${annotate[@]}" column.bad.cu column.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o column.ok.ptx column.ok.cu
"${annotate[@]}" column.ok.cu column.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o column_swizzled.ok.ptx column_swizzled.ok.cu
"${annotate[@]}" column_swizzled.ok.cu column_swizzled.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o vector.bad.ptx vector.bad.cu
"${annotate[@]}" vector.bad.cu vector.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o vector.ok.ptx vector.ok.cu
"${annotate[@]}" vector.ok.cu vector.ok.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o box_muller.bad.ptx box_muller.bad.cu
"${annotate[@]}" box_muller.bad.cu box_muller.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o box_muller.ok.ptx box_muller.ok.cu
"${annotate[@]}" box_muller.ok.cu box_muller.ok.ptx
# stmatrix needs sm_90
nvcc -arch=sm_90 -ptx -lineinfo -o matrix.bad.ptx matrix.bad.cu
"${annotate[@]}" matrix.bad.cu matrix.bad.ptx
nvcc -arch=sm_90 -ptx -lineinfo -o matrix.ok.ptx matrix.ok.cu
"${annotate[@]}" matrix.ok.cu matrix.ok.ptx

# per-thread rows walked by a loop: nvcc carries each thread's row pointer round it
nvcc -arch=sm_80 -ptx -lineinfo -o loop_rows.bad.ptx loop_rows.bad.cu
"${annotate[@]}" loop_rows.bad.cu loop_rows.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o loop_rows.ok.ptx loop_rows.ok.cu
"${annotate[@]}" loop_rows.ok.cu loop_rows.ok.ptx

# only the lanes that run an access count; addresses with no lane form placed lane by lane
for name in sgemm_blocked reduce_interleaved guarded; do
    for kind in bad ok; do
        nvcc -arch=sm_80 -ptx -lineinfo -o "$name.$kind.ptx" "$name.$kind.cu"
        "${annotate[@]}" "$name.$kind.cu" "$name.$kind.ptx"
    done
done

# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' "$(dirname "$0")"/*.ptx
