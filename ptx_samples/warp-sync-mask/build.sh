#!/usr/bin/env bash
# Regenerates the samples of this directory (CUDA 13.0 nvcc) and annotates them with
# ../uncoalesced-access/annotate.py (header, quoted CUDA, `// ptx-expect:` lines turned
# into `// expect:`).
set -euo pipefail
cd "$(dirname "$0")"
annotate=(python3 ../uncoalesced-access/annotate.py)
for name in half_warp_shuffle ballot_syncwarp activemask_reduce tiled_partition coalesced_group \
        segment_scan; do
    for twin in bad ok; do
        nvcc -arch=sm_80 -ptx -lineinfo -o "$name.$twin.ptx" "$name.$twin.cu"
        "${annotate[@]}" "$name.$twin.cu" "$name.$twin.ptx"
    done
done

# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' "$(dirname "$0")"/*.ptx
