"""The GPU path on real hardware, in under three minutes: `python tests/pricing/gpu_smoke.py`
(from the repository root, with the `cuda` extra installed). Prints one PASS/FAIL line
per check and exits 1 if any failed, 2 if no GPU is usable.

Checks: the device set-up (driver version, architecture targeted); every product priced
on the GPU with small sizes, against its reference and (Monte Carlo) against the CPU
path, which draws the same numbers; the generators bit for bit; Box-Muller at the extreme
uniforms on the hardware's __logf; sample indices past 2^32 and the issue's 4294967293
paths (a 32-bit count priced 0); the lattice converging in O(1/n) up to 16384 steps; a
launch from another thread; `--device gpu --strict` on the command line; then the GPU
tests of tests/pricing (test_devices.py's `gpu` runner, test_gpu.py).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pricing_kernels import Spec, catalog, cpu, pricer, rng  # noqa: E402
from pricing_kernels.gpu import DeviceUnavailable, GpuRunner  # noqa: E402
from pricing_kernels.reference import binomial, black_scholes  # noqa: E402

RESULTS: list[tuple[str, bool, str]] = []


def check(name: str):
    def wrap(fn):
        start = time.perf_counter()
        try:
            detail = fn() or ""
            ok = True
        except Exception as exc:  # noqa: BLE001 - every failure is reported, then the next
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        seconds = time.perf_counter() - start
        RESULTS.append((name, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'}  {name}  ({seconds:.1f} s)  {detail}", flush=True)
        return fn
    return wrap


def main() -> int:
    try:
        runner = GpuRunner()
    except DeviceUnavailable as exc:
        print(f"FAIL  set-up: {exc}")
        return 2
    print(f"device: {runner.description}, {runner.device_arch}, kernels built for "
          f"{runner.arch}, driver CUDA {runner.driver_version // 1000}."
          f"{runner.driver_version % 1000 // 10}", flush=True)

    def gpu(spec, **kw):
        return pricer.price(spec, "gpu", runner=runner, reference=True, **kw)

    for product in ("european-call", "european-put", "asian-call", "everest"):
        for gen in ("philox", "mt", "lcg"):
            @check(f"{product} {gen}: within 3 standard errors, equal to the CPU path")
            def _(product=product, gen=gen):
                spec = Spec(product, paths=200_000, rng=gen, normals="paired",
                            steps=16 if product == "asian-call" else None)
                r = gpu(spec)
                tol = 3 * math.hypot(r.stderr, r.reference_error)
                assert abs(r.price - r.reference) < tol, (r.price, r.reference, tol)
                host = pricer.price(spec, "cpu").price  # the same samples in float64
                assert abs(r.price / host - 1) < 1e-4, (r.price, host)
                return f"{r.price:.6f} vs {r.reference:.6f}, {r.seconds * 1e3:.2f} ms"

    for product in ("binomial-call", "binomial-put", "american-call", "american-put"):
        @check(f"{product} 1000 steps: the float64 lattice's price, near the reference")
        def _(product=product):
            spec = Spec(product, steps=1000)
            r = gpu(spec)
            want = binomial(100, 100, 0.05, 0.2, 1.0, 1000, put=spec.put,
                            american=spec.american)
            assert abs(r.price - want) < 1e-6 * want, (r.price, want)
            assert abs(r.price - r.reference) < 5e-3 + 3 * r.reference_error
            return f"{r.price:.6f} vs {r.reference:.6f}"

    @check("lattice converges in O(1/n) up to 16384 steps")
    def _():
        bs = black_scholes(100, 100, 0.05, 0.2, 1.0)
        errors = []
        for steps in (2048, 4096, 8192, 16384):
            got = gpu(Spec("binomial-call", steps=steps), lint=False).price
            want = binomial(100, 100, 0.05, 0.2, 1.0, steps)
            assert abs(got - want) < 0.01 * abs(want - bs), (steps, got, want)
            errors.append(got - bs)
        ratios = [b / a for a, b in zip(errors, errors[1:], strict=False)]
        assert all(0.45 < x < 0.55 for x in ratios), ratios
        return "errors " + ", ".join(f"{e:.2e}" for e in errors)

    def run(launch):
        return pricer.run_launch(runner, launch, True, [])[0]

    @check("philox, mt19937, lcg bit-identical to the host twins")
    def _():
        out = run(catalog.philox_raw_launch(1000, (5, 6, 7, 8), (9, 10)))["out"]
        want = rng.philox4x32_10((5 + np.arange(1000, dtype=np.uint64), 6, 7, 8), (9, 10))
        assert (out.reshape(1000, 4).T == want).all()
        out = run(catalog.mt_raw_launch([5489], 2))["out"][:2 * 624]
        assert (out == rng.mt19937(5489, 2 * 624)).all()
        launch = catalog.lcg_raw_launch(3, 2, 8)
        assert (run(launch)["out"].reshape(8, -1) == rng.lcg_draws(launch.args[1].data,
                                                                    8)[0]).all()

    @check("Box-Muller at the extreme uniforms: finite on the hardware's __logf")
    def _():
        low, high = 0x000001FF, 0xFFFFFFFF
        words = np.array([[high, low, high, low], [low, high, low, high], [high] * 4,
                          [low] * 4] * 64, dtype=np.uint32)
        for normals in ("thread", "paired"):
            z = run(catalog.box_muller_launch(words, normals))["out"]
            assert np.isfinite(z).all(), normals

    @check("samples [2^32 - 1024, 2^32 + 1024): the CPU path's sums")
    def _():
        for product in ("european-call", "asian-call", "everest"):
            spec = Spec(product, steps=8 if product == "asian-call" else None)
            partial = run(catalog.mc_launch(spec, 2048, (1 << 32) - 1024))["partial"]
            s1, s2 = run(catalog.reduce_launch(partial))["result"]
            w1, w2 = cpu.mc_sums(spec, 2048, first=(1 << 32) - 1024)
            assert abs(s1 / w1 - 1) < 1e-5 and abs(s2 / w2 - 1) < 1e-5, (product, s1, w1)

    @check("a launch from another thread")
    def _():
        got = {}

        def work():
            try:
                got["out"] = run(catalog.philox_raw_launch(8))["out"]
            except Exception as exc:  # noqa: BLE001
                got["error"] = exc
        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert "error" not in got, got.get("error")

    runner.close()

    def cli(*args, timeout=90):
        done = subprocess.run([sys.executable, "-m", "pricing_kernels", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
        return done

    for product, paths in (("european-call", "4294967293"), ("asian-call", "4294967293")):
        @check(f"{product} --paths {paths} (near 2^32): a price, not 0 or a hang")
        def _(product=product, paths=paths):
            extra = ["--steps", "1"] if product == "asian-call" else []
            out = json.loads(cli(product, "--device", "gpu", "--strict", "--paths", paths,
                                 "--format", "json", "--reference", *extra).stdout)
            assert out["device"] == "gpu" and out["paths"] == int(paths)
            assert abs(out["price"] - out["reference"]) < 4 * math.hypot(
                out["stderr"], out["reference_error"]), out
            return f"{out['price']:.6f} +- {out['stderr']:.1e}, {out['seconds']:.2f} s"

    @check("command line: --device gpu --strict, every product")
    def _():
        for product in ("european-call", "asian-call", "everest", "american-put"):
            size = ["--steps", "512"] if product == "american-put" else ["--paths", "1e6"]
            out = json.loads(cli(product, "--device", "gpu", "--strict", *size,
                                 "--format", "json").stdout)
            assert out["device"] == "gpu" and out["lint"]["enabled"], out

    @check("GPU tests: test_devices.py (gpu runner), test_gpu.py")
    def _():
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "tests/pricing/test_devices.py", "-k", "gpu and not fake",
             "tests/pricing/test_gpu.py"],
            cwd=ROOT, capture_output=True, text=True, timeout=150,
            env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
        assert done.returncode == 0 and "skipped" not in tail.replace(
            "deselected", ""), done.stdout[-3000:]
        return tail

    failed = [name for name, ok, _ in RESULTS if not ok]
    print(f"\n{len(RESULTS) - len(failed)} passed, {len(failed)} failed"
          + (": " + "; ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
