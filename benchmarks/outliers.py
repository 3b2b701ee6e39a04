"""The whole lint of each outlier-shaped kernel against ptxas on the same PTX, in one run.

    python benchmarks/outliers.py [--repeat N] [FILE.ptx ...]

Without files it takes every `benchmarks/outliers/*.ptx` (kernels written in the shape
of the outliers users met: a fully unrolled sorting network with 55 barrier intervals,
bisection loops, a histogram given its parameter values, irreducible control flow, a
5,000-block kernel; `outliers/build.sh` regenerates them). Each file is linted as a user
runs it, `ptxlint FILE` from start to exit with every rule and the launch in its header,
and assembled by `ptxas -arch=<its .target>`; the two take turns, best of N each.
Target: every file within 3x ptxas plus start-up (`budget` column). The start-up is what
every lint pays before its kernel's own work: `ptxlint` on a kernel of one `ret` from
start to exit (the interpreter, the imports of the analysis and the rules, numpy among
them). `ptxlint --version` is printed too: the command's bare start.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTLIERS = ROOT / "benchmarks" / "outliers"
EMPTY = """.version 8.0
.target sm_80
.address_size 64
.visible .entry empty()
{
\tret;
}
"""


def _best(cmd: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, cwd=ROOT)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = args.files or sorted(OUTLIERS.glob("*.ptx"))
    lint = [sys.executable, "-m", "ptxlint", "--exit-zero"]
    bare = _best(lint[:3] + ["--version"], args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.ptx"
        empty.write_text(EMPTY)
        startup = _best(lint + [str(empty)], args.repeat)
    print(f"start-up: {startup:.3f} s (a one-`ret` kernel linted); ptxlint --version: {bare:.3f} s")
    print(f"{'file':28} {'lines':>7} {'ptxas s':>8} {'ptxlint s':>9} {'ratio':>6} "
          f"{'budget s':>8}  within")
    over = 0
    for path in files:
        text = path.read_text()
        target = re.search(r"^\s*\.target\s+(\w+)", text, re.M)
        ptxas_cmd = ["ptxas", f"-arch={target.group(1) if target else 'sm_80'}", str(path),
                     "-o", "/dev/null"]
        ptxas = lint_s = float("inf")
        for _ in range(args.repeat):  # take turns, so both see the same machine load
            ptxas = min(ptxas, _best(ptxas_cmd, 1))
            lint_s = min(lint_s, _best(lint + [str(path)], 1))
        budget = 3 * ptxas + startup
        over += lint_s > budget
        print(f"{path.name:28} {text.count(chr(10)):7} {ptxas:8.3f} {lint_s:9.3f} "
              f"{lint_s / ptxas:5.1f}x {budget:8.3f}  {'yes' if lint_s <= budget else 'NO'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
