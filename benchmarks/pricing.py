"""Paths per second per product and generator, with the pre-launch hook's cost beside it.

    python benchmarks/pricing.py [--device auto|gpu|emulator|cpu] [--paths N] [--repeat N]

`auto` uses the GPU when there is one, else the CPU path (and says so). For each product
and generator it prices once to warm up (build, module load), then keeps the best of
`--repeat` runs: paths per second over the kernel time (CUDA events on the GPU, wall
time of the emulation or of the numpy path otherwise), and `run s`, the wall time of the
launches with their copies. Beside it, the pre-launch hook on the same launches (the
Monte Carlo kernel and the final reduction): `lint cold` is the first check of a launch
configuration (parse and analysis), `disk` the same check in a later run of the pricer
(read from its lint cache, `check_before_launch(cache_dir=...)`), `hot` a repeated one
in the process (ptxlint caches per PTX and launch), each also as a share of the run. On the CPU path nothing is
launched; the hook is still timed on the launches a GPU would get (for sm_80).
Target: on a GPU, the hook costs under 5% of a 10^7-path European run.
"""
from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pricing_kernels import Spec, catalog, cpu, prelaunch, pricer  # noqa: E402
from pricing_kernels.build import compile_ptx  # noqa: E402

PRODUCTS = ("european-call", "asian-call", "everest")
RNGS = ("philox", "mt", "lcg")
DEFAULT_PATHS = {"gpu": {"european-call": 10_000_000, "asian-call": 1_000_000,
                         "everest": 1_000_000},
                 "emulator": dict.fromkeys(PRODUCTS, 4096),
                 "cpu": dict.fromkeys(PRODUCTS, 200_000)}


def lint_times(spec: Spec, paths: int, arch: str) -> tuple[float, float, float]:
    """(cold, disk, hot) seconds of the hook on the run's two launches: analysed, read
    from the pricer's lint cache by a new process (memory cache empty), remembered."""
    import ptxlint.hook  # noqa: PLC0415

    mc = catalog.mc_launch(spec, paths)
    launches = [mc, catalog.reduce_launch(mc.args[0].data)]
    built = [(launch, compile_ptx(launch.source, arch, launch.defines).ptx)
             for launch in launches]
    with tempfile.TemporaryDirectory() as cache:
        ptxlint.hook._CACHE.clear()
        cold = sum(prelaunch.check(launch, ptx, arch, cache).seconds for launch, ptx in built)
        ptxlint.hook._CACHE.clear()
        disk = sum(prelaunch.check(launch, ptx, arch, cache).seconds for launch, ptx in built)
        hot = sum(prelaunch.check(launch, ptx, arch, cache).seconds for launch, ptx in built)
    return cold, disk, hot


def run_once(spec: Spec, paths: int, runner) -> tuple[float, float]:
    """(kernel seconds, wall seconds) of one unlinted run: on a device the two launches
    with their copies, on the CPU the numpy path."""
    start = time.perf_counter()
    if runner is None:
        cpu.mc_sums(spec, paths)
        wall = time.perf_counter() - start
        return wall, wall
    out, t1 = pricer.run_launch(runner, catalog.mc_launch(spec, paths), False, [])
    _, t2 = pricer.run_launch(runner, catalog.reduce_launch(out["partial"]), False, [])
    return t1 + t2, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("auto", "gpu", "emulator", "cpu"), default="auto")
    ap.add_argument("--paths", type=int, help="paths per run (default: per device and product)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=64, help="Asian steps (default 64)")
    args = ap.parse_args()
    logging.getLogger("ptxlint").setLevel(logging.ERROR)  # the hook's warnings: tests/pricing
    wanted = "gpu" if args.device == "auto" else args.device
    runner = pricer.open_runner(wanted, None, print)
    device = runner.name if runner is not None else "cpu"
    arch = runner.arch if runner is not None else "sm_80"
    print(f"device: {device} ({getattr(runner, 'description', 'numpy on the CPU')}), "
          f"lint arch {arch}")
    print(f"{'product':14} {'rng':7} {'paths':>10} {'kernel s':>9} {'paths/s':>10} "
          f"{'run s':>8} {'lint cold':>9} {'disk':>9} {'hot':>9} {'cold/run':>9} "
          f"{'disk/run':>8} {'hot/run':>8}")
    for product in PRODUCTS:
        for gen in RNGS:
            paths = args.paths or DEFAULT_PATHS[device][product]
            spec = Spec(product, paths=paths, steps=args.steps, rng=gen)
            run_once(spec, paths, runner)  # warm up: build, module load, first touch
            kernel, wall = min(run_once(spec, paths, runner) for _ in range(args.repeat))
            cold, disk, hot = lint_times(spec, paths, arch)
            print(f"{product:14} {gen:7} {paths:>10,} {kernel:>9.4f} {paths / kernel:>10.3e} "
                  f"{wall:>8.4f} {cold:>9.4f} {disk:>9.6f} {hot:>9.6f} {cold / wall:>9.1%} "
                  f"{disk / wall:>8.2%} {hot / wall:>8.2%}")


if __name__ == "__main__":
    main()
