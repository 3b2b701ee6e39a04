"""Concretisation (gamma) tests: does a concrete register value lie in an abstract one?

A w-bit register holds bits; the domains describe it by *some* integer congruent to
those bits modulo 2^w (`domains/strided.py`), so every test here is modulo 2^w:
`v in gamma(si)` iff some element of `si` is congruent to `v`.

The lane form (`domains/affine.py`) is a claim about one warp executing an instruction
together: there is one base `b` in `aff.base` and one coefficient `c_i` in each
coefficient set such that every lane holds `b + sum c_i * index_i` (modulo 2^w).
`lane_form_violations` checks it for many warps at once (numpy), trying every
combination of the coefficients when they are small sets (`MAX_COMBINATIONS`) and
reporting the warps it could not decide as unchecked rather than passing them.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from math import gcd

import numpy as np

from ptxlint.domains.affine import Affine
from ptxlint.domains.align import Congruence
from ptxlint.domains.strided import StridedInterval as SI

INDEX_NAMES = ("tid.x", "tid.y", "tid.z", "laneid")
MAX_COMBINATIONS = 256  # coefficient choices tried per lane form
MAX_SET = 64  # a coefficient set larger than this is not enumerated


def si_contains(si: SI, v: int, w: int) -> bool:
    """Some element of `si` is congruent to `v` modulo 2^w."""
    if si.is_bottom:
        return False
    m = 1 << w
    u = v % m
    if si.is_singleton:
        return (si.lo - u) % m == 0
    # x = u + k*m with x = residue (mod stride) and lo <= x <= hi
    s, r = si.stride, si.residue
    g = gcd(m, s)
    if (r - u) % g:
        return False
    period = s // g
    k0 = ((r - u) // g * pow(m // g, -1, period)) % period if period > 1 else 0
    kmin = None if si.lo is None else -((u - si.lo) // m)  # ceil((lo - u) / m)
    kmax = None if si.hi is None else (si.hi - u) // m
    if kmin is None:
        return True  # unbounded below: some k = k0 (mod period) lies below kmax
    first = kmin + (k0 - kmin) % period
    return kmax is None or first <= kmax


def cong_contains(cong: Congruence, v: int, w: int) -> bool:
    if cong.is_bottom:
        return False
    bits = min(cong.bits, w)
    return (v - cong.residue) % (1 << bits) == 0


@dataclass(frozen=True)
class LaneCheck:
    """The outcome of a lane-form test over some warps."""

    bad_warps: tuple[int, ...]  # warp ids whose lanes fit no choice of base and coefficients
    unchecked: int  # warps not decided (coefficient sets too large to try)
    checked: int


def _choices(aff: Affine) -> list[dict[str, int]] | None:
    sets = []
    for name, c in aff.coeffs:
        if c.is_singleton:
            sets.append([c.lo])
            continue
        size = c.size()
        if size is None or size > MAX_SET:
            return None
        sets.append(sorted(c.gamma()))
    names = [n for n, _ in aff.coeffs]
    combos = list(product(*sets))
    if len(combos) > MAX_COMBINATIONS:
        return None
    return [dict(zip(names, combo)) for combo in combos]


def lane_form_violations(aff: Affine, values: np.ndarray, indices: dict[str, np.ndarray],
                         warps: np.ndarray, w: int) -> LaneCheck:
    """`values` (uint64, one per lane, sorted by warp) against the lane form `aff`;
    `indices` maps each name of INDEX_NAMES to the lanes' index values; `warps` gives
    each lane's warp id (non-decreasing)."""
    starts = np.flatnonzero(np.concatenate([[True], warps[1:] != warps[:-1]]))
    ids = warps[starts]
    n = len(starts)
    if aff.varying:
        return LaneCheck((), 0, 0)
    if aff.is_bottom:
        return LaneCheck(tuple(int(x) for x in ids), 0, n)
    choices = _choices(aff)
    if choices is None:
        return LaneCheck((), n, 0)
    mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    ok = np.zeros(n, bool)
    for coeffs in choices:
        rest = values.astype(np.uint64)
        for name, c in coeffs.items():
            rest = rest - np.uint64(c % (1 << 64)) * indices[name].astype(np.uint64)
        rest &= mask
        lo = np.minimum.reduceat(rest, starts)
        hi = np.maximum.reduceat(rest, starts)
        cand = np.flatnonzero((lo == hi) & ~ok)
        if aff.base.is_top:
            ok[cand] = True
        else:
            uniq, back = np.unique(lo[cand], return_inverse=True)
            inside = np.array([si_contains(aff.base, int(x), w) for x in uniq], bool)
            ok[cand] = inside[back.reshape(-1)] if len(cand) else ok[cand]
        if ok.all():
            break
    return LaneCheck(tuple(int(x) for x in ids[~ok]), 0, n)


__all__ = ["si_contains", "cong_contains", "lane_form_violations", "LaneCheck", "INDEX_NAMES"]
