"""Hypothesis strategies and concrete helpers shared by the domain tests.

Abstract values are drawn at a width w (8 by default, so gamma is enumerable): mostly sets
inside one w-bit view, some outside any view (to exercise wrapping), some infinite. A
concrete register value is a representative integer drawn from the set; its bits are that
integer modulo 2^w, which is exactly what the abstract value denotes.
"""

from __future__ import annotations

import contextlib
import random
from fractions import Fraction
from math import trunc
from typing import Iterator

from hypothesis import strategies as st

import ptxlint.domains.strided as strided_module
from ptxlint.domains.strided import StridedInterval as SI

STRIDES = [0, 1, 1, 1, 2, 3, 4, 4, 8, 12, 16, 64]
#: A plain seeded generator: hypothesis' own randoms() costs an engine call per draw, and the
#: thousands of concrete samples per example would dominate the suite's run time.
RNG = st.integers(0, 2**32 - 1).map(random.Random)


def u(x: int, w: int) -> int:
    return x & ((1 << w) - 1)


def s(x: int, w: int) -> int:
    x = u(x, w)
    return x - (1 << w) if x >> (w - 1) else x


def view(x: int, w: int, signed: bool) -> int:
    return s(x, w) if signed else u(x, w)


def tdiv(x: int, y: int) -> int:
    """Truncating division, independent of the implementation's arithmetic."""
    return trunc(Fraction(x, y))


@st.composite
def intervals(draw, w: int = 8, infinite: bool = True, bottom: bool = True) -> SI:
    kinds = ["view"] * 10 + ["wide"] * 2 + ["mask"] * 2
    kinds += ["half", "top", "congruent"] * infinite + ["bottom"] * bottom
    kind = draw(st.sampled_from(kinds))
    if kind == "bottom":
        return SI.bottom()
    if kind == "mask":  # the constants bit tricks use: low masks, high masks, powers of two
        k = draw(st.integers(0, w))
        full = (1 << w) - 1
        return SI.const(draw(st.sampled_from([(1 << k) - 1, full ^ ((1 << k) - 1), 1 << k, -1])))
    if kind == "top":
        return SI.top()
    stride = draw(st.sampled_from(STRIDES) | st.integers(1, 1 << w))
    if kind == "congruent":
        return SI.congruent(draw(st.integers(0, 1 << w)), max(stride, 1))
    if kind == "view":
        low, high = strided_module.view_range(w, draw(st.booleans()))
    else:
        low, high = -(1 << (w + 1)), 1 << (w + 1)
    lo = draw(st.integers(low, high))
    if kind == "half":
        return SI.range(lo, None, max(stride, 1)) if draw(st.booleans()) else \
            SI.range(None, lo, max(stride, 1))
    if stride == 0:
        return SI.const(lo)
    count = draw(st.integers(1, (high - lo) // stride + 1))
    return SI.range(lo, lo + (count - 1) * stride, stride)


def member(si: SI, rnd: random.Random, spread: int = 1 << 10) -> int:
    """A random element (for infinite sets, one within ``spread`` strides of a bound)."""
    assert not si.is_bottom
    n = si.size()
    if n is not None:
        return si.lo + rnd.randrange(n) * si.stride
    k = rnd.randrange(spread)
    if si.lo is not None:
        return si.lo + k * si.stride
    if si.hi is not None:
        return si.hi - k * si.stride
    return si.residue + (k - spread // 2) * si.stride


def members(si: SI, rnd: random.Random, limit: int = 48) -> list[int]:
    """Every element of a small set, else ``limit`` random ones (always the bounds)."""
    if si.is_bottom:
        return []
    n = si.size()
    if n is not None and n <= limit:
        return sorted(si.gamma())
    picks = [member(si, rnd) for _ in range(limit)]
    return picks + [b for b in (si.lo, si.hi) if b is not None]


def covers(result: SI, value: int, w: int, signed: bool) -> bool:
    """The result is a set in the (w, signed) view and contains the value's reading."""
    return result.fits(w, signed) and result.contains(view(value, w, signed))


def holds_bits(result: SI, value: int, w: int) -> bool:
    """Some element of ``result`` has the low w bits of ``value`` (any view)."""
    return not result.meet(SI.congruent(u(value, w), 1 << w)).is_bottom


@contextlib.contextmanager
def exact_limit(enabled: bool) -> Iterator[None]:
    """Run with the small-set exact evaluation on, or off so envelopes get tested too."""
    saved = strided_module.EXACT_LIMIT
    strided_module.set_exact_limit(saved if enabled else 0)
    try:
        yield
    finally:
        strided_module.set_exact_limit(saved)


WINDOW = range(-2048, 2049)


def same_on_window(a: SI, b: SI) -> bool:
    return all(a.contains(x) == b.contains(x) for x in WINDOW)
