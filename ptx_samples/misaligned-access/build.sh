#!/usr/bin/env bash
# Regenerates the nvcc-built samples of this directory (CUDA 13.0 nvcc) and annotates
# them with ../uncoalesced-access/annotate.py: it copies each source's `// ptxlint:`
# header and the CUDA text into the PTX and turns its `// ptx-expect:` lines into
# `// expect:` annotations (it fails when a pattern no longer matches: review the new
# PTX then). shared_pair.*.ptx are hand-written.
set -euo pipefail
cd "$(dirname "$0")"
annotate=(python3 ../uncoalesced-access/annotate.py)

for name in vec4_offset double_from_int float2_param_offset row_stats local_depot; do
    for kind in bad ok; do
        nvcc -arch=sm_80 -ptx -lineinfo -o "$name.$kind.ptx" "$name.$kind.cu"
        "${annotate[@]}" "$name.$kind.cu" "$name.$kind.ptx"
    done
done
# sm_100: nvcc (like NVRTC) declares every pointer parameter `.ptr .align 1` there
for kind in bad ok; do
    nvcc -arch=sm_100 -ptx -lineinfo -o "block_moments.$kind.ptx" "block_moments.$kind.cu"
    "${annotate[@]}" "block_moments.$kind.cu" "block_moments.$kind.ptx"
done

# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' "$(dirname "$0")"/*.ptx
