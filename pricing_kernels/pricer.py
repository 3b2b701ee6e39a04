"""Pricing one `Spec` on a device: build the kernels, check each launch with the
pre-launch hook, run it (GPU or emulator), or take the CPU path; compare with a
reference.

Monte Carlo results are mean and standard error of the samples' discounted payoffs, from
the (sum, sum of squares) pair the two reduction passes return. A sample is one path,
or with `antithetic` the average over a path and its mirror.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import catalog, cpu, prelaunch, reference
from .build import compile_ptx, default_cache_dir
from .spec import Spec

Notice = Callable[[str], None]

REFERENCE_PATHS = 100_000  # numpy Monte Carlo references (Asian with control variate, Everest)


@dataclass
class Result:
    product: str
    price: float
    stderr: float | None
    reference: float
    device: str
    rng: str | None
    paths: int | None
    seconds: float
    lint: dict | None
    reference_method: str = ""
    lint_records: list = field(default_factory=list)

    @property
    def ci95(self) -> list[float] | None:
        if self.stderr is None:
            return None
        return [self.price - 1.96 * self.stderr, self.price + 1.96 * self.stderr]

    def to_json(self) -> dict:
        return {"product": self.product, "price": self.price, "stderr": self.stderr,
                "ci95": self.ci95, "reference": self.reference, "device": self.device,
                "rng": self.rng, "paths": self.paths, "seconds": self.seconds,
                "lint": self.lint}


def open_runner(device: str, arch: str | None, notice: Notice):
    """The runner for `device`, or None for the CPU path; a missing GPU is reported
    through `notice` in one line and falls back to the CPU path (the emulator ships
    with ptxlint, so it is always there)."""
    if device == "cpu":
        return None
    if device == "gpu":
        from .gpu import DeviceUnavailable, GpuRunner  # noqa: PLC0415

        try:
            return GpuRunner()
        except DeviceUnavailable as exc:
            notice(f"{exc}: using the CPU path")
            return None
    from .emulator import EmulatorRunner  # noqa: PLC0415

    return EmulatorRunner(arch or "sm_80")


def run_launch(runner, launch: catalog.Launch, lint: bool, records: list
               ) -> tuple[dict[str, np.ndarray], float]:
    """Build, check (unless `lint` is False) and run one launch."""
    build = compile_ptx(launch.source, runner.arch, launch.defines)
    if lint:
        records.append(prelaunch.check(launch, build.ptx, runner.arch,
                                       default_cache_dir() / "lint"))
    return runner.run(launch, build.ptx)


def price(spec: Spec, device: str = "gpu", lint: bool = True, arch: str | None = None,
          progress: cpu.Progress | None = None, notice: Notice | None = None,
          runner=None) -> Result:
    """Price `spec` on `device` ("gpu", "emulator" or "cpu"); `runner` reuses an open
    runner (loaded modules stay loaded), else one is opened for `device`."""
    notice = notice or (lambda line: None)
    if runner is None:
        runner = open_runner(device, arch, notice)
    used = runner.name if runner is not None else "cpu"
    records: list = []
    start = time.perf_counter()
    if spec.lattice:
        value, seconds = _lattice(spec, runner, lint, records)
        stderr, paths, rng = None, None, None
    else:
        paths = spec.paths_or_default(used)
        value, stderr, seconds = _monte_carlo(spec, paths, runner, lint, records, progress)
        rng = spec.rng
    if runner is None:
        seconds = time.perf_counter() - start
    ref, method = reference_price(spec)
    lint_json = prelaunch.summary(records, lint) if runner is not None else None
    return Result(spec.product, value, stderr, ref, used, rng, paths, seconds, lint_json,
                  method, records)


def _monte_carlo(spec: Spec, paths: int, runner, lint: bool, records: list,
                 progress) -> tuple[float, float, float]:
    if runner is None:
        s1, s2 = cpu.mc_sums(spec, paths, progress)
        seconds = 0.0
    else:
        out, t1 = run_launch(runner, catalog.mc_launch(spec, paths), lint, records)
        out, t2 = run_launch(runner, catalog.reduce_launch(out["partial"]), lint, records)
        s1, s2 = (float(v) for v in out["result"])
        seconds = t1 + t2
    mean, stderr = moments(s1, s2, paths)
    scale = math.exp(-spec.rate * spec.maturity) * (spec.spot if spec.product == "everest"
                                                     else 1.0)
    return scale * mean, scale * stderr, seconds


def moments(s1: float, s2: float, n: int) -> tuple[float, float]:
    """Mean and standard error of the mean from a sum and a sum of squares."""
    mean = s1 / n
    if n < 2:
        return mean, float("nan")
    var = max(0.0, (s2 - s1 * mean) / (n - 1))
    return mean, math.sqrt(var / n)


def _lattice(spec: Spec, runner, lint: bool, records: list) -> tuple[float, float]:
    steps = spec.steps_or_default()
    if runner is None:
        return reference.binomial(spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity,
                                  steps, put=spec.put, american=spec.american), 0.0
    out, seconds = run_launch(runner, catalog.binomial_launch(spec), lint, records)
    return float(out["price"][0]), seconds


def reference_price(spec: Spec) -> tuple[float, str]:
    """The value to compare with, and how it was obtained."""
    args = (spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity)
    if spec.product in ("european-call", "european-put", "binomial-call", "binomial-put"):
        return reference.black_scholes(*args, put=spec.put), "Black-Scholes closed form"
    if spec.product == "asian-call":
        est = reference.mc_asian_call(*args, spec.steps_or_default(), REFERENCE_PATHS,
                                      seed=spec.seed)
        return est.price, (f"numpy Monte Carlo, {REFERENCE_PATHS} paths, geometric control "
                           f"variate (stderr {est.stderr:.2g})")
    if spec.product == "everest":
        est = reference.mc_everest(spec.rate, spec.vol, spec.maturity, spec.corr_matrix,
                                   REFERENCE_PATHS, seed=spec.seed, notional=spec.spot)
        return est.price, f"numpy Monte Carlo, {REFERENCE_PATHS} paths (stderr {est.stderr:.2g})"
    steps = spec.steps_or_default()
    value = reference.binomial(*args, steps, put=spec.put, american=True)
    return value, f"numpy binomial lattice, {steps} steps, float64"


__all__ = ["Result", "price", "reference_price", "moments", "open_runner", "run_launch"]
