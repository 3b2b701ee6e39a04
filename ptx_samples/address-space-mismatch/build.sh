#!/usr/bin/env bash
# Regenerates the nvcc-built samples of this directory (CUDA 13.0 nvcc) and annotates
# them with ../uncoalesced-access/annotate.py: it copies each source's `// ptxlint:`
# header and the CUDA text into the PTX and turns its `// ptx-expect:` lines into
# `// expect:` annotations (it fails when a pattern no longer matches: review the new
# PTX then). The other samples (shared_via_global, global_of_shared,
# generic_shared_as_global) are hand-written: nvcc never emits those mistakes itself.
set -euo pipefail
cd "$(dirname "$0")"
annotate=(python3 ../uncoalesced-access/annotate.py)

for kind in bad ok; do
    nvcc -arch=sm_80 -ptx -lineinfo -o "cvta_wrong_pointer.$kind.ptx" "cvta_wrong_pointer.$kind.cu"
    "${annotate[@]}" "cvta_wrong_pointer.$kind.cu" "cvta_wrong_pointer.$kind.ptx"
done

# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' "$(dirname "$0")"/*.ptx
