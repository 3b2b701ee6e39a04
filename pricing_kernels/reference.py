"""Reference prices in numpy (float64), independent of the kernels.

Every model has a continuous dividend yield `div` (q, default 0): the risk-neutral drift
of the asset is r - q. Closed forms: Black-Scholes for European calls and puts and their
Greeks (`bs_greeks`); the geometric-average Asian call with discrete monitoring, also
used as a control variate. Monte Carlo with numpy's
own generator: arithmetic Asian (with the geometric control variate) and the Everest
note. Binomial lattice (Cox-Ross-Rubinstein) for European and American options, which
converges to Black-Scholes as the steps grow, and a trinomial lattice (Kamrad-Ritchken):
a different discretisation, the independent reference for American puts.

The host twins of the device generators (Philox, MT19937, LCG, Box-Muller) live in
`pricing_kernels.rng` and are re-exported here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .rng import (
    lcg_draws,
    mt19937,
    mt_seed,
    mt_twist,
    normal4_paired,
    normal4_thread,
    philox4x32_10,  # noqa: F401  (re-exported: the host generator twins)
    uniform01,
)


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate: mean and standard error of the mean."""

    price: float
    stderr: float

    @property
    def ci95(self) -> tuple[float, float]:
        return (self.price - 1.96 * self.stderr, self.price + 1.96 * self.stderr)


def norm_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def norm_pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _d1_d2(spot, strike, rate, vol, maturity, div):
    sd = vol * math.sqrt(maturity)
    d1 = (math.log(spot / strike) + (rate - div + 0.5 * vol * vol) * maturity) / sd
    return d1, d1 - sd


def black_scholes(spot: float, strike: float, rate: float, vol: float, maturity: float,
                  put: bool = False, div: float = 0.0) -> float:
    """The Black-Scholes price of a European call (or put) on an asset with continuous
    dividend yield `div`."""
    d1, d2 = _d1_d2(spot, strike, rate, vol, maturity, div)
    disc, carry = math.exp(-rate * maturity), math.exp(-div * maturity)
    if put:
        return strike * disc * norm_cdf(-d2) - spot * carry * norm_cdf(-d1)
    return spot * carry * norm_cdf(d1) - strike * disc * norm_cdf(d2)


GREEKS = ("delta", "gamma", "vega", "theta", "rho")


def bs_greeks(spot: float, strike: float, rate: float, vol: float, maturity: float,
              put: bool = False, div: float = 0.0) -> dict[str, float]:
    """Black-Scholes Greeks of a European call (or put) with dividend yield `div`:
    delta = dV/dS, gamma = d2V/dS2, vega = dV/dvol, rho = dV/dr (per unit, not per
    1%), theta = -dV/dT (the change per year of calendar time, usually negative)."""
    d1, d2 = _d1_d2(spot, strike, rate, vol, maturity, div)
    disc, carry = math.exp(-rate * maturity), math.exp(-div * maturity)
    sq = math.sqrt(maturity)
    gamma = carry * norm_pdf(d1) / (spot * vol * sq)
    vega = spot * carry * norm_pdf(d1) * sq
    decay = -spot * carry * norm_pdf(d1) * vol / (2.0 * sq)
    if put:
        return {"delta": -carry * norm_cdf(-d1), "gamma": gamma, "vega": vega,
                "theta": decay + rate * strike * disc * norm_cdf(-d2)
                - div * spot * carry * norm_cdf(-d1),
                "rho": -strike * maturity * disc * norm_cdf(-d2)}
    return {"delta": carry * norm_cdf(d1), "gamma": gamma, "vega": vega,
            "theta": decay - rate * strike * disc * norm_cdf(d2)
            + div * spot * carry * norm_cdf(d1),
            "rho": strike * maturity * disc * norm_cdf(d2)}


def geometric_asian_moments(spot: float, rate: float, vol: float, maturity: float,
                            steps: int, div: float = 0.0) -> tuple[float, float]:
    """Mean and variance of log G, G the geometric average of the prices at
    t_i = i T / n, i = 1..n: log G = log S + (r - q - vol^2/2) T (n+1)/(2n) + vol * sum
    of Brownian increments weighted (n - i + 1)/n, whose variance is
    vol^2 T (n+1)(2n+1) / (6 n^2)."""
    n = steps
    mean = math.log(spot) + (rate - div - 0.5 * vol * vol) * maturity * (n + 1) / (2 * n)
    var = vol * vol * maturity * (n + 1) * (2 * n + 1) / (6 * n * n)
    return mean, var


def geometric_asian_call(spot: float, strike: float, rate: float, vol: float,
                         maturity: float, steps: int, div: float = 0.0) -> float:
    """Closed form of the discretely monitored geometric-average Asian call (dividend
    yield `div`)."""
    mean, var = geometric_asian_moments(spot, rate, vol, maturity, steps, div)
    sd = math.sqrt(var)
    d2 = (mean - math.log(strike)) / sd
    d1 = d2 + sd
    return math.exp(-rate * maturity) * (math.exp(mean + 0.5 * var) * norm_cdf(d1)
                                         - strike * norm_cdf(d2))


def _log_paths(rng: np.random.Generator, paths: int, steps: int, rate: float, vol: float,
               maturity: float, div: float = 0.0) -> np.ndarray:
    dt = maturity / steps
    z = rng.standard_normal((paths, steps))
    return np.cumsum((rate - div - 0.5 * vol * vol) * dt + vol * math.sqrt(dt) * z, axis=1)


def mc_geometric_asian(spot: float, strike: float, rate: float, vol: float, maturity: float,
                       steps: int, paths: int, seed: int = 0, div: float = 0.0) -> Estimate:
    """Plain Monte Carlo of the geometric Asian call (a check of the closed form)."""
    rng = np.random.default_rng(seed)
    disc = math.exp(-rate * maturity)
    payoff = np.empty(paths)
    for lo, hi in _chunks(paths, steps):
        x = _log_paths(rng, hi - lo, steps, rate, vol, maturity, div)
        payoff[lo:hi] = np.maximum(spot * np.exp(x.mean(axis=1)) - strike, 0.0)
    return _estimate(disc * payoff)


def mc_asian_call(spot: float, strike: float, rate: float, vol: float, maturity: float,
                  steps: int, paths: int, seed: int = 0,
                  control_variate: bool = True, div: float = 0.0) -> Estimate:
    """Arithmetic-average Asian call by Monte Carlo; with `control_variate`, the
    geometric payoff of the same path, whose mean is known in closed form, removes most
    of the variance (the coefficient is estimated from the same paths)."""
    rng = np.random.default_rng(seed)
    disc = math.exp(-rate * maturity)
    arith, geo = np.empty(paths), np.empty(paths)
    for lo, hi in _chunks(paths, steps):
        s = spot * np.exp(_log_paths(rng, hi - lo, steps, rate, vol, maturity, div))
        arith[lo:hi] = np.maximum(s.mean(axis=1) - strike, 0.0)
        geo[lo:hi] = np.maximum(np.exp(np.log(s).mean(axis=1)) - strike, 0.0)
    arith *= disc
    geo *= disc
    if not control_variate:
        return _estimate(arith)
    cov = np.cov(arith, geo)
    beta = cov[0, 1] / cov[1, 1] if cov[1, 1] > 0 else 0.0
    exact = geometric_asian_call(spot, strike, rate, vol, maturity, steps, div)
    return _estimate(arith - beta * (geo - exact))


def mc_everest(rate: float, vol, maturity: float, corr: np.ndarray, paths: int,
               seed: int = 0, notional: float = 1.0, div=0.0) -> Estimate:
    """The Everest note: notional * max(1, worst of S_i(T)/S_i(0)) at maturity, assets
    with correlation matrix `corr` and volatility and dividend yield `vol`, `div` (one
    value for all assets or one per asset)."""
    rng = np.random.default_rng(seed)
    chol = np.linalg.cholesky(corr)
    n = corr.shape[0]
    vol = np.broadcast_to(np.asarray(vol, dtype=np.float64), (n,))
    div = np.broadcast_to(np.asarray(div, dtype=np.float64), (n,))
    mu, sig = (rate - div - 0.5 * vol * vol) * maturity, vol * math.sqrt(maturity)
    payoff = np.empty(paths)
    for lo, hi in _chunks(paths, n):
        w = rng.standard_normal((hi - lo, n)) @ chol.T
        payoff[lo:hi] = np.maximum(np.exp(mu + sig * w).min(axis=1), 1.0)
    return _estimate(notional * math.exp(-rate * maturity) * payoff)


def mc_european(spot: float, strike: float, rate: float, vol: float, maturity: float,
                paths: int, seed: int = 0, put: bool = False, div: float = 0.0) -> Estimate:
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(paths)
    s = spot * np.exp((rate - div - 0.5 * vol * vol) * maturity
                      + vol * math.sqrt(maturity) * z)
    payoff = np.maximum(strike - s, 0.0) if put else np.maximum(s - strike, 0.0)
    return _estimate(math.exp(-rate * maturity) * payoff)


def crr_parameters(rate: float, vol: float, maturity: float, steps: int, div: float = 0.0
                   ) -> tuple[float, float, float]:
    """(log u, discounted up probability, discounted down probability) of the
    Cox-Ross-Rubinstein lattice: u = exp(vol sqrt(dt)), d = 1/u,
    p = (exp((r - q) dt) - d) / (u - d), discount exp(-r dt). ValueError when p is
    outside (0, 1)."""
    dt = maturity / steps
    log_u = vol * math.sqrt(dt)
    u, d = math.exp(log_u), math.exp(-log_u)
    p = (math.exp((rate - div) * dt) - d) / (u - d)
    if not 0.0 < p < 1.0:
        raise ValueError(f"the lattice's up probability {p:.4g} is outside (0, 1): use more "
                         "steps or a higher volatility")
    disc = math.exp(-rate * dt)
    return log_u, disc * p, disc * (1.0 - p)


def binomial(spot: float, strike: float, rate: float, vol: float, maturity: float,
             steps: int, put: bool = False, american: bool = False, div: float = 0.0) -> float:
    """The CRR lattice price, vectorised over each level."""
    log_u, pu, pd = crr_parameters(rate, vol, maturity, steps, div)
    sign = -1.0 if put else 1.0

    def exercise(level: int) -> np.ndarray:
        s = spot * np.exp(log_u * (2.0 * np.arange(level + 1) - level))
        return np.maximum(sign * (s - strike), 0.0)

    v = exercise(steps)
    for level in range(steps - 1, -1, -1):
        v = pu * v[1:] + pd * v[:-1]
        if american:
            v = np.maximum(v, exercise(level))
    return float(v[0])


def trinomial(spot: float, strike: float, rate: float, vol: float, maturity: float,
              steps: int, put: bool = False, american: bool = False, div: float = 0.0
              ) -> float:
    """The Kamrad-Ritchken trinomial lattice: log-price moves of +-dx or 0 per step with
    dx = lam vol sqrt(dt), lam = sqrt(3/2) (so the middle probability is 1/3), and up and
    down probabilities matching the drift (r - q - vol^2 / 2) dt; converges in O(1/n) like
    the binomial lattice, but on other nodes. ValueError when a probability leaves
    (0, 1) (too few steps for the drift)."""
    dt = maturity / steps
    lam = math.sqrt(1.5)
    dx = lam * vol * math.sqrt(dt)
    drift = (rate - div - 0.5 * vol * vol) * math.sqrt(dt) / (2.0 * lam * vol)
    pu, pm, pd = 0.5 / lam**2 + drift, 1.0 - 1.0 / lam**2, 0.5 / lam**2 - drift
    if not (0.0 < pu < 1.0 and 0.0 < pd < 1.0):
        raise ValueError(f"the trinomial lattice's probabilities ({pu:.3g}, {pd:.3g}) leave "
                         "(0, 1): use more steps")
    disc = math.exp(-rate * dt)
    sign = -1.0 if put else 1.0
    prices = spot * np.exp(dx * np.arange(-steps, steps + 1))  # node k of any level
    exercise = np.maximum(sign * (prices - strike), 0.0)
    v = exercise.copy()
    for level in range(steps - 1, -1, -1):
        v = disc * (pu * v[2:] + pm * v[1:-1] + pd * v[:-2])
        if american:
            v = np.maximum(v, exercise[steps - level:steps + level + 1])
    return float(v[0])


def _estimate(samples: np.ndarray) -> Estimate:
    n = samples.size
    sd = float(samples.std(ddof=1)) if n > 1 else 0.0
    return Estimate(float(samples.mean()), sd / math.sqrt(n))


def _chunks(paths: int, width: int, budget: int = 1 << 22):
    """[lo, hi) ranges of paths whose (paths x width) arrays stay near `budget` numbers."""
    step = max(1, budget // max(1, width))
    for lo in range(0, paths, step):
        yield lo, min(paths, lo + step)


__all__ = ["Estimate", "black_scholes", "bs_greeks", "GREEKS", "norm_pdf",
           "geometric_asian_call", "geometric_asian_moments",
           "mc_geometric_asian", "mc_asian_call", "mc_everest", "mc_european", "binomial",
           "crr_parameters", "trinomial", "norm_cdf", "philox4x32_10", "mt19937", "mt_seed",
           "mt_twist", "lcg_draws", "uniform01", "normal4_thread", "normal4_paired"]
