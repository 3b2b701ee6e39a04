"""An independent rounding oracle for the float tests: the exact result as a Fraction,
rounded by enumerating the target format's neighbours of a nearby value and comparing
exactly (no use of the emulator's rounding code)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

DT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def _bf16_neighbours(x: float) -> list[float]:
    bits = int(np.array(x, np.float32).view(np.uint32)) >> 16
    out = []
    for b in range(bits - 2, bits + 3):
        b &= 0xFFFF
        v = float(np.array(b << 16, np.uint32).view(np.float32))
        if math.isfinite(v):
            out.append(v)
    return out


def neighbours(x: Fraction, fmt: str) -> list[float]:
    """Finite values of `fmt` around x (at least two on each side unless at the edge)."""
    try:
        seed = float(x)
    except OverflowError:
        seed = float(np.finfo(np.float64).max) * (1.0 if x > 0 else -1.0)
    if fmt == "bf16":
        return sorted(set(_bf16_neighbours(seed)))
    dt = DT[fmt]
    with np.errstate(over="ignore"):
        s = dt(seed)
    return _around(s, seed, dt)


def _around(s, seed, dt) -> list[float]:
    if not np.isfinite(s):
        s = np.finfo(dt).max * np.sign(seed)
        s = dt(s)
    vals = {s}
    up, down = s, s
    with np.errstate(over="ignore"):
        for _ in range(3):
            up = np.nextafter(up, dt(np.inf))
            down = np.nextafter(down, dt(-np.inf))
            vals |= {up, down}
    return sorted(float(v) for v in vals if np.isfinite(v))


def _toward_zero(v: float, fmt: str) -> float:
    if fmt == "bf16":
        bits = int(np.array(v, np.float32).view(np.uint32)) >> 16
        return float(np.array((bits - 1) << 16, np.uint32).view(np.float32))
    dt = DT[fmt]
    return float(np.nextafter(dt(v), dt(0)))


def _even(v: float, fmt: str) -> bool:
    if fmt == "bf16":
        return (int(np.array(v, np.float32).view(np.uint32)) >> 16) & 1 == 0
    dt = DT[fmt]
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dt).itemsize]
    return int(np.array(v, dt).view(u)) & 1 == 0


def exact_round(x: Fraction, fmt: str, mode: str) -> float:
    """x rounded to fmt; +-inf on overflow where the mode says so (finite x only)."""
    cands = neighbours(x, fmt)
    below = [v for v in cands if Fraction(v) <= x]
    above = [v for v in cands if Fraction(v) >= x]
    lo = max(below) if below else -math.inf
    hi = min(above) if above else math.inf
    if lo == hi:
        return lo
    if mode == "rm":
        return lo
    if mode == "rp":
        return hi
    if mode == "rz":
        return lo if x > 0 else hi
    if math.isinf(lo) or math.isinf(hi):  # beyond the largest finite value
        big = lo if math.isinf(hi) else hi
        prev = _toward_zero(big, fmt)
        edge = Fraction(abs(big)) + (Fraction(abs(big)) - Fraction(abs(prev))) / 2
        if abs(x) >= edge:
            return math.inf if x > 0 else -math.inf
        return big
    dl, dh = x - Fraction(lo), Fraction(hi) - x
    if dl < dh:
        return lo
    if dh < dl:
        return hi
    if mode == "rna":
        return hi if x > 0 else lo
    return lo if _even(lo, fmt) else hi
