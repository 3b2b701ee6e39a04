"""Pricing one `Spec` on a device: build the kernels, check each launch with the
pre-launch hook, run it (GPU or emulator), or take the CPU path; on request compare with
an independent reference. `price_grid` prices a batch of strikes x maturities (one
launch per maturity where the kernel allows); `Spec.greeks` adds delta, gamma, vega,
theta and rho (`Result.greeks`, docs/pricing.md says how each is estimated).

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

GREEK_NAMES = catalog.GREEK_NAMES
LATTICE_VOL_BUMP = 0.05  # lattice vega: central difference, vol x (1 +- 5%)
LATTICE_RATE_BUMP = 1e-4  # lattice rho: central difference, rate +- 1bp
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
    # name -> {"value", "stderr" (None: no sampling error), "method"}, with Greeks
    greeks: dict | None = None
    ref_greeks: dict | None = None  # closed-form Greeks to compare with (--reference)
    # control variate / Sobol replications: how the standard error was formed and the
    # variance-reduction factor (variance.py)
    variance: dict | None = None

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
               "vol": s.vol, "div": s.div, "maturity": s.maturity,
               "steps": s.steps_or_default() if s.lattice or s.product == "asian-call"
               else None,
               "paths": self.paths, "seed": s.seed if mc else None,
               "rng": s.rng if mc else None, "normals": s.normals if mc else None,
               "antithetic": s.antithetic if mc else None}
        if s.product == "everest":
            out["assets"] = s.assets
            out["corr"] = list(s.corr)
            out["vol"] = [float(v) for v in s.asset_vols()]
            out["div"] = [float(v) for v in s.asset_divs()]
        return out

    def to_json(self) -> dict:
        out = {"product": self.product, "price": self.price, "stderr": self.stderr,
               "ci95": self.ci95, "reference": self.reference,
               "reference_method": self.reference_method,
               "reference_error": self.reference_error, "device": self.device,
               "rng": self.rng, "paths": self.paths, "seconds": self.seconds,
               "lint": self.lint, "inputs": self.inputs()}
        if self.greeks is not None:
            out["greeks"] = self.greeks
            out["reference_greeks"] = self.ref_greeks
        if self.variance is not None:
            out["variance_reduction"] = self.variance
        return out


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
    return price_grid(spec, None, None, device, lint, arch, progress, notice, runner,
                      reference, strict)[0]


def price_grid(spec: Spec, strikes=None, maturities=None, device: str = "gpu",
               lint: bool = True, arch: str | None = None,
               progress: cpu.Progress | None = None, notice: Notice | None = None,
               runner=None, reference: bool = False, strict: bool = False) -> list[Result]:
    """Price `spec` at every (maturity, strike) of the grid (default: the spec's own),
    maturity by maturity, strikes in the given order. One maturity's strikes share
    their launches: the Monte Carlo kernels price up to `catalog.MAX_STRIKES` strikes on
    the same paths, the lattice kernel one option per block. A maturity changes the
    path length (and the lattice's u, p), so each maturity has its own launches. Every
    result of a group reports the group's kernel seconds and lint records."""
    from .gpu import DeviceUnavailable  # noqa: PLC0415

    from dataclasses import replace  # noqa: PLC0415

    notice = notice or (lambda line: None)
    strikes = [spec.strike] if strikes is None else [float(k) for k in strikes]
    maturities = [spec.maturity] if maturities is None else [float(t) for t in maturities]
    if len(strikes) > 1 and spec.product == "everest":
        from .spec import InputError  # noqa: PLC0415

        raise InputError("--strike does not apply to everest (the note has no strike)")
    specs = [[replace(spec, strike=k, maturity=t) for k in strikes] for t in maturities]
    if runner is None:
        runner = open_runner(device, arch, notice, strict)
    results: list[Result] = []
    for group in specs:
        records: list = []
        start = time.perf_counter()
        try:
            values = _run(group, runner, lint, records, progress)
        except DeviceUnavailable as exc:  # found only at module load (an old driver)
            if strict or runner is None:
                raise
            notice(f"{exc}: using the CPU path")
            runner, records, start = None, [], time.perf_counter()
            values = _run(group, None, lint, records, progress)
        used = runner.name if runner is not None else "cpu"
        lint_json = prelaunch.summary(records, lint) if runner is not None else None
        for one, (value, stderr, paths, seconds, greeks, *variance) in zip(group, values):
            if runner is None:
                seconds = time.perf_counter() - start
            ref = reference_price(one) if reference else None
            results.append(Result(one.product, value, stderr, used,
                                  None if one.lattice else one.rng, paths, seconds,
                                  lint_json, one, ref, records, greeks,
                                  reference_greeks(one) if reference and one.greeks
                                  else None, variance[0] if variance else None))
    return results


def _run(group: list[Spec], runner, lint: bool, records: list, progress) -> list[tuple]:
    """(price, stderr, paths, kernel seconds, greeks) of each spec of `group` (one
    maturity, several strikes) on `runner` (None: the CPU path)."""
    spec = group[0]
    strikes = np.array([s.strike for s in group])
    if spec.lattice:
        prices, greeks, seconds = _lattice(spec, strikes, runner, lint, records, progress)
        return [(p, None, None, seconds, g) for p, g in zip(prices, greeks)]
    paths = spec.paths_or_default(runner.name if runner is not None else "cpu")
    out = []
    for lo in range(0, strikes.size, catalog.MAX_STRIKES):
        chunk = strikes[lo:lo + catalog.MAX_STRIKES]
        rows, seconds = _monte_carlo(spec, chunk, paths, runner, lint, records, progress)
        out += [(p, se, paths, seconds, g, *v) for p, se, g, *v in rows]
    return out


def _monte_carlo(spec: Spec, strikes: np.ndarray, paths: int, runner, lint: bool,
                 records: list, progress) -> tuple[list, float]:
    """[(price, stderr, greeks)] for each strike, and the kernel seconds."""
    if spec.control_variate or spec.rng == "sobol":  # variance.py: (..., greeks, info)
        from . import variance  # noqa: PLC0415

        return variance.monte_carlo(spec, strikes, paths, runner, lint, records, progress,
                                    run_launch)
    nv = catalog.mc_values(spec)
    pairs = nv * strikes.size
    plain = strikes.size == 1 and strikes[0] == spec.strike and not spec.greeks
    launch_strikes = None if plain else strikes
    if runner is None:
        s1, s2 = cpu.mc_sums_n(spec, paths, progress, strikes=strikes)
        seconds = 0.0
    else:
        partials, seconds = [], 0.0
        ranges = launch_ranges(spec, paths, runner)
        for done, (first, count) in enumerate(ranges):
            if progress is not None and len(ranges) == 1:
                progress(0, 1)
            out, t = run_launch(runner, catalog.mc_launch(spec, count, first, launch_strikes),
                                lint, records)
            partials.append(out["partial"].reshape(pairs, -1))  # [pair][block]
            seconds += t
            if progress is not None:
                progress(done + 1, len(ranges))
        partial = np.concatenate(partials, axis=1).reshape(-1)
        out, t = run_launch(runner, catalog.reduce_launch(partial, pairs), lint, records)
        s1, s2 = out["result"][0::2], out["result"][1::2]
        seconds += t
    if not (np.all(np.isfinite(s1)) and np.all(np.isfinite(s2))):
        raise PricingError(f"the {spec.product} kernel returned a sum that is not finite "
                           f"({s1[0]}, {s2[0]}): no price")
    disc = math.exp(-spec.rate * spec.maturity)
    notional = spec.spot if spec.product == "everest" else 1.0
    rows = []
    for j in range(strikes.size):
        mean, stderr = moments(float(s1[j * nv]), float(s2[j * nv]), paths)
        greeks = None
        if spec.greeks:
            greeks = {}
            for g, name in enumerate(GREEK_NAMES, start=1):
                m, se = moments(float(s1[j * nv + g]), float(s2[j * nv + g]), paths)
                scale = disc * (1.0 if name == "delta" else notional)
                greeks[name] = {"value": scale * m, "stderr": scale * se,
                                "method": mc_greek_method(spec, name)}
        rows.append((disc * notional * mean, disc * notional * stderr, greeks))
    return rows, seconds


def mc_greek_method(spec: Spec, name: str) -> str:
    """How the Monte Carlo kernels estimate a Greek (docs/pricing.md has the formulas)."""
    if spec.product == "everest":
        return {"delta": "exact: the value is linear in the notional (--spot), delta = "
                         "value / notional",
                "gamma": "exact: 0 (linear in the notional)"}.get(
            name, "pathwise (parallel shift of every asset's volatility)" if name == "vega"
            else "pathwise")
    if name == "gamma":
        return "pathwise-likelihood-ratio mix (likelihood ratio of the first normal on the " \
               "pathwise delta)"
    return "pathwise"


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


def _lattice_values(spec: Spec, spots: np.ndarray, strikes: np.ndarray, runner, lint: bool,
                    records: list) -> tuple[np.ndarray, float]:
    """The lattice values of the options (spots[i], strikes[i]) of `spec` (its steps,
    maturity, rate, vol, div): one launch, one block per option."""
    if runner is None:
        return np.array([reference.binomial(s, k, spec.rate, spec.vol, spec.maturity,
                                            spec.steps_or_default(), put=spec.put,
                                            american=spec.american, div=spec.div)
                         for s, k in zip(spots, strikes)]), 0.0
    out, seconds = run_launch(runner, catalog.binomial_launch(spec, spots, strikes), lint,
                              records)
    values = np.asarray(out["price"], dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise PricingError(f"the lattice kernel returned {values}: no price")
    return values, seconds


def _lattice(spec: Spec, strikes: np.ndarray, runner, lint: bool, records: list,
             progress=None) -> tuple[list[float], list, float]:
    """Prices (and Greeks) of `spec` at each strike, the kernel seconds.

    Greeks: delta, gamma and theta from the nodes two levels down (their values are the
    prices of a lattice of steps - 2 levels, maturity T - 2 dt and the same u and p, at
    spots S u^-2, S, S u^2: one launch for every strike); vega and rho by central
    differences of the whole lattice (vol x (1 +- 5%), rate +- 1bp), one launch each."""
    from dataclasses import replace  # noqa: PLC0415

    n = strikes.size
    spots = np.full(n, spec.spot)
    launches = 1 + (5 if spec.greeks else 0)
    if progress is not None:
        progress(0, launches)
    prices, seconds = _lattice_values(spec, spots, strikes, runner, lint, records)
    if not spec.greeks:
        if progress is not None:
            progress(1, 1)
        return [float(p) for p in prices], [None] * n, seconds
    steps, t = spec.steps_or_default(), spec.maturity
    dt = t / steps
    u2 = math.exp(2 * spec.vol * math.sqrt(dt))
    inner = replace(spec, steps=steps - 2, maturity=t - 2 * dt, greeks=False)
    node_spots = np.concatenate([spots / u2, spots, spots * u2])
    nodes, sec = _lattice_values(inner, node_spots, np.tile(strikes, 3), runner, lint, records)
    seconds += sec
    dd, ud, uu = nodes[:n], nodes[n:2 * n], nodes[2 * n:]
    s = spec.spot
    bumped = []
    for name, value, h in (("vol", spec.vol, LATTICE_VOL_BUMP * spec.vol),
                           ("rate", spec.rate, LATTICE_RATE_BUMP)):
        for sign in (1, -1):
            v, sec = _lattice_values(replace(spec, **{name: value + sign * h}), spots,
                                     strikes, runner, lint, records)
            seconds += sec
            bumped.append(v)
            if progress is not None:
                progress(len(bumped) + 2, launches)
        bumped[-2] = (bumped[-2] - bumped[-1]) / (2 * h)
        bumped.pop()
    vega, rho = bumped
    delta = (uu - dd) / (s * u2 - s / u2)
    gamma = ((uu - ud) / (s * u2 - s) - (ud - dd) / (s - s / u2)) / (0.5 * (s * u2 - s / u2))
    theta = (ud - prices) / (2 * dt)
    methods = {"delta": "lattice nodes two levels down (central difference)",
               "gamma": "lattice nodes two levels down (second difference)",
               "theta": "lattice: the middle node two levels down (same spot, 2 dt later)",
               "vega": f"bump and reprice the lattice, vol x (1 +- {LATTICE_VOL_BUMP:g})",
               "rho": f"bump and reprice the lattice, rate +- {LATTICE_RATE_BUMP:g}"}
    values = {"delta": delta, "gamma": gamma, "vega": vega, "theta": theta, "rho": rho}
    greeks = [{name: {"value": float(values[name][i]), "stderr": None,
                      "method": methods[name]} for name in GREEK_NAMES} for i in range(n)]
    return [float(p) for p in prices], greeks, seconds


def reference_price(spec: Spec) -> Reference:
    """An independent value to compare with: never the method that priced. Every one
    takes the dividend yield.

    - European payoffs (Monte Carlo and lattice): Black-Scholes, exact.
    - American call without dividends: Black-Scholes too (a call on an asset paying no
      dividend is never exercised early, so the American and European calls are worth
      the same), exact; with a dividend yield, the trinomial lattice as for the put.
    - American put: the trinomial lattice (another discretisation than the binomial
      lattice the pricer uses on every device), 2 x steps levels within 4096..16384;
      its error is estimated as the change from half as many levels (O(1/n)).
    - Asian: numpy Monte Carlo (numpy's own generator, 100,000 paths) with the
      geometric-average control variate; its standard error.
    - Everest: numpy Monte Carlo, 100,000 paths; its standard error.
    """
    args = (spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity)
    if spec.product in ("european-call", "european-put", "binomial-call", "binomial-put"):
        return Reference(reference.black_scholes(*args, put=spec.put, div=spec.div),
                         "Black-Scholes closed form", 0.0)
    if spec.product == "american-call" and spec.div == 0:
        return Reference(reference.black_scholes(*args), "Black-Scholes closed form (an "
                         "American call without dividends is never exercised early)", 0.0)
    if spec.product == "asian-call":
        est = reference.mc_asian_call(*args, spec.steps_or_default(), REFERENCE_PATHS,
                                      seed=spec.seed, div=spec.div)
        return Reference(est.price, f"numpy Monte Carlo, {REFERENCE_PATHS:,} paths, "
                         "geometric control variate", est.stderr)
    if spec.product == "everest":
        est = reference.mc_everest(spec.rate, spec.asset_vols(), spec.maturity,
                                   spec.corr_matrix, REFERENCE_PATHS, seed=spec.seed,
                                   notional=spec.spot, div=spec.asset_divs())
        return Reference(est.price, f"numpy Monte Carlo, {REFERENCE_PATHS:,} paths",
                         est.stderr)
    lo, hi = TRINOMIAL_STEPS
    n = min(hi, max(lo, 2 * spec.steps_or_default()))
    fine = reference.trinomial(*args, n, put=spec.put, american=True, div=spec.div)
    coarse = reference.trinomial(*args, n // 2, put=spec.put, american=True, div=spec.div)
    return Reference(fine, f"trinomial lattice (Kamrad-Ritchken), {n} steps, float64",
                     abs(fine - coarse))


def reference_greeks(spec: Spec) -> dict | None:
    """Closed-form Greeks to compare with, where one exists: Black-Scholes (with the
    dividend yield) for European payoffs, and for the American call without dividends
    (worth the European call). None for the other products."""
    if spec.product in ("european-call", "european-put", "binomial-call", "binomial-put") \
            or (spec.product == "american-call" and spec.div == 0):
        return reference.bs_greeks(spec.spot, spec.strike, spec.rate, spec.vol,
                                   spec.maturity, put=spec.put, div=spec.div)
    return None


__all__ = ["Result", "Reference", "PricingError", "price", "price_grid", "reference_price",
           "reference_greeks", "mc_greek_method", "moments",
           "open_runner", "run_launch", "launch_ranges"]
