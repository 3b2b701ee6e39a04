#!/usr/bin/env bash
# Regenerates the production-style samples (CUDA 13.0 nvcc) and annotates them with
# ../uncoalesced-access/annotate.py: the `// ptxlint: launch` line and the quoted CUDA on
# top, `// ptx-expect:` lines turned into `// expect:` on the PTX they name.
set -euo pipefail
cd "$(dirname "$0")"
for cu in *.cu; do
    ptx="${cu%.cu}.ptx"
    nvcc -arch=sm_80 -ptx -lineinfo -o "$ptx" "$cu"
    python3 ../uncoalesced-access/annotate.py "$cu" "$ptx"
done
# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' ./*.ptx
