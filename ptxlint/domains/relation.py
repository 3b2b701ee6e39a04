"""Links: an affine relation between a register and one or two other registers.

`Link(a, k, b, kb, off, ...)` for register d (kept in `State.conds` beside the
predicates' comparisons, or built where it is used: `interp/links.py`) says: on this
path, in every thread,
``R(d) - k * R(a) - kb * R(b)`` lies in ``off``, where ``R`` reads a register's bits as
an integer of the link's views (d at ``(w, signed)``, a at ``(xw, xsigned)``, b at
``(w, bsigned)``; for a pointer into an object, its offset). ``k`` and ``kb`` are known
integers (``b`` is optional); ``off`` is a set: a constant or the values of a
non-register part when d was written (``d = 4*x + base``), or a bound (``d = min(x,
c)``: ``off = (-inf, 0]``, ``d <= x``).

A link is made only when the definition cannot wrap: ``k * A + kb * B + off`` (A, B:
the operands' values) fits d's view, so the relation holds over the integers, not just
modulo 2^w. It holds until d, a or b is written again (then `State.assign` drops it,
as it drops a comparison that read the register), whatever refinement later learns
about them: refinement narrows the sets, never the values a thread holds.

What it buys (`interp/relations.py`, `interp/refine.py`): when a branch narrows a or
b, d narrows to ``k * a + kb * b + off`` (`forward`); when it narrows d, a and b narrow
to what is left (`backward`), and the registers linked to those in turn. An address
computed before its guard, ``a + 4*i`` with ``if (i < n)`` after it, is then bounded
by the guard.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .state import mention
from .strided import StridedInterval as SI
from .strided import view_range

_ZERO = SI.const(0)


@dataclass(frozen=True, slots=True)
class Link:
    """``R(d) - k * R(a) - kb * R(b) in off``; ``a``/``b`` are register keys (named like
    a `Condition`'s operands: `State` drops the link when either is written)."""

    a: str
    k: int
    off: SI
    w: int
    signed: bool
    xw: int
    xsigned: bool
    b: str | None = None
    kb: int = 0
    bsigned: bool = False

    def kept(self) -> "Link":
        """This link, about to be kept in a state (which must then watch a and b)."""
        mention(self.a, self.b)
        return self

    other = None  # a Condition's third register: `State` reads a, b and other of a fact

    def mentions(self, key: str) -> bool:
        return key == self.a or key == self.b

    @staticmethod
    def make(a: str, k: int, xs: SI, off: SI, w: int, signed: bool, xw: int,
             xsigned: bool, b: str | None = None, kb: int = 0, bs: SI = _ZERO,
             bsigned: bool = False) -> "Link | None":
        """The link ``d = k * a + kb * b + off`` when it never wraps: ``xs`` and ``bs``
        are a's and b's values (read at ``(xw, xsigned)`` and ``(w, bsigned)``), d is read
        at ``(w, signed)`` or, failing that, the other view of w bits. None when neither
        view holds the sum."""
        if k == 0 or xs.is_bottom or off.is_bottom or bs.is_bottom:
            return None
        total = xs.scale(k).math_add(bs.scale(kb)).math_add(off)
        for view in (signed, not signed):
            if total.fits(w, view):
                return Link(a, k, off, w, view, xw, xsigned, b, kb if b else 0, bsigned)
        return None

    # ---- lattice: links of one shape (same registers, factors and views) order by offset
    def _shape(self) -> tuple:
        return (self.a, self.k, self.b, self.kb, self.w, self.signed, self.xw, self.xsigned,
                self.bsigned)

    def leq(self, other: object) -> bool:
        """Every execution this link allows, `other` allows too."""
        return other.__class__ is Link and self._shape() == other._shape() and \
            self.off.leq(other.off)

    def join(self, other: object) -> "Link | None":
        """The link both states' executions satisfy (None: no common shape)."""
        if other.__class__ is not Link or self._shape() != other._shape():
            return None
        return replace(self, off=self.off.join(other.off))

    def widen(self, other: object) -> "Link | None":
        """At a loop head: the offset widens like a value (`StridedInterval.widen`)."""
        if other.__class__ is not Link or self._shape() != other._shape():
            return None
        return replace(self, off=self.off.widen(other.off))

    def _a(self, x: SI) -> SI:
        return x.wrap(self.xw, self.xsigned)

    def _b(self, x: SI | None) -> SI:
        return _ZERO if self.b is None or x is None else x.wrap(self.w, self.bsigned)

    def forward(self, a: SI, b: SI | None = None) -> SI:
        """The readings of d allowed by a's and b's sets (in any representation)."""
        total = self._a(a).scale(self.k).math_add(self._b(b).scale(self.kb))
        return _within(total.math_add(self.off), self.w, self.signed)

    def backward(self, d: SI, b: SI | None = None) -> SI:
        """The readings of a allowed by d's and b's sets: ``(d - kb*b - off) / k``."""
        rest = d.wrap(self.w, self.signed).math_add(
            self._b(b).scale(-self.kb)).math_add(self.off.math_neg())
        return _within(_divide(rest, self.k), self.xw, self.xsigned)

    def backward_b(self, d: SI, a: SI) -> SI:
        """The readings of b allowed by d's and a's sets: ``(d - k*a - off) / kb``."""
        rest = d.wrap(self.w, self.signed).math_add(
            self._a(a).scale(-self.k)).math_add(self.off.math_neg())
        return _within(_divide(rest, self.kb), self.w, self.bsigned)

    def __str__(self) -> str:
        terms = [f"{'' if self.k == 1 else f'{self.k}*'}{self.a}"]
        if self.b is not None:
            terms.append(f"{'' if self.kb == 1 else f'{self.kb}*'}{self.b}")
        return " + ".join(terms + [str(self.off)])


def _divide(si: SI, k: int) -> SI:
    """The integers x with ``k * x`` in si (the interval between, for |k| > 1)."""
    if k in (1, -1) or si.is_bottom:
        return si.scale(k)
    lo, hi = si.lo, si.hi
    if k < 0:
        k, lo, hi = -k, None if hi is None else -hi, None if lo is None else -lo
    return SI.range(None if lo is None else -(-lo // k), None if hi is None else hi // k)


def _within(si: SI, w: int, signed: bool) -> SI:
    """``si`` cut to the readings a (w, signed) view has."""
    return si.clip(*view_range(w, signed))


__all__ = ["Link"]
