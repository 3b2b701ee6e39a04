#!/usr/bin/env bash
# Regenerates the nvcc-built samples of this directory (CUDA 13.0 nvcc) and annotates
# them with ../uncoalesced-access/annotate.py: it copies each source's `// ptxlint:`
# header and the CUDA text into the PTX and turns its `// ptx-expect:` lines into
# `// expect:` annotations (it fails when a pattern no longer matches: review the new
# PTX then). lane_shift.*.ptx, guard_counter.*.ptx and selp_address.*.ptx are hand-written.
set -euo pipefail
cd "$(dirname "$0")"
annotate=(python3 ../uncoalesced-access/annotate.py)

for name in shared_off_by_one local_off_by_one missing_guard stencil_edge hoisted_guard level_min \
        phase_gain strided_sum warp_shift merge_steps; do
    for kind in bad ok; do
        nvcc -arch=sm_80 -ptx -lineinfo -o "$name.$kind.ptx" "$name.$kind.cu"
        "${annotate[@]}" "$name.$kind.cu" "$name.$kind.ptx"
    done
done
# one source, two launches: 512 bytes of dynamic shared memory (too few), then 1024
nvcc -arch=sm_80 -ptx -lineinfo -o dynamic_smem.bad.ptx dynamic_smem.bad.cu
"${annotate[@]}" dynamic_smem.bad.cu dynamic_smem.bad.ptx
nvcc -arch=sm_80 -ptx -lineinfo -o dynamic_smem.ok.ptx dynamic_smem.bad.cu
"${annotate[@]}" dynamic_smem.bad.cu dynamic_smem.ok.ptx --no-expect \
    --launch "block=256 grid=4 smem=1024 buffer.0=4096 buffer.1=4096"

# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' "$(dirname "$0")"/*.ptx
