"""Arithmetic transfer functions of ``StridedInterval`` (a mixin; the class is in strided.py).

Pattern of every PTX operation: read the operands in the requested view
(``wrap(w, signed)``), compute the result set over the integers (element-wise when the
operands are small, an envelope otherwise), then ``wrap`` the result back into the view.
The answer is always a set inside the requested view, so a caller that asks for ``.s32``
gets signed readings and one that asks for ``.u32`` unsigned ones.

The ``math_*`` methods are exact integer arithmetic without wrapping: the affine domain
builds on them and checks for wrap-around itself.

PTX corner cases (PTX ISA, "Integer Arithmetic Instructions"): integer division or
remainder by zero yields an unspecified value, and so, conservatively, does the signed
overflow case ``MIN / -1``: both give the whole view.
"""

from __future__ import annotations

from math import gcd
from typing import TYPE_CHECKING, Callable

from .lattice import Tri

if TYPE_CHECKING:
    from .strided import StridedInterval as SI


def view_range(w: int, signed: bool) -> tuple[int, int]:
    """The integers a w-bit register reads as, in the signed or unsigned view."""
    low = -(1 << (w - 1)) if signed else 0
    return low, low + (1 << w) - 1


def wrap_int(x: int, w: int, signed: bool) -> int:
    """The reading of the low w bits of ``x`` in the chosen view."""
    x &= (1 << w) - 1
    return x - (1 << w) if signed and x >> (w - 1) else x


def trunc_div(x: int, y: int) -> int:
    """Integer quotient rounded toward zero, as PTX ``div`` computes it."""
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def trunc_rem(x: int, y: int) -> int:
    """Remainder with the sign of the dividend, as PTX ``rem`` computes it."""
    return x - y * trunc_div(x, y)


def _plus(x: int, y: int) -> int:
    return x + y


def _minus(x: int, y: int) -> int:
    return x - y


def _math_plus(a: SI, b: SI) -> SI:
    return a.math_add(b)


def _math_minus(a: SI, b: SI) -> SI:
    return a.math_add(b.math_neg())


class ArithmeticOps:
    """Integer arithmetic on strided intervals; mixed into ``StridedInterval``."""

    __slots__ = ()

    # ------------------------------------------------------------ exact integer arithmetic
    def math_add(self: SI, other: SI) -> SI:
        """``{x + y}`` over the integers: bounds add, strides combine by gcd (the exact hull)."""
        if self.is_bottom or other.is_bottom:
            return type(self).bottom()
        lo = None if self.lo is None or other.lo is None else self.lo + other.lo
        hi = None if self.hi is None or other.hi is None else self.hi + other.hi
        step = gcd(self.stride, other.stride)
        return self._new(lo, hi, step, self.anchor() + other.anchor())

    def math_neg(self: SI) -> SI:
        return self.scale(-1)

    def scale(self: SI, k: int) -> SI:
        """``{k * x}``: exact, the stride is multiplied by ``|k|``."""
        if self.is_bottom:
            return self
        if k == 0:
            return type(self).const(0)
        lo = None if self.lo is None else self.lo * k
        hi = None if self.hi is None else self.hi * k
        if k < 0:
            lo, hi = hi, lo
        return self._new(lo, hi, self.stride * abs(k), self.anchor() * k)

    def math_mul(self: SI, other: SI) -> SI:
        """``{x * y}`` envelope: corner products bound it, and with ``x = a + i*s`` and
        ``y = b + j*t`` every product is ``a*b`` modulo ``gcd(a*t, b*s, s*t)``."""
        if self.is_bottom or other.is_bottom:
            return type(self).bottom()
        if other.is_singleton:
            return self.scale(other.lo)
        if self.is_singleton:
            return other.scale(self.lo)
        a, b, s, t = self.anchor(), other.anchor(), self.stride, other.stride
        step = gcd(a * t, b * s, s * t)
        if not (self.is_finite and other.is_finite):
            return self._new(None, None, step, a * b)
        corners = [x * y for x in (self.lo, self.hi) for y in (other.lo, other.hi)]
        return self._new(min(corners), max(corners), step, a * b)

    def floordiv_pow2(self: SI, k: int) -> SI:
        """``{floor(x / 2^k)}``: monotone, and exact on strides that 2^k divides."""
        if self.is_bottom or k == 0:
            return self
        lo = None if self.lo is None else self.lo >> k
        hi = None if self.hi is None else self.hi >> k
        if self.stride % (1 << k) == 0:
            return self._new(lo, hi, self.stride >> k, self.anchor() >> k)
        return self._new(lo, hi, 1)

    def clamp(self: SI, low: int, high: int) -> SI:
        """``{min(max(x, low), high)}`` (saturation)."""
        if self.is_bottom:
            return self
        out = self.clip(low, high)
        if self.lo is None or self.lo < low:
            out = out.join(type(self).const(low))
        if self.hi is None or self.hi > high:
            out = out.join(type(self).const(high))
        return out

    # ------------------------------------------------------------ PTX operations
    def _binary(self: SI, other: SI, w: int, signed: bool,
                concrete: Callable[[int, int], int], abstract: Callable[[SI, SI], SI]) -> SI:
        """Read both in the view, compute exactly when small, else envelope, then wrap."""
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        exact = a.exact_map(concrete, b, w=w, signed=signed)
        return exact if exact is not None else abstract(a, b).wrap(w, signed)

    def add(self: SI, other: SI, w: int, signed: bool = False, sat: bool = False) -> SI:
        """``add{.sat}``: wraps at w bits, or clamps to the view with ``sat``."""
        if sat:
            a, b = self.wrap(w, signed), other.wrap(w, signed)
            return a.math_add(b).clamp(*view_range(w, signed))
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        out = a.math_add(b)
        if out.fits(w, signed):
            return out  # no sum wraps: the envelope is the hull of the sums, exactly
        return a._binary(b, w, signed, _plus, _math_plus)

    def sub(self: SI, other: SI, w: int, signed: bool = False, sat: bool = False) -> SI:
        """``sub{.sat}``."""
        if sat:
            a, b = self.wrap(w, signed), other.wrap(w, signed)
            return a.math_add(b.math_neg()).clamp(*view_range(w, signed))
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        out = a.math_add(b.math_neg())
        if out.fits(w, signed):
            return out  # no difference wraps: as for add
        return a._binary(b, w, signed, _minus, _math_minus)

    def neg(self: SI, w: int, signed: bool = False) -> SI:
        """``neg``: ``-MIN`` wraps back to ``MIN``."""
        return self.wrap(w, signed).math_neg().wrap(w, signed)

    def addc(self: SI, other: SI, carry_in: SI, w: int, signed: bool = False) -> SI:
        """``addc``: ``a + b + CC.CF`` with the carry flag given as a 0/1 set."""
        cin = carry_in.meet(type(self).range(0, 1))
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        return a.math_add(b).math_add(cin).wrap(w, signed)

    def add_carry(self: SI, other: SI, w: int, carry_in: SI | None = None) -> SI:
        """Carry out of ``add.cc``/``addc.cc`` as a 0/1 set: bit w of the unsigned sum."""
        total = self.as_unsigned(w).math_add(other.as_unsigned(w))
        if carry_in is not None:
            total = total.math_add(carry_in.meet(type(self).range(0, 1)))
        return total.floordiv_pow2(w)

    def mul(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``mul.lo``: the low w bits are the same whichever view the factors use."""
        return self._binary(other, w, signed, lambda x, y: x * y, lambda a, b: a.math_mul(b))

    def mul_hi(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``mul.hi``: the high w bits of the 2w-bit product of the views."""
        return self._binary(other, w, signed, lambda x, y: (x * y) >> w,
                            lambda a, b: a.math_mul(b).floordiv_pow2(w))

    def mul_wide(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``mul.wide``: the full product, a 2w-bit value (it never wraps)."""
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        exact = a.exact_map(lambda x, y: x * y, b, w=2 * w, signed=signed)
        return exact if exact is not None else a.math_mul(b).wrap(2 * w, signed)

    def mad(self: SI, b: SI, c: SI, w: int, signed: bool = False, mode: str = "lo") -> SI:
        """``mad.lo`` / ``mad.hi`` (w-bit ``c``) / ``mad.wide`` (2w-bit ``c``)."""
        if mode == "lo":
            return self.mul(b, w, signed).add(c, w, signed)
        if mode == "hi":
            return self.mul_hi(b, w, signed).add(c, w, signed)
        if mode == "wide":
            return self.mul_wide(b, w, signed).add(c, 2 * w, signed)
        raise ValueError(f"unknown mad mode {mode!r}")

    def abs(self: SI, w: int) -> SI:
        """``abs.s``: the signed view, ``abs(MIN)`` wraps to ``MIN`` as on the hardware."""
        a = self.wrap(w, True)
        exact = a.exact_map(abs, w=w, signed=True)
        if exact is not None:
            return exact
        return a.clip(0, None).join(a.clip(None, -1).math_neg()).wrap(w, True)

    def min(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``min``: an element of ``a`` not above ``max b``, or of ``b`` not above ``max a``."""
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        if a.is_bottom or b.is_bottom:
            return type(self).bottom()
        return a.clip(None, b.hi).join(b.clip(None, a.hi))

    def max(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``max``: the mirror image of ``min``."""
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        if a.is_bottom or b.is_bottom:
            return type(self).bottom()
        return a.clip(b.lo, None).join(b.clip(a.lo, None))

    def _undefined_division(self: SI, divisor: SI, w: int, signed: bool) -> bool:
        """Division by zero, or the signed ``MIN / -1`` overflow, may happen."""
        low = view_range(w, signed)[0]
        return divisor.contains(0) or (signed and self.contains(low) and divisor.contains(-1))

    def div(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``div``: truncating; the whole view when the divisor may be zero."""
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        if a.is_bottom or b.is_bottom:
            return type(self).bottom()
        if a._undefined_division(b, w, signed):
            return type(self).full(w, signed)
        exact = a.exact_map(trunc_div, b, w=w, signed=signed)
        if exact is not None:
            return exact
        out = type(self).bottom()
        for part in (b.clip(None, -1), b.clip(1, None)):
            if not part.is_bottom:
                out = out.join(a._div_by_one_sign(part))
        return out.wrap(w, signed)

    def _div_by_one_sign(self: SI, divisor: SI) -> SI:
        """Quotients for a divisor of one sign: monotone in each operand, so the corners
        bound them; a single divisor dividing the stride keeps the progression."""
        k = divisor.singleton()
        if k is not None and self.stride % k == 0 and (self.lo >= 0 or self.hi <= 0):
            q1, q2 = trunc_div(self.lo, k), trunc_div(self.hi, k)
            return type(self).range(min(q1, q2), max(q1, q2), self.stride // abs(k))
        qs = [trunc_div(x, y) for x in (self.lo, self.hi) for y in (divisor.lo, divisor.hi)]
        return type(self).range(min(qs), max(qs))

    def rem(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``rem``: sign of the dividend, magnitude below both ``|x|`` and ``max |y|``, and
        ``x - q*y`` keeps x's residue modulo gcd(stride of x, every y)."""
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        if a.is_bottom or b.is_bottom:
            return type(self).bottom()
        if a._undefined_division(b, w, signed):
            return type(self).full(w, signed)
        exact = a.exact_map(trunc_rem, b, w=w, signed=signed)
        if exact is not None:
            return exact
        smallest = b._smallest_magnitude()
        if -smallest < a.lo and a.hi < smallest:
            return a  # |x| < |y| for every pair: the remainder is x itself
        largest = max(abs(b.lo), abs(b.hi)) - 1
        lo = max(a.lo, -largest) if a.lo < 0 else 0
        hi = min(a.hi, largest) if a.hi > 0 else 0
        step = gcd(a.stride, b.lo, b.stride)
        return self._new(lo, hi, step, a.lo)

    def _smallest_magnitude(self: SI) -> int:
        """``min |y|`` over a finite set without 0."""
        pos, neg = self.clip(1, None), self.clip(None, -1)
        if pos.is_bottom or neg.is_bottom:
            return -neg.hi if pos.is_bottom else pos.lo
        return min(pos.lo, -neg.hi)

    def selp(self: SI, other: SI, w: int, signed: bool = False, pred: Tri = Tri.MAYBE) -> SI:
        """``selp``: ``self`` if the predicate holds, ``other`` if not, the join if unknown."""
        a, b = self.wrap(w, signed), other.wrap(w, signed)
        if pred is Tri.TRUE:
            return a
        return b if pred is Tri.FALSE else a.join(b)

    def cvt(self: SI, from_w: int, from_signed: bool, to_w: int, to_signed: bool,
            sat: bool = False) -> SI:
        """Integer ``cvt``: reading the source in its own view is the sign- or zero-
        extension; wrapping at the destination width is the truncation; ``.sat`` clamps."""
        v = self.wrap(from_w, from_signed)
        return v.clamp(*view_range(to_w, to_signed)) if sat else v.wrap(to_w, to_signed)
