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

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from math import gcd

import numpy as np

from ..domains.strided import StridedInterval as SI
from .global_bytes import mismatched
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
    words: list = field(default_factory=list)  # `loaded_words.Word`: conditions on loads

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
    words: tuple[WordCheck, ...] = ()

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

    @cached_property
    def spans(self) -> _Spans:
        """The hull as sorted spans (`hulls_meet`); only with a hull."""
        wlo, whi, llo, lhi = self.hull  # type: ignore[misc]
        return _Spans(_Intervals.of(wlo, whi, 0), _Intervals.of(llo.ravel(), lhi.ravel(), 32))


@dataclass(frozen=True, eq=False)
class WordCheck:
    """A loaded word per entry of an `Evaluated`: its address (`addr` plus the symbols
    `sym`, the same in every entry), whether the entry's register holds it (`applies`),
    and the values the facts allow it at the access (`si`, `bits` wide)."""

    memory: tuple
    addr: np.ndarray
    sym: tuple
    applies: np.ndarray
    si: SI
    bits: int

    def excludes(self, other: WordCheck) -> bool:
        """One word cannot be in both value sets: they do not meet, read signed or
        unsigned (either view is a bijection of the bits)."""
        if self.memory != other.memory or self.sym != other.sym or self.bits != other.bits:
            return False
        return any(x.meet(y).is_bottom for x, y in (
            (self.si.as_signed(self.bits), other.si.as_signed(self.bits)),
            (self.si.as_unsigned(self.bits), other.si.as_unsigned(self.bits))))


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
    words = tuple(w for w in (_word(ev, x, mask.shape, r, t) for x in side.words)
                  if w is not None)
    return Evaluated(r, t, starts, values, sym,
                     None if sym else _hull(space, t, starts, side.width), words)


def _word(ev: Evaluator, word, shape, r: np.ndarray, t: np.ndarray) -> WordCheck | None:
    """`word` evaluated per entry; None when its address or condition is not computable."""
    try:
        addr = ev.eval(word.address)
        applies = ev.eval(word.applies) if word.applies is not None else None
    except Unevaluable:
        return None
    if applies is not None and applies.sym:
        return None
    at = np.broadcast_to(np.asarray(addr.conc, I64), shape)[r, t]
    on = np.ones(r.size, bool) if applies is None else \
        np.broadcast_to(np.asarray(applies.conc, I64) != 0, shape)[r, t]
    return WordCheck(word.memory, at, tuple(sorted(addr.sym)), on, word.si, word.bits)


def shifted(e: Evaluated, offset: int) -> Evaluated:
    """The same access `offset` bytes further."""
    if not offset:
        return e
    hull = None
    if e.hull is not None:
        top, bottom = np.iinfo(I64).max, np.iinfo(I64).min
        hull = tuple(np.where((x == top) | (x == bottom), x, x + offset) for x in e.hull)
    return Evaluated(e.row, e.thread, e.start + offset, e.values, e.sym, hull, e.words)


def kept(e: Evaluated, keep: np.ndarray) -> Evaluated:
    """The entries of `e` where `keep` holds (no hull)."""
    words = tuple(WordCheck(w.memory, w.addr[keep], w.sym, w.applies[keep], w.si, w.bits)
                  for w in e.words)
    return Evaluated(e.row[keep], e.thread[keep], e.start[keep], e.values, e.sym, None, words)


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


def hulls_meet(space: ThreadSpace, a: Evaluated, b: Evaluated, same_warp: bool,
               shift: int = 0) -> bool:
    """A necessary condition for `first_overlap`: the spans of two different threads
    (of different warps unless `same_warp`) meet; `a` taken `shift` bytes further.

    The shifts at which two warps meet are worked out once per pair of accesses
    (`_Spans.warps_meet`), and two lanes' spans that meet are counted, not enumerated
    (`_meeting`): warps x warps, then lanes x lanes, was a 32 x 32 x 32 array per pair."""
    if a.hull is None or b.hull is None:
        return True
    (alo, ahi), (blo, bhi) = a.span, b.span  # type: ignore[misc]
    if ahi + shift <= blo or bhi <= alo + shift:
        return False
    sa, sb = a.spans, b.spans
    if sa.warps.liftable and sb.warps.liftable:
        if sa.warps_meet(b, shift):
            return True
    elif sa.warps.meet_others(sb.warps, shift):
        return True
    if not same_warp:
        return False
    if not (sa.lanes.liftable and sb.lanes.liftable and abs(shift) < LIFT // 4):
        return _lanes_meet_dense(a.hull, b.hull, shift)  # offsets too large to lift
    return sa.lanes.meet_others(sb.lanes, shift)


def _lanes_meet_dense(ha: tuple, hb: tuple, shift: int) -> bool:
    """Two different lanes of one warp whose spans meet, lane by lane (warps x 32 x 32)."""
    top, bottom = np.iinfo(I64).max, np.iinfo(I64).min
    all_, alh = ha[2], ha[3]
    all_ = np.where(all_ == top, top, all_ + shift)
    alh = np.where(alh == bottom, bottom, alh + shift)
    bll, blh = hb[2], hb[3]
    inner = (all_[:, :, None] < blh[:, None, :]) & (bll[:, None, :] < alh[:, :, None])
    inner &= ~np.eye(32, dtype=bool)[None, :, :]
    return bool(inner.any())


LIFT = 1 << 40  # each warp's lanes lifted this far above the previous warp's (`_Intervals`)


@dataclass(frozen=True, eq=False)
class _Intervals:
    """Non-empty spans [lo, hi) of bytes, one per member (a warp, or a lane of a warp),
    each lifted by `LIFT` times its group (its warp; warps are one group) so that spans
    of two groups never meet: as queries (`lo`, `hi`) and sorted (`lo_sorted`,
    `hi_sorted`) for counting the pairs that meet, and per member, not lifted (`full_*`,
    0 where empty), for the pairs of one member. `liftable`: every offset is within
    LIFT / 4 of 0 (else lifting could mix groups)."""

    lo: np.ndarray
    hi: np.ndarray
    lo_sorted: np.ndarray
    hi_sorted: np.ndarray
    full_lo: np.ndarray
    full_hi: np.ndarray
    full_ne: np.ndarray
    liftable: bool

    @classmethod
    def of(cls, lo: np.ndarray, hi: np.ndarray, per_group: int) -> _Intervals:
        """`per_group`: members per group (0: all in one)."""
        ne = lo != np.iinfo(I64).max
        lo_ne, hi_ne = lo[ne], hi[ne]
        liftable = not lo_ne.size or max(-int(lo_ne.min()), int(hi_ne.max())) < LIFT // 4
        if per_group and liftable:
            lift = np.flatnonzero(ne) // per_group * LIFT
            lo_ne, hi_ne = lo_ne + lift, hi_ne + lift
        return cls(lo_ne, hi_ne, np.sort(lo_ne), np.sort(hi_ne), np.where(ne, lo, 0),
                   np.where(ne, hi, 0), ne, liftable)

    def meet_others(self, o: _Intervals, shift: int) -> bool:
        """Some member of `self` (shifted) and a *different* member of `o` in the same
        group have spans that meet: the pairs that meet (`_meeting`), less those of one
        member."""
        return _meeting(self, o, shift) > int((
            self.full_ne & o.full_ne & (self.full_lo + shift < o.full_hi) &
            (o.full_lo < self.full_hi + shift)).sum())


def _meeting(a: _Intervals, b: _Intervals, shift: int) -> int:
    """How many pairs (one span of `a`, shifted, one of `b`) meet: of the spans of `b`
    starting before one of `a` ends, those not ending before it starts."""
    return int(np.searchsorted(b.lo_sorted, a.hi + shift, "left").sum()) - \
        int(np.searchsorted(b.hi_sorted, a.lo + shift, "right").sum())


@dataclass(frozen=True, eq=False)
class _Spans:
    """An access's spans of bytes per warp and per thread, ready for `hulls_meet`."""

    warps: _Intervals
    lanes: _Intervals
    # per other access (by identity, kept alive with it): `warps_meet`'s shifts
    _shifts: dict = field(default_factory=dict)

    def warps_meet(self, b: Evaluated, shift: int) -> bool:
        """A warp of this access, `shift` bytes further, and another warp of `b` have
        spans that meet. An unrolled loop asks this of one pair of evaluations at many
        shifts: the shifts at which each pair of warps meets are worked out once."""
        hit = self._shifts.get(id(b))
        if hit is None:
            hit = self._shifts[id(b)] = (b, *_meeting_shifts(self.warps, b.spans.warps))
        _, firsts, lasts = hit
        k = bisect_right(firsts, shift) - 1
        return k >= 0 and lasts[k] >= shift


def _meeting_shifts(a: _Intervals, b: _Intervals) -> tuple[list[int], list[int]]:
    """The shifts s of `a` at which member x of `a` and a different member y of `b` meet
    (lo_y - hi_x < s < hi_y - lo_x), as disjoint ranges of integers [first, last] in
    order."""
    ia, ib = np.flatnonzero(a.full_ne), np.flatnonzero(b.full_ne)
    first = b.full_lo[ib][None, :] - a.full_hi[ia][:, None] + 1
    last = b.full_hi[ib][None, :] - a.full_lo[ia][:, None] - 1
    other = ia[:, None] != ib[None, :]
    first, last = first[other], last[other]
    if not first.size:
        return [], []
    order = np.argsort(first, kind="stable")
    first, last = first[order], np.maximum.accumulate(last[order])
    # a range starts where no earlier one reaches up to it
    new = np.flatnonzero(np.concatenate([[True], first[1:] > last[:-1] + 1]))
    return first[new].tolist(), last[np.append(new[1:] - 1, first.size - 1)].tolist()


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
    ua, ta, ka, ea = _units(a, wa, u, g, ka)
    ub, tb, kb, eb = _units(b, wb, u, g, kb)
    lo = min(ua.min(), ub.min())
    span = np.int64(max(ua.max(), ub.max()) - lo + 1)
    key_a, key_b = ka * span + (ua - lo), kb * span + (ub - lo)
    warp = space.index("warp")
    who_a, who_b = (ta, tb) if same_warp else (warp[ta], warp[tb])
    found = mismatched(key_a, who_a, key_b, who_b)
    if not found.size:
        return None
    clashes = [(x, y) for x in a.words for y in b.words if x.excludes(y)]
    partner = _partners(found, key_a, who_a, ea, key_b, who_b, eb, clashes) if clashes \
        else None
    if partner is not None:
        found = found[partner >= 0]
        if not found.size:
            return None
        i, j = int(found[0]), int(partner[partner >= 0][0])
    else:
        i = int(found[0])
        same = np.flatnonzero(key_b == key_a[i])
        j = int(same[np.flatnonzero(who_b[same] != who_a[i])[0]])
    return Hit(int(ta[i]), int(tb[j]), int(ua[i]) * u, g == 0,
               int(np.unique(ta[found]).size))


MAX_PARTNERS = 1 << 21  # candidate pairs checked against loaded words per access pair


def _partners(found, key_a, who_a, ea, key_b, who_b, eb, clashes) -> np.ndarray | None:
    """Per found entry of `a`, one entry of `b` it may really meet (-1: none): the same
    byte, another thread (or warp), and no pair of loaded words that rules both out
    (the same word, held by both registers, in value sets that do not meet). None when
    there are too many candidates to check (then every candidate stands)."""
    order = np.argsort(key_b, kind="stable")
    sk = key_b[order]
    lo = np.searchsorted(sk, key_a[found], "left")
    hi = np.searchsorted(sk, key_a[found], "right")
    if int((hi - lo).sum()) > MAX_PARTNERS:
        return None
    counts = hi - lo
    owner = np.repeat(np.arange(found.size), counts)
    # flat n belongs to found entry owner[n]: its (n - first[owner])-th key match
    first_flat = np.cumsum(counts) - counts
    cand = order[lo[owner] + np.arange(owner.size) - first_flat[owner]]
    ia = found[owner]
    ok = who_b[cand] != who_a[ia]
    for x, y in clashes:
        ok &= ~(x.applies[ea[ia]] & y.applies[eb[cand]] & (x.addr[ea[ia]] == y.addr[eb[cand]]))
    out = np.full(found.size, -1, np.int64)
    good = np.flatnonzero(ok)
    # the first good candidate of each found entry (entries in order of `owner`)
    first = np.unique(owner[good], return_index=True)
    out[first[0]] = cand[good[first[1]]]
    return out


def _units(e: Evaluated, w: int, u: int, g: int, key: np.ndarray):
    k = max(1, w // u)
    if e.row.size * k > 4 * MAX_CELLS:
        raise Unevaluable("too many bytes")
    units = (e.start // u)[:, None] + np.arange(k, dtype=I64)[None, :]
    if g:
        units %= g // u
    entry = np.repeat(np.arange(e.row.size), k)  # each unit's entry (for `words`)
    return units.ravel(), np.repeat(e.thread, k), np.repeat(key, k), entry


__all__ = ["Side", "Evaluated", "Hit", "evaluate", "hulls_meet", "first_overlap",
           "symbol_gap", "enumerable", "grid", "MAX_ROWS", "MAX_CELLS"]
