#!/usr/bin/env bash
# Regenerates the outlier benchmark PTX (CUDA 13.0 nvcc), each file headed by its
# source's `// ptxlint: launch` line so that `ptxlint FILE` lints it with that launch.
set -euo pipefail
cd "$(dirname "$0")"
python3 gen_branchy.py
for cu in *.cu; do
    ptx="${cu%.cu}.ptx"
    nvcc -arch=sm_80 -ptx -lineinfo -O3 "$cu" -o "$ptx.tmp"
    { grep -m1 '^// ptxlint: launch' "$cu"; cat "$ptx.tmp"; } > "$ptx"
    rm "$ptx.tmp"
done
# .file names relative to this folder: no machine-specific paths in the committed PTX
sed -i -E 's#"/[^"]*/([^"/]+\.cu)"#"\1"#' ./*.ptx
