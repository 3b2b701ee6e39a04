"""Strided intervals: ``{lo + k*stride : k >= 0, lo + k*stride <= hi}`` over the integers.

Elements are mathematical integers (Python big ints, never floats). A w-bit register value
is represented by *some* integer congruent to its bits modulo 2^w: usually its unsigned
reading in ``[0, 2^w)`` or its signed reading in ``[-2^(w-1), 2^(w-1))``. ``wrap(w, signed)``
re-reads a set in one of those views soundly; every transfer function takes the width and
the view it answers in (see ``strided_arith`` and ``strided_bits``).

Normal form (so ``==`` means "same set of integers"), fields ``lo hi stride residue``:

* bottom is ``lo=1, hi=0, stride=0, residue=0``;
* a single value ``v`` is ``lo=hi=v, stride=0, residue=0``;
* otherwise ``stride >= 1`` and the set is ``{x : lo <= x <= hi, x = residue (mod stride)}``
  with ``0 <= residue < stride``; ``lo``/``hi`` are ``None`` for -inf/+inf, and a finite bound
  is an element (``lo`` snapped up, ``hi`` snapped down to the residue). ``stride`` is the
  gcd of all differences, so it is unique; with both bounds infinite the set is a
  congruence class, which is why the residue is stored rather than derived from ``lo``.
  Stride 1 forces ``residue=0``; top is ``(None, None, 1, 0)``.

Because the sets are not wrapped (wrapping happens only in ``wrap``), they form a true
lattice: join is the least strided interval containing both, meet is exact (CRT), and join
is associative. The price is that two readings of the same bits (``{255}`` and ``{-1}`` at
8 bits) are different, incomparable elements: the order is inclusion of integer sets, which
is finer than inclusion of bit patterns.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from functools import lru_cache
from math import gcd, prod
from typing import Callable, Iterable, Sequence

from .interning import InternTable, new_instance, set_field
from .lattice import Tri
from .strided_arith import ArithmeticOps, view_range, wrap_int
from .strided_bits import BitwiseOps

#: Sets up to this many elements (product over the operands) are computed element-wise.
EXACT_LIMIT = 256
#: Widening keeps a grown bound (no jump) only while the set stays this small ...
WIDEN_MAX_SIZE = 1024
#: ... each step adds at least 1/WIDEN_MIN_GROWTH_DIV of the old size (20%) ...
WIDEN_MIN_GROWTH_DIV = 5
#: ... and the bound stays within +-WIDEN_MAX_BOUND.
WIDEN_MAX_BOUND = 65535

_OPS = {"eq", "ne", "lt", "le", "gt", "ge"}
_UNSIGNED_ALIASES = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}

__all__ = ["StridedInterval", "view_range", "wrap_int", "EXACT_LIMIT", "memoized",
           "set_exact_limit"]


def memoized(fn: Callable, exact: bool = False, limit: int = 1 << 16) -> Callable:
    """A method of an immutable domain value, remembered per (self, positional arguments)
    by identity (the entry keeps them alive, so identities stay unique). The domains
    intern their values, so the interpreter asks the same questions again and again.
    ``exact``: the answer depends on EXACT_LIMIT (`set_exact_limit` forgets it).
    Calls with keyword arguments are not remembered."""
    table: dict[tuple, tuple] = {}
    get = table.get
    if exact:
        _EXACT_TABLES.append(table)

    def method(self, *args, **kw):
        if kw:
            return fn(self, *args, **kw)
        n = len(args)
        if n == 1:
            key = (id(self), id(args[0]))
        elif n == 2:
            a, b = args
            key = (id(self), id(a), id(b))
        elif n == 3:
            a, b, c = args
            key = (id(self), id(a), id(b), id(c))
        else:
            key = (id(self), *map(id, args))
        hit = get(key)
        if hit is not None:
            return hit[0]
        out = fn(self, *args)
        if len(table) >= limit:
            table.clear()
        table[key] = (out, self, args)
        return out

    method.__name__, method.__qualname__, method.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    method.__wrapped__ = fn
    return method


_EXACT_TABLES: list[dict] = []  # the tables of `memoized(exact=True)` methods


def set_exact_limit(limit: int) -> None:
    """Set EXACT_LIMIT (tests turn the exact evaluation off to exercise the envelopes)
    and forget the answers that depended on the old one."""
    global EXACT_LIMIT
    EXACT_LIMIT = limit
    for table in _EXACT_TABLES:
        table.clear()


def _max_lo(a: int | None, b: int | None) -> int | None:
    """Larger of two lower bounds (None = -inf)."""
    return b if a is None else a if b is None else max(a, b)


def _min_hi(a: int | None, b: int | None) -> int | None:
    """Smaller of two upper bounds (None = +inf)."""
    return b if a is None else a if b is None else min(a, b)


#: constructor arguments (raw or normal) -> the normal instance (`interning.py`)
_CACHE_LIMIT = 1 << 18
_CACHE = InternTable(_CACHE_LIMIT)
_alloc, _set = new_instance, set_field
_VIEWS: dict[tuple[int, bool], tuple[int, int]] = {}  # (w, signed) -> view_range(w, signed)


@dataclass(frozen=True, init=False, eq=False)
class StridedInterval(ArithmeticOps, BitwiseOps):
    """A strided set of integers; see the module docstring for the normal form.

    ``StridedInterval(lo, hi, stride, residue=0)`` normalises its arguments. Instances are
    interned (equal arguments give the same object while the table holds it), and the
    flags ``is_bottom``, ``is_top``, ``is_singleton`` and ``is_finite`` are computed once,
    at construction.
    """

    __slots__ = ("lo", "hi", "stride", "residue", "is_bottom", "is_top", "is_singleton",
                 "is_finite", "_anchor", "_hash")

    lo: int | None
    hi: int | None
    stride: int
    residue: int

    def __new__(cls, lo: int | None, hi: int | None, stride: int,
                residue: int = 0) -> StridedInterval:
        key = (lo, hi, stride, residue)
        hit = _CACHE.get(key)
        if hit is not None and cls is StridedInterval:
            return hit
        s, r = stride, residue
        if s < 0:
            raise ValueError("stride must be >= 0")
        if lo is not None and hi is not None and lo > hi:
            lo, hi, s, r = 1, 0, 0, 0
        elif s == 0:
            if lo is None or lo != hi:
                raise ValueError("stride 0 denotes a single value: lo == hi required")
            r = 0
        else:
            r %= s
            if lo is not None:
                lo += (r - lo) % s
            if hi is not None:
                hi -= (hi - r) % s
            if lo is not None and hi is not None and lo >= hi:
                lo, hi, s, r = (lo, hi, 0, 0) if lo == hi else (1, 0, 0, 0)
            elif s == 1:
                r = 0
        if cls is not StridedInterval:
            return cls._build(lo, hi, s, r)
        out = cls._make(lo, hi, s, r)
        _CACHE[key] = out
        return out

    @classmethod
    def _make(cls, lo: int | None, hi: int | None, stride: int,
              residue: int) -> StridedInterval:
        """The instance for fields the caller guarantees to be in normal form."""
        key = (lo, hi, stride, residue)
        hit = _CACHE.get(key)
        if hit is not None and cls is StridedInterval:
            return hit
        out = cls._build(lo, hi, stride, residue)
        if cls is StridedInterval:
            _CACHE.keep(key, out)
        return out

    @classmethod
    def _build(cls, lo, hi, stride, residue) -> StridedInterval:
        if lo.__class__ is not int and lo is not None:  # bool: interned with its int
            lo = int(lo)
        if hi.__class__ is not int and hi is not None:
            hi = int(hi)
        self = _alloc(cls)
        _set(self, "lo", lo)
        _set(self, "hi", hi)
        _set(self, "stride", stride)
        _set(self, "residue", residue)
        finite = lo is not None and hi is not None
        bottom = finite and lo > hi
        _set(self, "is_bottom", bottom)
        _set(self, "is_top", lo is None and hi is None and stride == 1)
        _set(self, "is_singleton", stride == 0 and not bottom)
        _set(self, "is_finite", finite)
        _set(self, "_anchor", None if bottom else
             lo if lo is not None else hi if hi is not None else residue)
        _set(self, "_hash", hash((lo, hi, stride, residue)))
        return self

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.lo == other.lo and self.hi == other.hi and self.stride == other.stride
                and self.residue == other.residue)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (type(self), (self.lo, self.hi, self.stride, self.residue))

    # ---------------------------------------------------------------- constructors
    @classmethod
    def bottom(cls) -> StridedInterval:
        return _BOTTOM if cls is StridedInterval else cls(1, 0, 0)

    @classmethod
    def top(cls) -> StridedInterval:
        return _TOP if cls is StridedInterval else cls(None, None, 1)

    @classmethod
    def const(cls, x: int) -> StridedInterval:
        if cls is StridedInterval:
            hit = _CACHE.get((x, x, 0, 0))
            if hit is not None:
                return hit
        return cls._new(x, x, 0, 0)

    @classmethod
    def range(cls, lo: int | None, hi: int | None, stride: int = 1) -> StridedInterval:
        """``{lo, lo+stride, ...} <= hi``, anchored at ``lo`` (at ``hi`` when lo is -inf)."""
        anchor = lo if lo is not None else hi if hi is not None else 0
        if stride == 0 and lo != hi:
            raise ValueError("stride 0 needs lo == hi")
        return cls._new(lo, hi, stride, anchor)

    @classmethod
    def congruent(cls, rem: int, modulus: int) -> StridedInterval:
        """All integers ``= rem (mod modulus)``."""
        return cls._new(None, None, modulus, rem)

    @classmethod
    def full(cls, w: int, signed: bool = False) -> StridedInterval:
        """Every w-bit value in the chosen view."""
        return cls.range(*view_range(w, signed))

    @classmethod
    def hull(cls, values: Iterable[int]) -> StridedInterval:
        """The smallest strided interval containing ``values`` (bottom if empty)."""
        it = iter(values)
        for first in it:
            break
        else:
            return cls.bottom()
        lo = hi = first
        step = 0
        for v in it:
            if v < lo:
                lo = v
            elif v > hi:
                hi = v
            if step != 1:
                step = gcd(step, v - first)
        return cls._new(lo, hi, step, first)

    # ---------------------------------------------------------------- queries
    def singleton(self) -> int | None:
        """The one element, or None when there are zero or several."""
        return self.lo if self.is_singleton else None

    def anchor(self) -> int:
        """Some element (lo, else hi, else the residue): the base of stride arithmetic."""
        assert not self.is_bottom
        return self._anchor

    def size(self) -> int | None:
        """Number of elements; None when infinite."""
        if self.is_bottom:
            return 0
        if self.lo is None or self.hi is None:
            return None
        return 1 if self.stride == 0 else (self.hi - self.lo) // self.stride + 1

    def contains(self, x: int) -> bool:
        if self.is_bottom or (self.lo is not None and x < self.lo):
            return False
        if self.hi is not None and x > self.hi:
            return False
        return x == self.lo if self.stride == 0 else (x - self.residue) % self.stride == 0

    def within(self, low: int, high: int) -> bool:
        """True when every element lies in ``[low, high]``."""
        if self.is_bottom:
            return True
        return self.lo is not None and self.hi is not None and low <= self.lo and self.hi <= high

    def fits(self, w: int, signed: bool) -> bool:
        """True when the set already is a w-bit view (nothing to wrap)."""
        if self.is_bottom:
            return True
        view = _VIEWS.get((w, signed))
        if view is None:
            view = _VIEWS[(w, signed)] = view_range(w, signed)
        lo, hi = self.lo, self.hi
        return lo is not None and hi is not None and view[0] <= lo and hi <= view[1]

    def gamma(self, limit: int = 1 << 16) -> frozenset[int]:
        """All elements of a small set (for tests and exact small-set evaluation)."""
        n = self.size()
        if n is None or n > limit:
            raise ValueError(f"{self} is too large to enumerate")
        if n == 0:
            return frozenset()
        return frozenset(self.lo + i * self.stride for i in range(n))

    def exact_map(self, f: Callable[..., int], *others: StridedInterval,
                  w: int | None = None, signed: bool = False) -> StridedInterval | None:
        """Hull of ``f`` over all element tuples when that is cheap, else None.

        Results are re-read in the (w, signed) view when ``w`` is given. Exactness on small
        sets is where precision is cheapest: singletons and tiny sets dominate real kernels.
        Single values are always evaluated exactly, whatever EXACT_LIMIT says.
        """
        if not others:
            if self.is_singleton:
                v = f(self.lo)
                return type(self).const(v if w is None else wrap_int(v, w, signed))
            n = self.size()
            if n == 0:
                return type(self).bottom()
            if n is None or n > max(EXACT_LIMIT, 1):
                return None
            outs = list(map(f, range(self.lo, self.hi + 1, self.stride)))
        else:
            args = (self, *others)
            if all(a.is_singleton for a in args):
                v = f(*(a.lo for a in args))
                return type(self).const(v if w is None else wrap_int(v, w, signed))
            sizes = [a.size() for a in args]
            if 0 in sizes:
                return type(self).bottom()
            if None in sizes or prod(sizes) > max(EXACT_LIMIT, 1):
                return None
            ranges = [range(a.lo, a.hi + 1, a.stride or 1) for a in args]
            outs = [f(*xs) for xs in itertools.product(*ranges)]
        if w is not None:
            mask = (1 << w) - 1
            if signed:
                half, span = 1 << (w - 1), 1 << w
                outs = [(v & mask) - span if v & mask >= half else v & mask for v in outs]
            else:
                outs = [v & mask for v in outs]
        lo, hi, first = min(outs), max(outs), outs[0]
        return self._new(lo, hi, gcd(*[v - first for v in outs]), first)

    def __str__(self) -> str:
        if self.is_bottom:
            return "bottom"
        if self.is_singleton:
            return str(self.lo)
        lo = "-inf" if self.lo is None else str(self.lo)
        hi = "+inf" if self.hi is None else str(self.hi)
        step = "" if self.stride == 1 else f" step {self.stride}"
        periodic = self.stride > 1 and not self.is_finite
        mod = f" (= {self.residue} mod {self.stride})" if periodic else ""
        return f"{{{lo}..{hi}{step}{mod}}}"

    # ---------------------------------------------------------------- lattice
    def leq(self, other: StridedInterval) -> bool:
        """Inclusion of integer sets."""
        if self is other or self.is_bottom:
            return True
        if other.is_bottom or _max_lo(self.lo, other.lo) != self.lo:
            return False
        if _min_hi(self.hi, other.hi) != self.hi:
            return False
        if self.is_singleton:
            return other.contains(self.lo)
        if other.stride == 0 or self.stride % other.stride:
            return False
        return (self.anchor() - other.residue) % other.stride == 0

    def join(self, other: StridedInterval) -> StridedInterval:
        """Least upper bound: hull of the bounds, gcd of strides and anchor distance."""
        if self is other or other.is_bottom:
            return self
        if self.is_bottom:
            return other
        anchor = self._anchor
        step = gcd(self.stride, other.stride, anchor - other._anchor)
        if step == 0:
            return self
        a, b = self.lo, other.lo
        lo = None if a is None or b is None else a if a < b else b
        a, b = self.hi, other.hi
        hi = None if a is None or b is None else a if a > b else b
        return self._new(lo, hi, step, anchor)

    def meet(self, other: StridedInterval) -> StridedInterval:
        """Exact intersection: progressions intersect in a progression (Chinese remainder)."""
        cls = type(self)
        if self is other:
            return self
        if self.is_bottom or other.is_bottom:
            return cls.bottom()
        if self.is_singleton or other.is_singleton:
            one, two = (self, other) if self.is_singleton else (other, self)
            return one if two.contains(one.lo) else cls.bottom()
        lo, hi = _max_lo(self.lo, other.lo), _min_hi(self.hi, other.hi)
        g = gcd(self.stride, other.stride)
        if (other.residue - self.residue) % g:
            return cls.bottom()
        m2 = other.stride // g
        gap = (other.residue - self.residue) // g
        k = gap * pow(self.stride // g, -1, m2) % m2 if m2 > 1 else 0
        return cls._new(lo, hi, self.stride * m2, self.residue + self.stride * k)

    def widen(self, other: StridedInterval, thresholds: Sequence[int] = (),
              eager: bool = True) -> StridedInterval:
        """Upper bound of both that makes increasing chains stabilise.

        A bound that grows jumps to the next threshold in the direction of growth when
        there is one. Without one it jumps on a classic trigger: the set would exceed
        WIDEN_MAX_SIZE elements, the step adds less than 20% new values, or the bound
        passes +-WIDEN_MAX_BOUND; otherwise the grown bound is kept, so short loops stay
        exact. A jump goes to infinity, or, when the thresholds include register-width
        limits (`WIDTH_LIMITS`, which the caller adds for the registers a branch may
        refine), to the next of those: the set then still is one 32- or 64-bit view, which
        a comparison can narrow. Only the side that moved jumps. Termination: a kept
        bound grows the element count by 20% and the count is capped, thresholds are
        finite, and the stride can only shrink to a divisor.

        `eager=False` leaves out the size and growth triggers (a grown bound moves to a
        threshold, or jumps past +-WIDEN_MAX_BOUND, or stays): the fixpoint uses it for
        the merges at a loop head before the classic joins are spent, a bounded number of
        times, so termination still rests on the eager form.
        """
        if self.is_bottom:
            return other
        joined = self.join(other)
        lo_grew = joined.lo != self.lo
        hi_grew = joined.hi != self.hi
        if not (lo_grew or hi_grew):
            return joined
        eager = eager and self._widen_eagerly(joined)
        ts = sorted(set(thresholds))
        limits = [t for t in ts if t in _LIMITS]
        if limits:
            ts = [t for t in ts if t not in _LIMITS]
        lo, hi = joined.lo, joined.hi
        if lo_grew and lo is not None:
            i = bisect.bisect_right(ts, lo)
            lo = ts[i - 1] if i else (_below(limits, lo) if eager or lo < -WIDEN_MAX_BOUND
                                      else lo)
        if hi_grew and hi is not None:
            i = bisect.bisect_left(ts, hi)
            hi = ts[i] if i < len(ts) else (_above(limits, hi) if eager or hi > WIDEN_MAX_BOUND
                                            else hi)
        return self._new(lo, hi, joined.stride, joined.residue)

    def _widen_eagerly(self, joined: StridedInterval) -> bool:
        old, new = self.size(), joined.size()
        if old is None or new is None or new > WIDEN_MAX_SIZE:
            return True
        return (new - old) * WIDEN_MIN_GROWTH_DIV < old

    def narrow(self, other: StridedInterval) -> StridedInterval:
        """Refine only infinite bounds of ``self`` from ``other`` (expects other <= self)."""
        if self.is_bottom or other.is_bottom:
            return other
        lo = other.lo if self.lo is None else self.lo
        hi = other.hi if self.hi is None else self.hi
        if self.stride == 0:
            return self
        return self._new(lo, hi, self.stride, self.residue)

    # ---------------------------------------------------------------- views
    def shift(self, k: int) -> StridedInterval:
        """Every element plus ``k``."""
        if self.is_bottom or k == 0:
            return self
        lo, hi = self.lo, self.hi
        return self._new(None if lo is None else lo + k, None if hi is None else hi + k,
                          self.stride, self.residue + k)

    def clip(self, lo: int | None, hi: int | None) -> StridedInterval:
        """Meet with the interval ``[lo, hi]`` (None = unbounded), keeping the stride."""
        if self.is_bottom:
            return self
        if self.stride == 0:
            inside = (lo is None or self.lo >= lo) and (hi is None or self.lo <= hi)
            return self if inside else type(self).bottom()
        a, b = self.lo, self.hi
        if lo is not None and (a is None or a < lo):
            a = lo
        if hi is not None and (b is None or b > hi):
            b = hi
        if a is self.lo and b is self.hi:
            return self
        return self._new(a, b, self.stride, self.residue)

    def wrap(self, w: int, signed: bool = False) -> StridedInterval:
        """Re-read every element as a w-bit value in the chosen view, soundly.

        Unchanged when nothing wraps; shifted when every element wraps by the same multiple
        of 2^w; split at the wrap point and re-joined when the set touches two blocks; else
        the whole view with stride gcd(stride, 2^w), which keeps power-of-two alignment.
        """
        view = _VIEWS.get((w, signed))
        if view is None:
            view = _VIEWS[(w, signed)] = view_range(w, signed)
        low, high = view
        lo, hi = self.lo, self.hi
        if self.is_bottom or (lo is not None and hi is not None and low <= lo and hi <= high):
            return self
        span = 1 << w
        if self.lo is None or self.hi is None:
            return self._envelope(low, high, span)
        q_lo, q_hi = (self.lo - low) // span, (self.hi - low) // span
        if q_lo == q_hi:
            return self.shift(-q_lo * span)
        if q_hi - q_lo > 1:
            return self._envelope(low, high, span)
        cut = low + q_hi * span
        below = self.clip(None, cut - 1).shift(-q_lo * span)
        above = self.clip(cut, None).shift(-q_hi * span)
        return below.join(above)

    def _envelope(self, low: int, high: int, span: int) -> StridedInterval:
        return self._new(low, high, gcd(self.stride, span), self.anchor())

    def restrict(self, readings: StridedInterval, w: int, signed: bool) -> StridedInterval:
        """The elements of ``self`` whose w-bit reading in the view lies in ``readings``
        (a set of that view, e.g. a `refine` result), kept in ``self``'s own view.

        ``self.meet(readings)`` is right only when ``self`` is in the same view: a set of
        signed readings {-4..4} met with the unsigned readings {100..255} would lose the
        bit patterns of -4..-1. Here a set in the other view meets ``readings`` re-read
        piecewise (exact); a set in neither view (wider than 2^w) is kept unless it is
        closed under adding 2^w (top, a congruence class dividing 2^w), which any
        reading's representatives then belong to.
        """
        if readings.is_bottom or self.is_bottom:
            return type(self).bottom()
        if self.fits(w, signed):
            return self.meet(readings)
        if self.fits(w, not signed):
            span = 1 << w
            # the readings both views share stay; the others move by 2^w
            low, high = view_range(w, not signed)
            shared = readings.clip(low, high)
            moved = readings.clip(high + 1, None).shift(-span) if signed is False else \
                readings.clip(None, low - 1).shift(span)
            return self.meet(shared).join(self.meet(moved))
        if self.lo is None and self.hi is None and (1 << w) % self.stride == 0:
            return self.meet(readings)
        return self

    def as_unsigned(self, w: int) -> StridedInterval:
        return self.wrap(w, False)

    def as_signed(self, w: int) -> StridedInterval:
        return self.wrap(w, True)

    # ---------------------------------------------------------------- comparisons
    def cmp(self, op: str, other: StridedInterval, w: int, signed: bool = False) -> Tri:
        """Does ``self OP other`` hold, reading both as w-bit values in the view?"""
        op, signed = _canonical_op(op, signed)
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        if a.is_bottom or b.is_bottom:
            return Tri.MAYBE  # unreachable: no answer is wrong, MAYBE claims nothing
        if op in ("gt", "ge"):
            a, b, op = b, a, "lt" if op == "gt" else "le"
        if op == "lt":
            return Tri.TRUE if a.hi < b.lo else Tri.FALSE if a.lo >= b.hi else Tri.MAYBE
        if op == "le":
            return Tri.TRUE if a.hi <= b.lo else Tri.FALSE if a.lo > b.hi else Tri.MAYBE
        same = a.is_singleton and a == b
        eq = Tri.TRUE if same else Tri.FALSE if a.meet(b).is_bottom else Tri.MAYBE
        return eq if op == "eq" else eq.negate()

    def refine(self, op: str, other: StridedInterval, w: int,
               signed: bool = False) -> tuple[StridedInterval, StridedInterval]:
        """(self where ``self OP y`` holds for some y in other, self where it fails for some y).

        Both results are in the comparison's view; they meet ``self`` with half-lines, or
        drop an end point for ``ne``/failed ``eq`` against a single value.
        """
        op, signed = _canonical_op(op, signed)
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        if a.is_bottom or b.is_bottom:
            return type(self).bottom(), type(self).bottom()
        lt_true, lt_false = a.clip(None, b.hi - 1), a.clip(b.lo, None)
        gt_true, gt_false = a.clip(b.lo + 1, None), a.clip(None, b.hi)
        eq_true, eq_false = a.meet(b), a._drop(b.singleton())
        table = {
            "lt": (lt_true, lt_false), "ge": (lt_false, lt_true),
            "gt": (gt_true, gt_false), "le": (gt_false, gt_true),
            "eq": (eq_true, eq_false), "ne": (eq_false, eq_true),
        }
        return table[op]

    def _drop(self, x: int | None) -> StridedInterval:
        """Self without ``x`` when that is representable (x an end point), else self."""
        if x is None or not self.contains(x):
            return self
        if self.is_singleton:
            return type(self).bottom()
        if x == self.lo:
            return self.clip(x + 1, None)
        if x == self.hi:
            return self.clip(None, x - 1)
        return self


#: Where widening may jump before infinity: the bounds of the 32- and 64-bit views. A
#: counter widened to 2^31 - 1 rather than +inf is still a set of 32-bit readings, which
#: the loop's exit comparison can narrow (`restrict`); a half-line is in no view.
WIDTH_LIMITS = (-(1 << 63), -(1 << 31), (1 << 31) - 1, (1 << 32) - 1, (1 << 63) - 1,
                (1 << 64) - 1)
_LIMITS = frozenset(WIDTH_LIMITS)


def _above(limits: list[int], x: int) -> int | None:
    i = bisect.bisect_left(limits, x)
    return limits[i] if i < len(limits) else None


def _below(limits: list[int], x: int) -> int | None:
    i = bisect.bisect_right(limits, x)
    return limits[i - 1] if i else None


def _canonical_op(op: str, signed: bool) -> tuple[str, bool]:
    """Map PTX's unsigned spellings (lo ls hi hs) onto lt le gt ge."""
    if op in _UNSIGNED_ALIASES:
        return _UNSIGNED_ALIASES[op], False
    if op not in _OPS:
        raise ValueError(f"unknown comparison {op!r}")
    return op, signed


_BOTTOM = StridedInterval(1, 0, 0)
_TOP = StridedInterval(None, None, 1)
# `self._new(lo, hi, stride, residue)`: the constructor behind a C-level memo, which the
# operations use (a plain `StridedInterval(...)` call costs a Python-level `__new__`).
StridedInterval._new = staticmethod(lru_cache(maxsize=_CACHE_LIMIT)(StridedInterval))
# The PTX operations (which evaluate small sets element by element) and the comparisons
# and refinements, remembered (`memoized`).
for _name in ("add", "sub", "neg", "mul", "mul_hi", "mul_wide", "mad", "abs", "min", "max",
              "div", "rem", "addc", "add_carry", "selp", "cvt", "and_", "or_", "xor", "not_",
              "shl", "shr", "popc", "clz", "brev", "bfe", "bfi", "cmp", "refine", "restrict"):
    setattr(StridedInterval, _name, memoized(getattr(StridedInterval, _name), exact=True))
del _name
