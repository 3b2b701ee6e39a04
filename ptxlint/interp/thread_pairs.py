"""Which bytes each thread of a block touches at one access, and whether two accesses
touch a common byte from two different threads (`first_overlap`).

An access is a `Side`: its address expression, the width, and *constraints*: registers
whose value set at the access the facts narrowed (`%r1 = %tid.x` in `{0..254}` after
`tid < 255 - s`, a predicate known true there). A thread takes part when every
constraint holds for it. Small uniform leaves (a buffer parity, a loop count) are
enumerated, one row per assignment, and each access is evaluated once (`evaluate`).
For a pair, rows are matched on the leaves both accesses read and agree on (`shared`,
decided by the caller: no definition of them can run between the two), so `(s & 1)` and
`((s + 1) & 1)` are compared for the same `s`; the other leaves stay independent, and
symbols cancel only when shared.

Before that, `hulls_meet` compares each thread's (and each warp's) span of bytes: the
per-warp rows of a Mersenne Twister state never meet, whatever the leaves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from math import gcd

import numpy as np

from ..domains.strided import StridedInterval as SI
from .thread_eval import I64, Evaluator, ThreadSpace, Unevaluable, members, signed
from .thread_exprs import Node

ENUM_VALUES = 1024  # a leaf with at most this many values is enumerated
MAX_ROWS = 4096  # assignments per access
MAX_CELLS = 1 << 20  # rows x threads an access may expand to
_MIX = np.int64(0x9E3779B97F4A7C15 - (1 << 64))  # odd: hashes shared leaf values into a key


@dataclass
class Side:
    """An access: its address, width and object, the constraints on its threads, and
    the value sets its leaves take there (`sis`, by identity, for leaves that do not
    carry one)."""

    address: Node  # without the constant offset
    width: int
    obj: str | None
    constraints: list[tuple[Node, SI, int]] = field(default_factory=list)
    sis: dict[tuple, SI] = field(default_factory=dict)
    offset: int = 0  # `[%r4+16]`: added after evaluation, so accesses can share the rest

    @property
    def leaves(self) -> frozenset[Node]:
        out = self.address.leaves
        for node, _, _ in self.constraints:
            out = out | node.leaves
        return out


@dataclass(frozen=True, eq=False)
class Evaluated:
    """Who touches what at one access: parallel arrays of row, thread and first byte;
    the value of each enumerated leaf in each row; the symbols the addresses still
    contain, as (name, coefficient, identities of the leaves beneath); and each thread's
    span [lo, hi) of bytes over all rows (None when symbols remain)."""

    row: np.ndarray
    thread: np.ndarray
    start: np.ndarray
    values: dict[tuple, np.ndarray]
    sym: tuple[tuple[str, int, frozenset], ...]
    hull: tuple[np.ndarray, ...] | None  # warp lo, warp hi, lane lo, lane hi (warps x 32)

    @property
    def enumerated(self) -> bool:
        return bool(self.values)

    @cached_property
    def span(self) -> tuple[int, int] | None:
        """[lo, hi) of every byte any thread touches (None: symbols remain)."""
        if self.hull is None:
            return None
        wlo, whi = self.hull[0], self.hull[1]
        return int(wlo.min()), int(whi.max())


@dataclass(frozen=True)
class Hit:
    t1: int
    t2: int
    byte: int  # the first common byte (in the object, when `exact`)
    exact: bool  # no symbols: the byte is the real offset
    threads: int = 1  # how many threads of the first access meet another one


def enumerable(si: SI | None) -> list[int] | None:
    if si is None or si.is_bottom:
        return None
    n = si.size()
    if n is None or n > ENUM_VALUES:
        return None
    return sorted(si.gamma(ENUM_VALUES))


def grid(leaves: dict[tuple, SI | None], budget: int,
         first: frozenset) -> dict[tuple, np.ndarray]:
    """The enumerable leaves by identity (those of `first`, then those with fewer values,
    while the product of their sizes fits `budget`) and the cartesian product of their
    values, one array per leaf."""
    found = [(ident, vals) for ident, si in sorted(leaves.items(), key=lambda kv: str(kv[0]))
             if (vals := enumerable(si)) is not None]
    found.sort(key=lambda iv: (iv[0] not in first, len(iv[1])))
    kept: list[tuple[tuple, list[int]]] = []
    rows = 1
    for ident, vals in found:
        if rows * len(vals) <= budget:
            kept.append((ident, vals))
            rows *= len(vals)
    if not kept:
        return {}
    grids = np.meshgrid(*[np.asarray(v, I64) for _, v in kept], indexing="ij")
    return {ident: g.ravel() for (ident, _), g in zip(kept, grids)}


def evaluate(space: ThreadSpace, side: Side) -> Evaluated:
    """Raises Unevaluable when the address is not a computable function of the thread."""
    leaves = {leaf.ident: leaf.si if leaf.si is not None else side.sis.get(leaf.ident)
              for leaf in side.leaves}
    values = grid(leaves, min(MAX_ROWS, max(1, MAX_CELLS // space.n)),
                  frozenset(x.ident for x in side.address.leaves))
    rows = next(iter(values.values())).size if values else 1
    ev = Evaluator(space, {i: v[:, None] for i, v in values.items()}, frozenset(leaves),
                   side.obj, "")
    addr = ev.eval(side.address)
    mask = np.ones((rows, space.n), bool)
    for node, si, bits in side.constraints:
        try:
            v = ev.eval(node)
        except Unevaluable:
            continue
        if not v.sym:
            mask &= np.broadcast_to(members(v.conc, si, bits), mask.shape)
    start = np.broadcast_to(signed(np.asarray(addr.conc, I64), side.address.bits), mask.shape)
    r, t = np.nonzero(mask)
    sym = tuple((name, c, ev.idents(name)) for name, c in addr.sym)
    starts = start[r, t]
    return Evaluated(r, t, starts, values, sym,
                     None if sym else _hull(space, t, starts, side.width))


def shifted(e: Evaluated, offset: int) -> Evaluated:
    """The same access `offset` bytes further."""
    if not offset:
        return e
    hull = None
    if e.hull is not None:
        top, bottom = np.iinfo(I64).max, np.iinfo(I64).min
        hull = tuple(np.where((x == top) | (x == bottom), x, x + offset) for x in e.hull)
    return Evaluated(e.row, e.thread, e.start + offset, e.values, e.sym, hull)


def _hull(space: ThreadSpace, thread: np.ndarray, start: np.ndarray, width: int):
    """Per warp and per lane (a warps x 32 array): the span [lo, hi) of bytes touched."""
    top, bottom = np.iinfo(I64).max, np.iinfo(I64).min
    nw = -(-space.n // 32)
    lo = np.full(nw * 32, top, I64)
    hi = np.full(nw * 32, bottom, I64)
    np.minimum.at(lo, thread, start)
    np.maximum.at(hi, thread, start + width)
    lanes_lo, lanes_hi = lo.reshape(nw, 32), hi.reshape(nw, 32)
    return lanes_lo.min(axis=1), lanes_hi.max(axis=1), lanes_lo, lanes_hi


def hulls_meet(space: ThreadSpace, a: Evaluated, b: Evaluated, same_warp: bool) -> bool:
    """A necessary condition for `first_overlap`: the spans of two different threads
    (of different warps unless `same_warp`) meet."""
    if a.hull is None or b.hull is None:
        return True
    (alo, ahi), (blo, bhi) = a.span, b.span  # type: ignore[misc]
    if ahi <= blo or bhi <= alo:
        return False
    awl, awh, all_, alh = a.hull
    bwl, bwh, bll, blh = b.hull
    meet = (awl[:, None] < bwh[None, :]) & (bwl[None, :] < awh[:, None])
    np.fill_diagonal(meet, False)
    if meet.any():
        return True
    if not same_warp:
        return False
    inner = (all_[:, :, None] < blh[:, None, :]) & (bll[:, None, :] < alh[:, :, None])
    inner &= ~np.eye(32, dtype=bool)[None, :, :]
    return bool(inner.any())


def symbol_gap(a: Evaluated, b: Evaluated, shared: frozenset) -> int:
    """0 when the symbols cancel (the addresses compare exactly), else the modulus their
    difference is known by: a multiple of the gcd of the coefficients left."""
    diff: dict[str, int] = {}
    for side, sign in ((a, 1), (b, -1)):
        for name, c, idents in side.sym:
            key = name if idents <= shared else f"{name}'{sign}"
            diff[key] = diff.get(key, 0) + sign * c
    g = 0
    for c in diff.values():
        g = gcd(g, abs(c))
    return g


def row_keys(e: Evaluated, matched: list[tuple]) -> np.ndarray:
    """Per entry, a hash of the values its row gives the `matched` leaves."""
    key = np.zeros(e.row.size, I64)
    for k, ident in enumerate(matched):
        key = key * _MIX + e.values[ident][e.row] + np.int64(k + 1)
    return key


def _unit(a: Evaluated, wa: int, b: Evaluated, wb: int, g: int) -> int:
    u = 16
    for x in (wa, wb, g):
        if x:
            u = gcd(u, x)
    for e in (a, b):
        if e.start.size:
            u = gcd(u, int(np.gcd.reduce(e.start % 16)))
    return u or 1


def first_overlap(space: ThreadSpace, a: Evaluated, wa: int, b: Evaluated, wb: int,
                  same_warp: bool, shared: frozenset) -> Hit | None:
    """Two different threads (of different warps unless `same_warp`), one touching a byte
    at `a` and the other the same byte at `b`, in rows agreeing on the shared leaves both
    enumerate. Bytes are compared modulo the symbol gap when symbols remain."""
    if not a.thread.size or not b.thread.size:
        return None
    # a leaf enumerated on one side only cannot be matched row by row: not shared
    shared = frozenset(x for x in shared if (x in a.values) == (x in b.values))
    g = symbol_gap(a, b, shared)
    matched = sorted((x for x in shared if x in a.values), key=str)
    ka, kb = row_keys(a, matched), row_keys(b, matched)
    u = _unit(a, wa, b, wb, g)
    ua, ta, ka = _units(a, wa, u, g, ka)
    ub, tb, kb = _units(b, wb, u, g, kb)
    lo = min(ua.min(), ub.min())
    span = np.int64(max(ua.max(), ub.max()) - lo + 1)
    key_a, key_b = ka * span + (ua - lo), kb * span + (ub - lo)
    warp = space.index("warp")
    who_a, who_b = (ta, tb) if same_warp else (warp[ta], warp[tb])
    order = np.argsort(key_b, kind="stable")
    sk, sw = key_b[order], who_b[order]
    uniq, first = np.unique(sk, return_index=True)
    lo_w, hi_w = np.minimum.reduceat(sw, first), np.maximum.reduceat(sw, first)
    pos = np.minimum(np.searchsorted(uniq, key_a), len(uniq) - 1)
    hit = (uniq[pos] == key_a) & ((lo_w[pos] != who_a) | (hi_w[pos] != who_a))
    found = np.flatnonzero(hit)
    if not found.size:
        return None
    i = int(found[0])
    same = np.flatnonzero(key_b == key_a[i])
    j = int(same[np.flatnonzero(who_b[same] != who_a[i])[0]])
    return Hit(int(ta[i]), int(tb[j]), int(ua[i]) * u, g == 0,
               int(np.unique(ta[found]).size))


def _units(e: Evaluated, w: int, u: int, g: int, key: np.ndarray):
    k = max(1, w // u)
    if e.row.size * k > 4 * MAX_CELLS:
        raise Unevaluable("too many bytes")
    units = (e.start // u)[:, None] + np.arange(k, dtype=I64)[None, :]
    if g:
        units %= g // u
    return units.ravel(), np.repeat(e.thread, k), np.repeat(key, k)


__all__ = ["Side", "Evaluated", "Hit", "evaluate", "hulls_meet", "first_overlap",
           "symbol_gap", "enumerable", "grid", "MAX_ROWS", "MAX_CELLS"]
