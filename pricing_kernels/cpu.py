"""The CPU path: the Monte Carlo kernels of mc.cu re-enacted in numpy, thread for thread.

The grid is the one the GPU would get (`catalog.mc_grid`), thread t handles items t,
t + T, t + 2T, ... (T threads), and each thread draws from the same generator stream as
on the device, so the numbers a sample uses are the device's (to float32 rounding of the
Box-Muller step). Arithmetic after the normals is float64. Work goes one grid-stride
round at a time, vectorised over the T threads; `progress(done, total)` is called after
each round. Sample indices are 64-bit, as on the device: the Philox counter of sample s
is (draw, s mod 2^32, s div 2^32, 0).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import rng
from .catalog import (BLOCK, everest_asset, gen_state, greek_coef, mc_grid, mc_items,
                      mc_scalars)
from .spec import Spec

Progress = Callable[[int, int], None]


class HostGen:
    """The host twin of gen.cuh for T threads: `sample(items)` starts the items of a
    round, `normal4()` returns four normals per thread, shape (4, T)."""

    def __init__(self, spec: Spec, threads: int) -> None:
        self.kind, self.threads = spec.rng, threads
        self.paired = spec.normals == "paired"
        self.key = rng.seed_key(spec.seed)
        state = gen_state(spec, threads)
        if self.kind == "mt":
            self.state = state.reshape(-1, rng.MT_N).copy()
            self.pos = rng.MT_ROUNDS * 32  # the first draw twists, as after seeding
        elif self.kind == "sobol":  # direction numbers (and bridge schedule) from state
            self.state = state[state[0]:].reshape(-1, 32)
            self.steps = spec.steps_or_default()
        else:
            self.state = state.copy()
        self.items = np.arange(threads, dtype=np.uint64)
        self.draw = 0

    def sample(self, items: np.ndarray) -> None:
        self.items, self.draw = items.astype(np.uint64), 0

    def words(self) -> np.ndarray:
        """Four words per thread: one `draw4`."""
        if self.kind == "philox":
            lo = self.items & np.uint64(0xFFFFFFFF)
            w = rng.philox4x32_10((self.draw, lo, self.items >> np.uint64(32), 0), self.key)
            self.draw += 1
            return w
        if self.kind == "lcg":
            w, self.state = rng.lcg_draws(self.state, 4)
            return w
        if self.kind == "sobol":
            w = rng.sobol_words(self.items, self.draw, self.key, self.state)
            self.draw += 1
            return w
        if self.kind == "mt607":
            w, self.pos = rng.mt607_draws(self.state, 4, getattr(self, "pos", 0))
            return w
        return np.stack([self._mt_next() for _ in range(4)])

    def _mt_next(self) -> np.ndarray:
        if self.pos == rng.MT_ROUNDS * 32:
            rng.mt_twist(self.state)
            self.pos = 0
        out = rng.mt_temper(self.state[:, self.pos:self.pos + 32]).reshape(-1)
        self.pos += 32
        return out

    def normal4(self) -> np.ndarray:
        w = self.words()
        if self.kind == "sobol":  # the inverse transform (NORMALS is ignored)
            return rng.normal4_icdf(w).astype(np.float64)
        z = rng.normal4_paired(w) if self.paired else rng.normal4_thread(w)
        return z.astype(np.float64)

    def bridge_normals(self, steps: int) -> np.ndarray:
        """Sobol, Asian: the path's standardised increments from the Brownian bridge
        (gen.cuh sobol_bridge, bridge4), shape (steps rounded up to 4, T); 0 past the
        last step."""
        z = np.concatenate([rng.normal4_icdf(self.words()) for _ in range(-(-steps // 4))])
        inc = rng.bridge_increments(z[:steps], rng.bridge_schedule(steps))
        pad = np.zeros((z.shape[0] - steps, inc.shape[1]), dtype=inc.dtype)
        return np.concatenate([inc, pad]).astype(np.float64)


def mc_sums(spec: Spec, samples: int, progress: Progress | None = None, first: int = 0
            ) -> tuple[float, float]:
    """The undiscounted (sum, sum of squares) of the payoffs of the samples
    [first, first + samples), as the two reduction passes of the device return them for
    `catalog.mc_launch(spec, samples, first)`."""
    s1, s2 = mc_sums_n(spec, samples, progress, first)
    return float(s1[0]), float(s2[0])


def mc_sums_n(spec: Spec, samples: int, progress: Progress | None = None, first: int = 0,
              strikes=None) -> tuple[np.ndarray, np.ndarray]:
    """Every (sum, sum of squares) pair of `catalog.mc_launch(spec, samples, first,
    strikes)`: value g (the payoff, then with Greeks the five estimators of mc.cu, in
    `catalog.GREEK_NAMES` order) of strike j is pair j * values + g."""
    strikes = np.atleast_1d(np.asarray(spec.strike if strikes is None else strikes,
                                       dtype=np.float64))
    items = mc_items(spec, samples)
    threads = mc_grid(items) * BLOCK
    gen = HostGen(spec, threads)
    payoff = {"european-call": _european, "european-put": _european,
              "asian-call": _asian, "everest": _everest}[spec.product]
    offset = first // 4 if spec.product.startswith("european") else first
    rounds = -(-items // threads)
    s1 = s2 = 0.0
    for r in range(rounds):
        item = r * threads + np.arange(threads, dtype=np.int64)
        gen.sample(item + offset)
        values, valid = payoff(spec, gen, item, samples, strikes)  # (pairs, ...)
        values = np.where(valid, values, 0.0)
        axes = tuple(range(1, values.ndim))
        s1 = s1 + values.sum(axis=axes)
        s2 = s2 + (values * values).sum(axis=axes)
        if progress is not None:
            progress(r + 1, rounds)
    return np.asarray(s1, dtype=np.float64), np.asarray(s2, dtype=np.float64)


def _stack(per_strike: list[list[np.ndarray]]) -> np.ndarray:
    return np.stack([v for values in per_strike for v in values])


def _european_values(z, st, k, put, c, greeks):
    """mc.cu's european_values in float64 (c: catalog.greek_coef)."""
    p = np.maximum(k - st, 0.0) if put else np.maximum(st - k, 0.0)
    if not greeks:
        return [p]
    inside = np.where(p > 0, -1.0 if put else 1.0, 0.0)
    e = inside * st
    return [p, e * c[0], e * (z * c[1] - c[2]), e * (z * c[3] - c[4]),
            c[6] * p - e * (c[7] + z * c[8]), inside * k * c[5]]


def _european(spec: Spec, gen: HostGen, item: np.ndarray, samples: int, strikes):
    """Item i covers samples 4i .. 4i+3, one per normal of its draw."""
    mu, sig = mc_scalars(spec)
    c = greek_coef(spec).astype(np.float64)
    z = gen.normal4()  # (4, T)
    st, sta = spec.spot * np.exp(mu + sig * z), spec.spot * np.exp(mu - sig * z)
    out = []
    for k in strikes:
        v = _european_values(z, st, k, spec.put, c, spec.greeks)
        if spec.antithetic:
            w = _european_values(-z, sta, k, spec.put, c, spec.greeks)
            v = [0.5 * (a + b) for a, b in zip(v, w)]
        out.append(v)
    if spec.control_variate:  # mc.cu CONTROL: the control S_T and the product
        ctl = 0.5 * (st + sta) if spec.antithetic else st
        out[0] += [ctl, out[0][0] * ctl]
    valid = 4 * item[None, :] + np.arange(4)[:, None] < samples
    return _stack(out), valid


def _asian_values(total, et, ex, z1, spot, k, steps, c, greeks):
    """mc.cu's asian_values in float64."""
    p = np.maximum(spot * total / steps - k, 0.0)
    if not greeks:
        return [p]
    inside = (p > 0).astype(np.float64)
    a = inside * total / steps
    return [p, a, a * (z1 * c[0] - c[1]), inside * (ex * c[2] - et * c[3]),
            c[6] * p - inside * (ex + c[8] * et) * c[7], inside * et * c[4] - c[5] * p]


def _asian(spec: Spec, gen: HostGen, item: np.ndarray, samples: int, strikes):
    mu, sig = mc_scalars(spec)
    c = greek_coef(spec).astype(np.float64)
    steps = spec.steps_or_default()
    dt = spec.maturity / steps
    x = np.zeros(item.size)
    xa, total, total_a = x.copy(), x.copy(), x.copy()
    et, ex, eta, exa, z1 = x.copy(), x.copy(), x.copy(), x.copy(), x.copy()
    lx, lxa = x.copy(), x.copy()  # sums of the log prices (control variate)
    bridge = gen.bridge_normals(steps) if gen.kind == "sobol" else None
    for k in range(0, steps, 4):
        z = bridge[k:k + 4] if bridge is not None else gen.normal4()
        if k == 0:
            z1 = z[0]
        for j in range(min(4, steps - k)):
            t = (k + j + 1) * dt
            x += mu + sig * z[j]
            xa += mu - sig * z[j]
            e, ea = np.exp(x), np.exp(xa)
            total += e
            total_a += ea
            lx += x
            lxa += xa
            if spec.greeks:
                et += e * t
                ex += e * x
                eta += ea * t
                exa += ea * xa
    out = []
    for k in strikes:
        v = _asian_values(total, et, ex, z1, spec.spot, k, steps, c, spec.greeks)
        if spec.antithetic:
            w = _asian_values(total_a, eta, exa, -z1, spec.spot, k, steps, c, spec.greeks)
            v = [0.5 * (a + b) for a, b in zip(v, w)]
        out.append(v)
    if spec.control_variate:  # mc.cu CONTROL: the geometric-average Asian call
        k = strikes[0]
        ctl = np.maximum(spec.spot * np.exp(lx / steps) - k, 0.0)
        if spec.antithetic:
            ctl = 0.5 * (ctl + np.maximum(spec.spot * np.exp(lxa / steps) - k, 0.0))
        out[0] += [ctl, out[0][0] * ctl]
    return _stack(out), item < samples


def _everest_values(w, x, a, greeks):
    """mc.cu's Everest values from the correlated normals w and performances x, shape
    (n, T); a: catalog.everest_asset."""
    n = w.shape[0]
    worst_i = x.argmin(axis=0)
    cols = np.arange(x.shape[1])
    worst = x[worst_i, cols]
    p = np.maximum(worst, 1.0)
    if not greeks:
        return [p]
    ww = w[worst_i, cols]
    vt, m, th = a[2 * n:3 * n][worst_i], a[3 * n:4 * n][worst_i], a[4 * n:5 * n][worst_i]
    sqrt_t, big_t, rate = a[5 * n:5 * n + 3]
    inside = np.where(worst > 1.0, worst, 0.0)
    return [p, p, np.zeros_like(p), inside * (sqrt_t * ww - vt),
            rate * p - inside * (m + th * ww), big_t * (inside - p)]


def _everest(spec: Spec, gen: HostGen, item: np.ndarray, samples: int, strikes):
    n = spec.assets
    a = everest_asset(spec).astype(np.float64)
    mu, sig = a[:n, None], a[n:2 * n, None]
    z = np.concatenate([gen.normal4() for _ in range(-(-n // 4))])[:n]  # (n, T)
    chol = np.linalg.cholesky(spec.corr_matrix).astype(np.float32).astype(np.float64)
    w = chol @ z
    v = _everest_values(w, np.exp(mu + sig * w), a, spec.greeks)
    if spec.antithetic:
        u = _everest_values(-w, np.exp(mu - sig * w), a, spec.greeks)
        v = [0.5 * (p + q) for p, q in zip(v, u)]
    return np.stack(v), item < samples


__all__ = ["HostGen", "mc_sums", "mc_sums_n"]
