"""Pricing one `Spec` on a device: build the kernels, check each launch with the
pre-launch hook, run it (GPU or emulator), or take the CPU path; on request compare with
an independent reference.

Monte Carlo results are mean and standard error of the samples' discounted payoffs, from
the (sum, sum of squares) pair the two reduction passes return. A sample is one path,
or with `antithetic` the average over a path and its mirror. A sum that is not finite
(a NaN from a kernel) raises `PricingError`: a price is never silently wrong.

Devices: without a usable GPU (no driver, no device, a driver too old for the PTX, a
device that is busy or prohibited) the GPU is `DeviceUnavailable`; by default the
pricer says so through `notice` and takes the CPU path, with `strict=True` it raises.
On the emulator a Philox run is split into launches of about `chunk_normals` normals
(`mc_launch(spec, samples, first)`: a sample's numbers depend only on its index), so
`progress(done, total)` is called after each; LCG and MT streams belong to the threads
of one launch, so those runs are one launch (`progress(0, 1)`, then `(1, 1)`).
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
TRINOMIAL_STEPS = (4096, 16384)  # the American put's reference: 2 x steps, within these


class PricingError(RuntimeError):
    """The run gave no usable price (a kernel returned NaN or infinity)."""


@dataclass(frozen=True)
class Reference:
    """A value to compare with: how it was obtained and its own error (a standard
    error for Monte Carlo, a discretisation error estimate for a lattice, 0 for a
    closed form)."""

    price: float
    method: str
    error: float


@dataclass
class Result:
    product: str
    price: float
    stderr: float | None
    device: str
    rng: str | None
    paths: int | None
    seconds: float
    lint: dict | None
    spec: Spec | None = None
    ref: Reference | None = None
    lint_records: list = field(default_factory=list)

    @property
    def ci95(self) -> list[float] | None:
        if self.stderr is None:
            return None
        return [self.price - 1.96 * self.stderr, self.price + 1.96 * self.stderr]

    @property
    def reference(self) -> float | None:
        return self.ref.price if self.ref else None

    @property
    def reference_method(self) -> str | None:
        return self.ref.method if self.ref else None

    @property
    def reference_error(self) -> float | None:
        return self.ref.error if self.ref else None

    def inputs(self) -> dict:
        """What was priced, as given (None where an input does not apply)."""
        s = self.spec
        if s is None:
            return {"product": self.product}
        mc = not s.lattice
        out = {"product": s.product, "spot": s.spot, "strike": s.strike, "rate": s.rate,
               "vol": s.vol, "maturity": s.maturity,
               "steps": s.steps_or_default() if s.lattice or s.product == "asian-call"
               else None,
               "paths": self.paths, "seed": s.seed if mc else None,
               "rng": s.rng if mc else None, "normals": s.normals if mc else None,
               "antithetic": s.antithetic if mc else None}
        if s.product == "everest":
            out["assets"] = s.assets
            out["corr"] = list(s.corr)
        return out

    def to_json(self) -> dict:
        return {"product": self.product, "price": self.price, "stderr": self.stderr,
                "ci95": self.ci95, "reference": self.reference,
                "reference_method": self.reference_method,
                "reference_error": self.reference_error, "device": self.device,
                "rng": self.rng, "paths": self.paths, "seconds": self.seconds,
                "lint": self.lint, "inputs": self.inputs()}


def open_runner(device: str, arch: str | None, notice: Notice, strict: bool = False):
    """The runner for `device`, or None for the CPU path. An unusable GPU is reported
    through `notice` in one line and falls back to the CPU path; under `strict` its
    `DeviceUnavailable` is raised instead. (The emulator ships with ptxlint.)"""
    if device == "cpu":
        return None
    if device == "gpu":
        from .gpu import DeviceUnavailable, GpuRunner  # noqa: PLC0415

        try:
            return GpuRunner()
        except DeviceUnavailable as exc:
            if strict:
                raise
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
          runner=None, reference: bool = False, strict: bool = False) -> Result:
    """Price `spec` on `device` ("gpu", "emulator" or "cpu"); `runner` reuses an open
    runner (loaded modules stay loaded), else one is opened for `device` (and kept until
    the process ends: pass `runner` to manage its life, `GpuRunner.close()`).
    `reference`: also compute the reference (`reference_price`). `strict`: raise
    `DeviceUnavailable` rather than fall back to the CPU path."""
    from .gpu import DeviceUnavailable  # noqa: PLC0415

    notice = notice or (lambda line: None)
    if runner is None:
        runner = open_runner(device, arch, notice, strict)
    records: list = []
    start = time.perf_counter()
    try:
        value, stderr, paths, seconds = _run(spec, runner, lint, records, progress)
    except DeviceUnavailable as exc:  # found only at module load (an old driver)
        if strict or runner is None:
            raise
        notice(f"{exc}: using the CPU path")
        runner, records, start = None, [], time.perf_counter()
        value, stderr, paths, seconds = _run(spec, None, lint, records, progress)
    if runner is None:
        seconds = time.perf_counter() - start
    used = runner.name if runner is not None else "cpu"
    lint_json = prelaunch.summary(records, lint) if runner is not None else None
    return Result(spec.product, value, stderr, used, None if spec.lattice else spec.rng,
                  paths, seconds, lint_json, spec,
                  reference_price(spec) if reference else None, records)


def _run(spec: Spec, runner, lint: bool, records: list, progress
         ) -> tuple[float, float | None, int | None, float]:
    """(price, stderr, paths, kernel seconds) on `runner` (None: the CPU path)."""
    if spec.lattice:
        value, seconds = _lattice(spec, runner, lint, records, progress)
        return value, None, None, seconds
    paths = spec.paths_or_default(runner.name if runner is not None else "cpu")
    value, stderr, seconds = _monte_carlo(spec, paths, runner, lint, records, progress)
    return value, stderr, paths, seconds


def _monte_carlo(spec: Spec, paths: int, runner, lint: bool, records: list,
                 progress) -> tuple[float, float, float]:
    if runner is None:
        s1, s2 = cpu.mc_sums(spec, paths, progress)
        seconds = 0.0
    else:
        partials, seconds = [], 0.0
        ranges = launch_ranges(spec, paths, runner)
        for done, (first, count) in enumerate(ranges):
            if progress is not None and len(ranges) == 1:
                progress(0, 1)
            out, t = run_launch(runner, catalog.mc_launch(spec, count, first), lint, records)
            partials.append(out["partial"])
            seconds += t
            if progress is not None:
                progress(done + 1, len(ranges))
        out, t = run_launch(runner, catalog.reduce_launch(np.concatenate(partials)), lint,
                            records)
        s1, s2 = (float(v) for v in out["result"])
        seconds += t
    if not (math.isfinite(s1) and math.isfinite(s2)):
        raise PricingError(f"the {spec.product} kernel returned a sum that is not finite "
                           f"({s1}, {s2}): no price")
    mean, stderr = moments(s1, s2, paths)
    scale = math.exp(-spec.rate * spec.maturity) * (spec.spot if spec.product == "everest"
                                                     else 1.0)
    return scale * mean, scale * stderr, seconds


def launch_ranges(spec: Spec, paths: int, runner) -> list[tuple[int, int]]:
    """(first sample, samples) of each Monte Carlo launch: one launch, except for a
    Philox run on a runner with `chunk_normals` (the emulator), split into launches of
    about that many normals (whole blocks of items, so every launch but the last has the
    same shape and the pre-launch check analyses it once)."""
    per = getattr(runner, "chunk_normals", None)
    if per is None or spec.rng != "philox":
        return [(0, paths)]
    european = spec.product.startswith("european")
    normals_per_sample = 1 if european else 4 * catalog.draws_per_item(spec)
    unit = 4 * catalog.BLOCK  # a multiple of 4 (European items) and of a block
    chunk = max(unit, per // normals_per_sample // unit * unit)
    return [(first, min(chunk, paths - first)) for first in range(0, paths, chunk)]


def moments(s1: float, s2: float, n: int) -> tuple[float, float]:
    """Mean and standard error of the mean from a sum and a sum of squares."""
    mean = s1 / n
    if n < 2:
        return mean, float("nan")
    var = max(0.0, (s2 - s1 * mean) / (n - 1))
    return mean, math.sqrt(var / n)


def _lattice(spec: Spec, runner, lint: bool, records: list, progress=None
             ) -> tuple[float, float]:
    steps = spec.steps_or_default()
    if runner is None:
        return reference.binomial(spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity,
                                  steps, put=spec.put, american=spec.american), 0.0
    if progress is not None:
        progress(0, 1)
    out, seconds = run_launch(runner, catalog.binomial_launch(spec), lint, records)
    if progress is not None:
        progress(1, 1)
    value = float(out["price"][0])
    if not math.isfinite(value):
        raise PricingError(f"the lattice kernel returned {value}: no price")
    return value, seconds


def reference_price(spec: Spec) -> Reference:
    """An independent value to compare with: never the method that priced.

    - European payoffs (Monte Carlo and lattice): Black-Scholes, exact.
    - American call: Black-Scholes too (without dividends a call is never exercised
      early, so the American and European calls are worth the same), exact.
    - American put: the trinomial lattice (another discretisation than the binomial
      lattice the pricer uses on every device), 2 x steps levels within 4096..16384;
      its error is estimated as the change from half as many levels (O(1/n)).
    - Asian: numpy Monte Carlo (numpy's own generator, 100,000 paths) with the
      geometric-average control variate; its standard error.
    - Everest: numpy Monte Carlo, 100,000 paths; its standard error.
    """
    args = (spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity)
    if spec.product in ("european-call", "european-put", "binomial-call", "binomial-put"):
        return Reference(reference.black_scholes(*args, put=spec.put),
                         "Black-Scholes closed form", 0.0)
    if spec.product == "american-call":
        return Reference(reference.black_scholes(*args), "Black-Scholes closed form (an "
                         "American call without dividends is never exercised early)", 0.0)
    if spec.product == "asian-call":
        est = reference.mc_asian_call(*args, spec.steps_or_default(), REFERENCE_PATHS,
                                      seed=spec.seed)
        return Reference(est.price, f"numpy Monte Carlo, {REFERENCE_PATHS:,} paths, "
                         "geometric control variate", est.stderr)
    if spec.product == "everest":
        est = reference.mc_everest(spec.rate, spec.vol, spec.maturity, spec.corr_matrix,
                                   REFERENCE_PATHS, seed=spec.seed, notional=spec.spot)
        return Reference(est.price, f"numpy Monte Carlo, {REFERENCE_PATHS:,} paths",
                         est.stderr)
    lo, hi = TRINOMIAL_STEPS
    n = min(hi, max(lo, 2 * spec.steps_or_default()))
    fine = reference.trinomial(*args, n, put=True, american=True)
    coarse = reference.trinomial(*args, n // 2, put=True, american=True)
    return Reference(fine, f"trinomial lattice (Kamrad-Ritchken), {n} steps, float64",
                     abs(fine - coarse))


__all__ = ["Result", "Reference", "PricingError", "price", "reference_price", "moments",
           "open_runner", "run_launch", "launch_ranges"]
