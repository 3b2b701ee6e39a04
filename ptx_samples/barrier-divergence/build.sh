#!/usr/bin/env bash
# Regenerates the nvcc-built samples of this directory (CUDA 13.0 nvcc) and annotates
# them with ../uncoalesced-access/annotate.py (header, quoted CUDA, `// ptx-expect:` lines
# turned into `// expect:`). row_split, named_barrier and warp_mask are hand-written.
set -euo pipefail
cd "$(dirname "$0")"
annotate=(python3 ../uncoalesced-access/annotate.py)
for name in tid_guard loop_trip early_exit shuffle_broadcast vote_loop exit_tail cg_exit halving_loop grid_sync; do
    for twin in bad ok; do
        nvcc -arch=sm_80 -ptx -lineinfo -o "$name.$twin.ptx" "$name.$twin.cu"
        "${annotate[@]}" "$name.$twin.cu" "$name.$twin.ptx"
    done
done

# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/(ptx_samples/[^"/]+/)?([^"/]+\.cu)"#"\2"#' "$(dirname "$0")"/*.ptx
