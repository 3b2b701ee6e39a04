"""Parse + analysis time against ptxas on the same PTX, in the same run.

    python benchmarks/analysis.py [--ptx FILE] [--repeat N]

Without --ptx it generates the CUB corpus (ptx_samples/cccl). Each kernel is analysed
without a launch configuration (hardware limits). Prints ptxas's time to assemble the
file, ptxlint's parse and analysis times, the ratio, and the slowest kernels.
Target: parse + analysis <= 1.0x ptxas.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parse import cccl_corpus, time_ptxas  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import sys, time
from ptxlint.ir.build import parse_module
from ptxlint.analysis import analyze
text = open(sys.argv[1]).read()
t0 = time.perf_counter()
r = parse_module(text, sys.argv[1])
t1 = time.perf_counter()
per = []
incomplete = 0
for fn in r.module.entries:
    a = analyze(fn)
    per.append((a.seconds, fn.name, len(fn.instructions)))
    incomplete += not a.complete
t2 = time.perf_counter()
per.sort(reverse=True)
print(t1 - t0, t2 - t1, len(per), incomplete)
for s, name, n in per[:5]:
    print(f"{s:.3f} {n} {name}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptx", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = args.ptx or cccl_corpus()
    ptxas = time_ptxas(path, args.repeat)
    best = None
    for _ in range(args.repeat):
        out = subprocess.run([sys.executable, "-c", CHILD, str(path)], check=True,
                             capture_output=True, text=True, cwd=ROOT).stdout.splitlines()
        parse_s, analyse_s, kernels, incomplete = out[0].split()
        run = (float(parse_s), float(analyse_s), int(kernels), int(incomplete), out[1:])
        if best is None or run[0] + run[1] < best[0] + best[1]:
            best = run
    parse_s, analyse_s, kernels, incomplete, slowest = best
    total = parse_s + analyse_s
    print(f"file        {path}")
    print(f"ptxas       {ptxas:.3f} s" if ptxas else "ptxas       not installed")
    print(f"parse       {parse_s:.3f} s")
    print(f"analysis    {analyse_s:.3f} s ({kernels} kernels, {incomplete} over budget)")
    if ptxas:
        print(f"ratio       {total / ptxas:.2f}x ptxas (parse + analysis); target <= 1.0x")
    print("slowest kernels (s, instructions, name):")
    for line in slowest:
        print("  " + line)


if __name__ == "__main__":
    main()
