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
from .catalog import BLOCK, gen_state, mc_grid, mc_items, mc_scalars
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
        z = rng.normal4_paired(w) if self.paired else rng.normal4_thread(w)
        return z.astype(np.float64)


def mc_sums(spec: Spec, samples: int, progress: Progress | None = None, first: int = 0
            ) -> tuple[float, float]:
    """The undiscounted (sum, sum of squares) of the payoffs of the samples
    [first, first + samples), as the two reduction passes of the device return them for
    `catalog.mc_launch(spec, samples, first)`."""
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
        values, valid = payoff(spec, gen, item, samples)
        values = np.where(valid, values, 0.0)
        s1 += float(values.sum())
        s2 += float((values * values).sum())
        if progress is not None:
            progress(r + 1, rounds)
    return s1, s2


def _vanilla(s: np.ndarray, spec: Spec) -> np.ndarray:
    return np.maximum(spec.strike - s, 0.0) if spec.put else np.maximum(s - spec.strike, 0.0)


def _european(spec: Spec, gen: HostGen, item: np.ndarray, samples: int):
    """Item i covers samples 4i .. 4i+3, one per normal of its draw."""
    mu, sig = mc_scalars(spec)
    z = gen.normal4()  # (4, T)
    p = _vanilla(spec.spot * np.exp(mu + sig * z), spec)
    if spec.antithetic:
        p = 0.5 * (p + _vanilla(spec.spot * np.exp(mu - sig * z), spec))
    valid = 4 * item[None, :] + np.arange(4)[:, None] < samples
    return p, valid


def _asian(spec: Spec, gen: HostGen, item: np.ndarray, samples: int):
    mu, sig = mc_scalars(spec)
    steps = spec.steps_or_default()
    x = np.zeros(item.size)
    xa, total, total_a = x.copy(), x.copy(), x.copy()
    for k in range(0, steps, 4):
        z = gen.normal4()
        for j in range(min(4, steps - k)):
            x += mu + sig * z[j]
            xa += mu - sig * z[j]
            total += np.exp(x)
            total_a += np.exp(xa)
    p = np.maximum(spec.spot * total / steps - spec.strike, 0.0)
    if spec.antithetic:
        p = 0.5 * (p + np.maximum(spec.spot * total_a / steps - spec.strike, 0.0))
    return p, item < samples


def _everest(spec: Spec, gen: HostGen, item: np.ndarray, samples: int):
    mu, sig = mc_scalars(spec)
    n = spec.assets
    z = np.concatenate([gen.normal4() for _ in range(-(-n // 4))])[:n]  # (n, T)
    chol = np.linalg.cholesky(spec.corr_matrix).astype(np.float32).astype(np.float64)
    w = chol @ z
    p = np.maximum(np.exp(mu + sig * w).min(axis=0), 1.0)
    if spec.antithetic:
        p = 0.5 * (p + np.maximum(np.exp(mu - sig * w).min(axis=0), 1.0))
    return p, item < samples


__all__ = ["HostGen", "mc_sums"]
