"""Greeks, dividends and batches on a real GPU (issue #23), in about two minutes:
`python tests/pricing/gpu_greeks.py [OUT.json]` from the repository root. Prints one
PASS/FAIL line per check and the timings; exits 1 if a check failed, 2 without a GPU.

Checks: each Monte Carlo Greek within 3 standard errors of Black-Scholes (with a
dividend) at 4M paths; the GPU's sums equal the CPU twin's (same numbers) at 65,536
paths; lattice Greeks near Black-Scholes. Timings (kernel seconds, second run, every
launch linted once before): price alone vs price and Greeks, a batch of 8 strikes in one
launch vs 8 launches, lattice with and without Greeks.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pricing_kernels import pricer  # noqa: E402
from pricing_kernels import reference as ref  # noqa: E402
from pricing_kernels.gpu import DeviceUnavailable, GpuRunner  # noqa: E402
from pricing_kernels.spec import Spec  # noqa: E402

MARKET = dict(spot=100.0, strike=95.0, rate=0.05, vol=0.25, maturity=0.7, div=0.03)
GREEKS = ("delta", "gamma", "vega", "theta", "rho")
REPORT: dict = {"checks": [], "timings": {}}
# a dry run of the script on the emulator: GPU_GREEKS_SCALE=0.001 shrinks every size
SCALE = float(os.environ.get("GPU_GREEKS_SCALE", "1"))


def n(count: int, least: int = 1024) -> int:
    return max(least, int(count * SCALE))


def record(name: str, ok: bool, detail) -> None:
    REPORT["checks"].append({"name": name, "ok": ok, "detail": detail})
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def main() -> int:
    try:
        runner = GpuRunner()
    except DeviceUnavailable as exc:
        print(f"no GPU: {exc}")
        return 2
    REPORT["device"] = getattr(runner, "description", runner.arch)
    print("device", REPORT["device"], runner.arch, flush=True)

    def gpu(spec, **kw):
        return pricer.price(spec, "gpu", runner=runner, strict=True, **kw)

    if os.environ.get("GPU_GREEKS_ONLY") != "timings":
        checks(gpu)
    timings(gpu, runner)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(json.dumps(REPORT, indent=1))
    return 0 if all(c["ok"] for c in REPORT["checks"]) else 1


def checks(gpu) -> None:
    # Greeks against Black-Scholes
    for product, extra in (("european-call", {}), ("european-put", {}),
                           ("european-call", {"antithetic": True, "rng": "mt"}),
                           ("asian-call", {"steps": 1})):
        spec = Spec(product, **MARKET, paths=n(4_000_000), seed=31, greeks=True, **extra)
        r = gpu(spec)
        bs = ref.bs_greeks(spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity,
                           put=spec.put, div=spec.div)
        price_bs = ref.black_scholes(spec.spot, spec.strike, spec.rate, spec.vol,
                                     spec.maturity, put=spec.put, div=spec.div)
        rows = {"price": (r.price, r.stderr, price_bs)}
        rows.update({n: (r.greeks[n]["value"], r.greeks[n]["stderr"], bs[n]) for n in GREEKS})
        z = {n: round((v - b) / se, 2) for n, (v, se, b) in rows.items()}
        record(f"{product} {extra} 4M paths within 3 se of Black-Scholes",
               all(abs(x) <= 3 for x in z.values()),
               {n: {"est": v, "se": se, "bs": b, "z": z[n]} for n, (v, se, b) in rows.items()})

    # the GPU draws the CPU path's numbers
    for product, extra in (("european-put", {}), ("asian-call", {"steps": 12}),
                           ("everest", {"assets": 5, "vols": (0.2, 0.25, 0.3, 0.15, 0.2)})):
        spec = Spec(product, **{**MARKET, **({"strike": 100.0} if product == "everest"
                                            else {})}, paths=n(65_536), seed=5, greeks=True,
                    **extra)
        g, c = gpu(spec), pricer.price(spec, "cpu")
        worst = max(abs(g.greeks[n]["value"] - c.greeks[n]["value"])
                    / max(abs(c.greeks[n]["value"]), 1e-3) for n in GREEKS)
        worst = max(worst, abs(g.price - c.price) / c.price)
        record(f"{product} GPU == CPU twin (relative)", worst < 1e-4, worst)

    # lattice Greeks
    for product in ("binomial-call", "binomial-put"):
        spec = Spec(product, **MARKET, steps=n(1024, 64), greeks=True)
        r = gpu(spec)
        bs = ref.bs_greeks(spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity,
                           put=spec.put, div=spec.div)
        rel = {n: abs(r.greeks[n]["value"] - bs[n]) / abs(bs[n]) for n in GREEKS}
        record(f"{product} {spec.steps} steps Greeks within 0.5% of Black-Scholes",
               max(rel.values()) < (5e-3 if SCALE == 1 else 5e-2), rel)



def timings(gpu, runner) -> None:
    """Kernel seconds of a second run (the first builds and lints), sizes large enough
    for the H100/H200 to take milliseconds."""
    def timed(label, fn):
        fn()
        start = time.perf_counter()
        out = fn()
        wall = time.perf_counter() - start
        kernel = sum(r.seconds for r in out) if isinstance(out, list) else out.seconds
        REPORT["timings"][label] = {"kernel_s": kernel, "wall_s": wall}
        print(f"TIME {label}: kernel {kernel * 1e3:.3f} ms, wall {wall * 1e3:.1f} ms",
              flush=True)

    for product, paths, extra in (("european-call", 1_000_000_000, {}),
                                  ("asian-call", 10_000_000, {"steps": 64}),
                                  ("everest", 100_000_000, {"assets": 8})):
        spec = Spec(product, paths=n(paths), seed=1, **extra)
        timed(f"{product} {paths:,} price", lambda s=spec: gpu(s))
        timed(f"{product} {paths:,} price+greeks",
              lambda s=spec: gpu(replace(s, greeks=True)))
    strikes = [80, 85, 90, 95, 100, 105, 110, 115]
    for product, paths, extra in (("european-call", 1_000_000_000, {}),
                                  ("asian-call", 10_000_000, {"steps": 64})):
        spec = Spec(product, paths=n(paths), seed=1, **extra)

        def batch(s=spec):
            rs = pricer.price_grid(s, strikes, None, "gpu", runner=runner, strict=True)
            return rs[:1]  # one group: every result carries the group's seconds

        def separate(s=spec):
            return [gpu(replace(s, strike=k)) for k in strikes]
        timed(f"{product} {paths:,} 8 strikes, one launch", batch)
        timed(f"{product} {paths:,} 8 strikes, 8 launches", separate)
    for greeks in (False, True):
        spec = Spec("american-put", steps=n(16384, 64), greeks=greeks)
        timed(f"american-put 16384 steps {'price+greeks' if greeks else 'price'}",
              lambda s=spec: gpu(s))


if __name__ == "__main__":
    sys.exit(main())
