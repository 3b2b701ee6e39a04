"""Parse + analysis time against ptxas on the same PTX, in the same run.

    python benchmarks/analysis.py [--ptx FILE] [--repeat N] [--jobs N]

Without --ptx it generates the CUB corpus (ptx_samples/cccl). Each kernel is analysed
without a launch configuration (hardware limits), as the lint runs it
(`lint.analysis_params`: only what the rules can observe). Prints ptxas's time to
assemble the file, ptxlint's parse and analysis times in one process (the two take
turns, run by run), the ratio of the best of each and the median ratio of the
side-by-side pairs, and the slowest kernels. The timed work runs as the `ptxlint`
command runs it, with the cyclic collector paused for the whole run
(`gcpause.collector_paused`); the `library` line times it with the collector running
(the library's default, and the LSP server's). Then the same work with the kernels
shared among N processes (`ptxlint -j N`, default: the CPUs, at least 2) against
`ptxas --split-compile N` (ptxas's own parallel mode, the fair comparison), the whole
lint (every rule) both ways, and the `ptxlint` command from start to exit against ptxas
from start to exit. Target: parse + analysis <= 1.0x ptxas.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parse import cccl_corpus, time_ptxas  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import contextlib, sys, time
from ptxlint.ir.build import parse_module
from ptxlint.analysis import analyze
from ptxlint.gcpause import collector_paused
from ptxlint.lint import analysis_params
params = analysis_params(5.0)  # as the lint runs it
text = open(sys.argv[1]).read()
# "cli": as the command runs it; "library": with the collector running meanwhile
(collector_paused() if sys.argv[2] == "cli" else contextlib.nullcontext()).__enter__()
t0 = time.perf_counter()
r = parse_module(text, sys.argv[1])
t1 = time.perf_counter()
per = []
incomplete = 0
with collector_paused():  # as `lint.lint_module` does
    for fn in r.module.entries:
        a = analyze(fn, params=params)
        per.append((a.seconds, fn.name, len(fn.instructions)))
        incomplete += not a.complete
t2 = time.perf_counter()
# the same file again in this process, as the LSP server and the pre-launch hook see
# a file they have seen before: the domains' interned values and the statement shapes
# are already built, the module and every analysis are new
t3 = time.perf_counter()
again = parse_module(text, sys.argv[1])
t4 = time.perf_counter()
with collector_paused():
    for fn in again.module.entries:
        analyze(fn, params=params)
t5 = time.perf_counter()
per.sort(reverse=True)
print(t1 - t0, t2 - t1, len(per), incomplete, t4 - t3, t5 - t4)
for s, name, n in per[:5]:
    print(f"{s:.3f} {n} {name}")
"""

# the lint pipeline in `jobs` processes; no rules: parse + analysis only
LINT_CHILD = r"""
import sys, time
from ptxlint.gcpause import collector_paused
from ptxlint.lint import LintOptions, lint_text
text = open(sys.argv[1]).read()
options = LintOptions(enable=frozenset()) if sys.argv[3] == "analysis" else LintOptions()
collector_paused().__enter__()  # as the command runs it
t0 = time.perf_counter()
report = lint_text(text, sys.argv[1], options, jobs=int(sys.argv[2]))
print(time.perf_counter() - t0, len(report.diagnostics))
"""


def _lint_seconds(path: Path, jobs: int, what: str, repeat: int) -> float:
    return min(float(subprocess.run(
        [sys.executable, "-c", LINT_CHILD, str(path), str(jobs), what], check=True,
        capture_output=True, text=True, cwd=ROOT).stdout.split()[0]) for _ in range(repeat))


def _child(path: Path, mode: str) -> tuple:
    """(parse s, analysis s, kernels, over budget, the slowest lines, again s)."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), mode], check=True,
                         capture_output=True, text=True, cwd=ROOT).stdout.splitlines()
    parse_s, analyse_s, kernels, incomplete, parse_again, analyse_again = out[0].split()
    return (float(parse_s), float(analyse_s), int(kernels), int(incomplete), out[1:],
            float(parse_again) + float(analyse_again))


def _command_seconds(path: Path, repeat: int) -> float:
    """Best of `repeat` runs of `ptxlint FILE` (every rule), from start to exit."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ptxlint", str(path), "-o", os.devnull],
                       capture_output=True, cwd=ROOT)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptx", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 1))
    args = ap.parse_args()
    path = args.ptx or cccl_corpus()
    # ptxas and ptxlint take turns, so that a change in the machine's load falls on both
    # sides of a pair: the best of each side, and the median of the pairs' ratios
    ptxas, best, again, pairs, library, library_pairs = None, None, None, [], None, []
    for _ in range(args.repeat):
        once = time_ptxas(path, 1)
        run = _child(path, "cli")
        if best is None or run[0] + run[1] < best[0] + best[1]:
            best = run
        again = min(again or 1e9, run[5])
        lib = _child(path, "library")
        library = min(library or 1e9, lib[0] + lib[1])
        if once:
            ptxas = min(ptxas or once, once)
            pairs.append((run[0] + run[1]) / once)
            library_pairs.append((lib[0] + lib[1]) / once)
    parse_s, analyse_s, kernels, incomplete, slowest, _ = best
    total = parse_s + analyse_s
    print(f"file        {path}")
    print(f"ptxas       {ptxas:.3f} s" if ptxas else "ptxas       not installed")
    print(f"parse       {parse_s:.3f} s")
    print(f"analysis    {analyse_s:.3f} s ({kernels} kernels, {incomplete} over budget)")
    if ptxas:
        print(f"ratio       {total / ptxas:.2f}x ptxas (parse + analysis, best of each); "
              f"median of the {len(pairs)} side-by-side pairs {statistics.median(pairs):.2f}x;"
              " target <= 1.0x")
        print(f"library     {library:.3f} s = {library / ptxas:.2f}x ptxas (median of the pairs "
              f"{statistics.median(library_pairs):.2f}x): the same with the collector "
              "running (the library's default)")
        print(f"again       {again:.3f} s = {again / ptxas:.2f}x ptxas: the same file once more "
              "in the same process (the LSP server's and the hook's case)")
    print("slowest kernels (s, instructions, name):")
    for line in slowest:
        print("  " + line)
    # in parallel, against ptxas in its own parallel mode on as many threads
    parallel = time_ptxas(path, args.repeat, "--split-compile", str(args.jobs))
    if parallel:
        print(f"ptxas --split-compile {args.jobs}: {parallel:.3f} s")
    shared = _lint_seconds(path, args.jobs, "analysis", args.repeat)
    print(f"parse + analysis, kernels in {args.jobs} processes (-j {args.jobs}): {shared:.3f} s"
          + (f" = {shared / parallel:.2f}x ptxas --split-compile {args.jobs}" if parallel else ""))
    for jobs, against in ((1, ptxas), (args.jobs, parallel)):
        whole = _lint_seconds(path, jobs, "lint", args.repeat)
        print(f"whole lint (every rule), -j {jobs}: {whole:.3f} s"
              + (f" = {whole / against:.2f}x ptxas" + (f" --split-compile {jobs}" if jobs > 1
                                                       else "") if against else ""))
    command = _command_seconds(path, args.repeat)
    print(f"the command, start to exit (`ptxlint FILE`, every rule): {command:.3f} s"
          + (f" = {command / ptxas:.2f}x ptxas start to exit" if ptxas else ""))


if __name__ == "__main__":
    main()
