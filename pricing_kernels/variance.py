"""Variance reduction on the host side: the control variate's coefficient, adjusted price
and standard error, and Sobol runs as independent randomised replications.

Control variate (`Spec.control_variate`, mc.cu's CONTROL): every sample gives its payoff
y and a control c whose mean is known, and the kernels return (sum y, sum y^2), (sum c,
sum c^2), (sum y c, -). With n samples, the sample covariance s_yc and variance s_cc give
the optimal coefficient beta = s_yc / s_cc, the price ybar - beta (cbar - E[c]) and the
variance of one adjusted sample s_yy - s_yc^2 / s_cc (the estimated beta's own error is
O(1/n) and ignored). The variance-reduction factor is s_yy / (s_yy - s_yc^2 / s_cc): the
ratio of the squared standard errors without and with the control at the same paths.

- European: c = S_T, E[c] = S0 exp(mu + sig^2 / 2) for the one step's (mu, sig) the
  kernel was given (float32, as launched): the forward, S0 e^((r - q) T).
- Asian: c = the geometric-average Asian call max(G - K, 0), G = S0 exp(mean of the n
  log prices), log G normal with mean log S0 + mu (n + 1) / 2 and variance sig^2 (n + 1)
  (2n + 1) / (6 n): E[c] = e^(m + v/2) N(d1) - K N(d2) (Kemna and Vorst's closed form).

Sobol (`--rng sobol`): R = SOBOL_REPLICATIONS replications, each with its own digital
shift (gen.cuh); replication r takes the first n_r points (n_r = paths // R, one more for
the first paths mod R replications), launched as samples r * 2^32 .. (European items:
r * 2^32 .. as items, samples from r * 2^34). The price is the mean over all samples,
its standard error the standard deviation of the R replication means over sqrt(R) (with
the control variate: of the adjusted replication means, one pooled beta).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SOBOL_REPLICATIONS = 16
CV_PRODUCTS = ("european-call", "european-put", "asian-call")


@dataclass(frozen=True)
class Estimate:
    price: float  # undiscounted mean
    stderr: float
    info: dict  # what the output reports (variance_reduction)


def control_mean(spec) -> float:
    """E[c] of the control the kernel accumulates, for the (mu, sig) it is launched with."""
    from .catalog import mc_scalars  # noqa: PLC0415

    mu, sig = (float(np.float32(v)) for v in mc_scalars(spec))
    if spec.product.startswith("european"):
        return spec.spot * math.exp(mu + 0.5 * sig * sig)
    n = spec.steps_or_default()
    m = math.log(spec.spot) + mu * (n + 1) / 2
    v = sig * sig * (n + 1) * (2 * n + 1) / (6 * n)
    d1 = (m - math.log(spec.strike) + v) / math.sqrt(v)
    d2 = d1 - math.sqrt(v)
    return math.exp(m + v / 2) * _ncdf(d1) - spec.strike * _ncdf(d2)


def _ncdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def sobol_ranges(spec, paths: int) -> list[tuple[int, int]]:
    """(first sample, samples) of each replication's launch."""
    r = SOBOL_REPLICATIONS
    shift = 34 if spec.product.startswith("european") else 32
    counts = [paths // r + (i < paths % r) for i in range(r)]
    return [(i << shift, c) for i, c in enumerate(counts) if c]


def estimate(spec, groups: list[tuple[np.ndarray, np.ndarray, int]]) -> Estimate:
    """The undiscounted price and standard error from the sums of each group (one group,
    or one per Sobol replication): (s1, s2, n) with s1, s2 the pair sums of the launch
    (with the control variate three pairs: y, c, y c)."""
    cv = bool(getattr(spec, "control_variate", False))
    s1 = sum(np.asarray(g[0], dtype=np.float64) for g in groups)
    s2 = sum(np.asarray(g[1], dtype=np.float64) for g in groups)
    n = sum(g[2] for g in groups)
    ybar = s1[0] / n
    var_y = max(0.0, (s2[0] - n * ybar * ybar) / (n - 1)) if n > 1 else float("nan")
    info: dict = {}
    beta = 0.0
    price, var_one = ybar, var_y
    if cv:
        ec = control_mean(spec)
        cbar = s1[1] / n
        var_c = max(0.0, (s2[1] - n * cbar * cbar) / (n - 1))
        cov = (s1[2] - n * ybar * cbar) / (n - 1)
        beta = float(cov / var_c) if var_c > 0 else 0.0
        price = ybar - beta * (cbar - ec)
        var_one = max(0.0, var_y - beta * cov)
        info = {"control": "S_T (the forward)" if spec.product.startswith("european")
                else "geometric-average Asian call (closed form)",
                "control_mean": ec, "beta": beta,
                "correlation": float(cov / math.sqrt(var_y * var_c)) if var_y * var_c > 0
                else 0.0}
    iid_plain = math.sqrt(var_y / n)
    if len(groups) > 1:  # Sobol replications
        means = np.array([g[0][0] / g[2] - (beta * (g[0][1] / g[2] - info["control_mean"])
                                            if cv else 0.0) for g in groups])
        plain = np.array([g[0][0] / g[2] for g in groups])
        r = len(groups)
        stderr = float(means.std(ddof=1) / math.sqrt(r))
        plain_se = float(plain.std(ddof=1) / math.sqrt(r))
        info.update({"replications": r, "stderr_iid_formula": iid_plain,
                     "stderr_without_control": plain_se})
    else:
        stderr = math.sqrt(var_one / n)
        plain_se = iid_plain
        if cv:
            info["stderr_without_control"] = plain_se
    if cv:
        info["factor"] = plain_se ** 2 / stderr ** 2 if stderr > 0 else float("inf")
    return Estimate(float(price), float(stderr), info)


__all__ = ["Estimate", "estimate", "control_mean", "sobol_ranges", "SOBOL_REPLICATIONS",
           "CV_PRODUCTS"]


def monte_carlo(spec, strikes, paths: int, runner, lint: bool, records: list, progress,
                run_launch) -> tuple[list, float]:
    """The pricer's Monte Carlo for a run with the control variate or Sobol points (one
    strike, no Greeks): [(discounted price, stderr, None, info)] and the kernel seconds.
    Each Sobol replication is one launch (its sums are kept apart); otherwise the
    launches are the pricer's (`pricer.launch_ranges`). `run_launch` is the pricer's."""
    from . import catalog, cpu  # noqa: PLC0415
    from .pricer import PricingError, launch_ranges  # noqa: PLC0415

    if len(strikes) != 1 or spec.greeks:
        from .spec import InputError  # noqa: PLC0415

        raise InputError("--control-variate and --rng sobol price one strike, without "
                         "--greeks")
    pairs = catalog.mc_values(spec)
    sobol = spec.rng == "sobol"
    ranges = sobol_ranges(spec, paths) if sobol else launch_ranges(spec, paths, runner)
    groups, seconds = [], 0.0
    partials = []
    for done, (first, count) in enumerate(ranges):
        if runner is None:
            s1, s2 = cpu.mc_sums_n(spec, count, None, first)
            groups.append((s1, s2, count))
        else:
            out, t = run_launch(runner, catalog.mc_launch(spec, count, first), lint, records)
            part = out["partial"].reshape(pairs, -1)  # [pair][block]
            partials.append(part)
            groups.append((part[:, 0::2].sum(axis=1), part[:, 1::2].sum(axis=1), count))
            seconds += t
        if progress is not None:
            progress(done + 1, len(ranges))
    if runner is not None:  # the totals through the device's pass two, as the pricer does
        out, t = run_launch(runner, catalog.reduce_launch(
            np.concatenate(partials, axis=1).reshape(-1), pairs), lint, records)
        seconds += t
        total = (out["result"][0::2], out["result"][1::2], paths)
        if not sobol:
            groups = [total]
    sums = np.concatenate([np.concatenate([g[0], g[1]]) for g in groups])
    if not np.all(np.isfinite(sums)):
        raise PricingError(f"the {spec.product} kernel returned a sum that is not finite: "
                           "no price")
    est = estimate(spec, groups)
    disc = math.exp(-spec.rate * spec.maturity)
    notional = spec.spot if spec.product == "everest" else 1.0
    scale = disc * notional
    info = dict(est.info)
    for key in ("stderr_without_control", "stderr_iid_formula"):
        if key in info:
            info[key] *= scale
    if "control_mean" in info:
        info["control_mean"] *= disc  # discounted: the control's price
    return [(scale * est.price, scale * est.stderr, None, info)], seconds
