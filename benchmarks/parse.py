"""Parse speed against ptxas on the same PTX, in the same run.

    python benchmarks/parse.py [--ptx FILE] [--repeat N] [--million]

Without --ptx it generates the CUB corpus (ptx_samples/cccl) with nvcc. Prints
ptxas's time to assemble the file (-arch from its .target), ptxlint's time to
parse it (cold: first parse in a fresh process, including imports; warm: the
shape cache filled), and the ratio. Target: parse <= 0.5x ptxas.
--million also builds a ~1M-line module from the corpus and reports the peak
memory of parsing it in a fresh process (target < 1 GB).
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import resource, sys, time
t0 = time.perf_counter()
from ptxlint.ir.build import parse_module
t1 = time.perf_counter()
text = open(sys.argv[1]).read()
t2 = time.perf_counter()
r = parse_module(text, sys.argv[1])
t3 = time.perf_counter()
n = sum(len(f.instructions) for f in r.module.functions)
errors = len(r.diagnostics)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
del r
t4 = time.perf_counter()
if len(sys.argv) < 3:
    parse_module(text, sys.argv[1])
t5 = time.perf_counter()
print(t1 - t0, t3 - t2, t5 - t4, n, errors, peak)
"""


def cccl_corpus() -> Path:
    spec = importlib.util.spec_from_file_location("gen", ROOT / "ptx_samples/cccl/generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    path = gen.generate("sm_90")
    if path is None:
        sys.exit("nvcc is not available: pass --ptx FILE")
    return path


def time_ptxas(path: Path, repeat: int, *extra: str) -> float | None:
    """Best of `repeat` runs of ptxas on the file (`extra`: more options)."""
    exe = shutil.which("ptxas")
    if exe is None:
        return None
    target = re.search(r"^\s*\.target\s+(\w+)", path.read_text(), re.M)
    arch = target.group(1) if target else "sm_90"
    best = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            t = time.perf_counter()
            subprocess.run([exe, f"-arch={arch}", *extra, str(path), "-o", f"{tmp}/o.cubin"],
                           check=True, capture_output=True)
            best = min(best, time.perf_counter() - t)
    return best


def time_parse(path: Path, repeat: int, once: bool = False):
    runs = []
    for _ in range(repeat):
        extra = ["once"] if once else []
        out = subprocess.run([sys.executable, "-c", CHILD, str(path), *extra], check=True,
                             capture_output=True, text=True, cwd=ROOT).stdout.split()
        runs.append(tuple(float(x) for x in out))
    best = min(runs, key=lambda r: r[1])
    imp, cold, warm, n, errors, peak = best
    return imp, cold, warm, int(n), int(errors), peak


def million_line_module(corpus: Path, target_lines: int = 1_000_000) -> Path:
    """Copies of the corpus' functions with every defined name suffixed per copy."""
    text = corpus.read_text()
    head_end = text.index(".address_size")
    head_end = text.index("\n", head_end) + 1
    head, body = text[:head_end], text[head_end:]
    names = sorted(set(re.findall(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?(\w+)", body))
                   | set(re.findall(r"^\s*\.(?:global|const|shared)\b[^;\n]*?(\w+)\s*(?:\[|;|=)",
                                    body, re.M)), key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    copies = max(1, target_lines // max(1, body.count("\n")))
    out = Path(tempfile.gettempdir()) / "ptxlint_million.ptx"
    with out.open("w") as f:
        f.write(head)
        for k in range(copies):
            f.write(pattern.sub(lambda m: f"{m.group(1)}_c{k}", body))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptx", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--million", action="store_true")
    args = ap.parse_args()
    path = args.ptx or cccl_corpus()
    lines = path.read_text().count("\n")
    ptxas = time_ptxas(path, args.repeat)
    imp, cold, warm, n, errors, peak = time_parse(path, args.repeat)
    print(f"file            {path} ({lines} lines, {n} instructions, {errors} diagnostics)")
    print(f"ptxas           {ptxas:.3f} s" if ptxas else "ptxas           not installed")
    print(f"ptxlint import  {imp:.3f} s")
    print(f"ptxlint parse   {cold:.3f} s cold, {warm:.3f} s warm; peak RSS {peak:.0f} MiB")
    if ptxas:
        print(f"ratio           {cold / ptxas:.2f}x ptxas (cold), {warm / ptxas:.2f}x (warm);"
              f" target <= 0.5x")
    if args.million:
        big = million_line_module(path)
        big_lines = big.read_text().count("\n")
        _, cold, _, n, errors, peak = time_parse(big, 1, once=True)
        print(f"1M-line module  {big_lines} lines, {n} instructions: parse {cold:.1f} s, "
              f"peak RSS {peak:.0f} MiB (target < 1024 MiB)")


if __name__ == "__main__":
    main()
