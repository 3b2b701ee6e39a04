"""Emulator speed: thread-instructions per second on a Monte Carlo-style kernel.

    python benchmarks/emulate.py [--threads 65536] [--steps 64] [--repeat 3] [--no-observe]

The kernel (`benchmarks/data/mc_bench.cu`, PTX from `nvcc -arch=sm_80 -ptx`, see
`benchmarks/data/build.sh`) runs one path per thread: an LCG, `logf`/`sqrtf`/`expf` as
nvcc expands them (polynomials, `fma.rm`, `ex2.approx.ftz`), a 64-step loop and a store.
Prints the best of `--repeat` runs and checks the result against a float64 numpy model
of the same computation (a relative tolerance covers float32 rounding). Target: at least
1e8 thread-instructions per second.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxlint.emulate import run_kernel

PTX = ROOT / "benchmarks/data/mc_bench.ptx"
TARGET = 1e8


def reference(n: int, seed: int, s0: float, drift: float, vol: float, steps: int) -> np.ndarray:
    i = np.arange(n, dtype=np.uint64)
    state = (np.uint64(seed) ^ ((i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)))
    s = np.full(n, s0)
    acc = np.zeros(n)
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(steps):
        state = (state * np.uint64(1664525) + np.uint64(1013904223)) & mask
        u1 = (state >> np.uint64(8)).astype(np.float64) / 16777216.0 + 1e-7
        state = (state * np.uint64(1664525) + np.uint64(1013904223)) & mask
        u2 = (state >> np.uint64(8)).astype(np.float64) / 16777216.0
        z = np.sqrt(-2.0 * np.log(u1)) * (2.0 * u2 - 1.0)
        s = s * np.exp(drift + vol * z)
        acc += s
    return acc / steps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=65536)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-observe", action="store_true")
    args = ap.parse_args()
    text = PTX.read_text()
    block = 256
    grid = -(-args.threads // block)
    n = grid * block
    params = {"seed": 12345, "s0": 100.0, "drift": 0.0001, "vol": 0.02, "steps": args.steps}
    best = None
    for _ in range(args.repeat):
        out = np.zeros(n, np.float32)
        t0 = time.perf_counter()
        res = run_kernel(text, "mc_paths", grid=grid, block=block,
                         args={0: out, 1: params["seed"], 2: params["s0"], 3: params["drift"],
                               4: params["vol"], 5: params["steps"]},
                         observe=not args.no_observe)
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]:
            best = (wall, res, out)
    wall, res, out = best
    ref = reference(n, **params)
    ok = np.allclose(out, ref, rtol=2e-4)
    rate = res.thread_instructions / wall
    print(f"threads {n}, steps {args.steps}: {res.thread_instructions:.4g} thread-instructions "
          f"in {wall:.3f} s = {rate:.3g} thread-instructions/s "
          f"({'meets' if rate >= TARGET else 'below'} the {TARGET:.0e} target); "
          f"result {'matches' if ok else 'DIFFERS FROM'} the numpy model")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
