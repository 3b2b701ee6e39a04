"""Bitwise and shift transfer functions of ``StridedInterval`` (a mixin; see strided.py).

Bit operations act on the unsigned view and answer in the requested view. Small operand
sets are evaluated element by element; otherwise:

* bounds of AND/OR/XOR over two unsigned intervals come from Warren's bit-by-bit methods
  (Hacker's Delight, 2nd ed., section 4-3; angr/claripy uses the same in
  ``warren_methods.py``), which are exact for intervals;
* strides give known trailing bits: a set with stride ``2^t * odd`` fixes its low t bits
  (a single value fixes all w), and known bits combine position by position, which is what
  keeps ``and``-masked or ``or``-tagged addresses aligned;
* masks with all-low or all-high bits are modulo / floor and so stay exact;
* shifts enumerate the amounts, which PTX clamps to ``w``, so there are at most w+1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .strided import StridedInterval as SI

# ------------------------------------------------------------------ Warren's interval bounds
# Each takes unsigned intervals [a, b] and [c, d] of width w and returns the exact minimum
# or maximum of x OP y over them: scan from the top bit for a bit that can be traded to
# make the result smaller (larger) while staying inside the interval.


def _min_or(a: int, b: int, c: int, d: int, w: int) -> int:
    m = 1 << (w - 1)
    while m:
        if ~a & c & m:
            t = (a | m) & -m
            if t <= b:
                a = t
                break
        elif a & ~c & m:
            t = (c | m) & -m
            if t <= d:
                c = t
                break
        m >>= 1
    return a | c


def _max_or(a: int, b: int, c: int, d: int, w: int) -> int:
    m = 1 << (w - 1)
    while m:
        if b & d & m:
            t = (b - m) | (m - 1)
            if t >= a:
                b = t
                break
            t = (d - m) | (m - 1)
            if t >= c:
                d = t
                break
        m >>= 1
    return b | d


def _min_and(a: int, b: int, c: int, d: int, w: int) -> int:
    m = 1 << (w - 1)
    while m:
        if ~a & ~c & m:
            t = (a | m) & -m
            if t <= b:
                a = t
                break
            t = (c | m) & -m
            if t <= d:
                c = t
                break
        m >>= 1
    return a & c


def _max_and(a: int, b: int, c: int, d: int, w: int) -> int:
    m = 1 << (w - 1)
    while m:
        if b & ~d & m:
            t = (b & ~m) | (m - 1)
            if t >= a:
                b = t
                break
        elif ~b & d & m:
            t = (d & ~m) | (m - 1)
            if t >= c:
                d = t
                break
        m >>= 1
    return b & d


def _min_xor(a: int, b: int, c: int, d: int, w: int) -> int:
    m = 1 << (w - 1)
    while m:
        if ~a & c & m:
            t = (a | m) & -m
            if t <= b:
                a = t
        elif a & ~c & m:
            t = (c | m) & -m
            if t <= d:
                c = t
        m >>= 1
    return a ^ c


def _max_xor(a: int, b: int, c: int, d: int, w: int) -> int:
    m = 1 << (w - 1)
    while m:
        if b & d & m:
            t = (b - m) | (m - 1)
            if t >= a:
                b = t
            else:
                t = (d - m) | (m - 1)
                if t >= c:
                    d = t
        m >>= 1
    return b ^ d


_CONCRETE: dict[str, Callable[[int, int], int]] = {
    "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}
_BOUNDS = {"and": (_min_and, _max_and), "or": (_min_or, _max_or), "xor": (_min_xor, _max_xor)}


# ------------------------------------------------------------------ known low bits
def low_bits(si: SI, w: int) -> tuple[int, int]:
    """(t, v): every element of a non-empty set ends in the t bits of v."""
    if si.is_singleton:
        return w, si.lo & ((1 << w) - 1)
    t = min((si.stride & -si.stride).bit_length() - 1, w)
    return t, si.anchor() & ((1 << t) - 1)


def combine_low_bits(op: str, a: tuple[int, int], b: tuple[int, int], w: int) -> tuple[int, int]:
    """Known low bits of ``x OP y`` from those of x and y: the longest run from bit 0 in
    which each result bit is fixed (both known, or a known 0 for AND / 1 for OR)."""
    (ta, va), (tb, vb) = a, b
    value = 0
    for i in range(w):
        ka, kb = i < ta, i < tb
        xa, xb = (va >> i) & 1, (vb >> i) & 1
        known = ka and kb
        if op == "and":
            known = known or (ka and not xa) or (kb and not xb)
        elif op == "or":
            known = known or (ka and xa == 1) or (kb and xb == 1)
        if not known:
            return i, value
        value |= _CONCRETE[op](xa, xb) << i
    return w, value


def bit_reverse(x: int, n: int) -> int:
    """The low n bits of x in reverse order."""
    return int(format(x & ((1 << n) - 1), f"0{n}b")[::-1], 2) if n else 0


class BitwiseOps:
    """Bit operations and shifts on strided intervals; mixed into ``StridedInterval``."""

    __slots__ = ()

    def _bitwise(self: SI, other: SI, w: int, signed: bool, op: str) -> SI:
        a, b = self.as_unsigned(w), other.as_unsigned(w)
        if a.is_bottom or b.is_bottom:
            return type(self).bottom()
        exact = a.exact_map(_CONCRETE[op], b, w=w, signed=signed)
        if exact is not None:
            return exact
        special = a._mask_case(b, w, op)
        if special is None:
            special = b._mask_case(a, w, op)
        if special is not None:
            return special.wrap(w, signed)
        lo_fn, hi_fn = _BOUNDS[op]
        lo = lo_fn(a.lo, a.hi, b.lo, b.hi, w)
        hi = hi_fn(a.lo, a.hi, b.lo, b.hi, w)
        t, v = combine_low_bits(op, low_bits(a, w), low_bits(b, w), w)
        if t >= w:
            return type(self).const(v).wrap(w, signed)
        return self._new(lo, hi, 1 << t, v).wrap(w, signed)

    def _mask_case(self: SI, mask: SI, w: int, op: str) -> SI | None:
        """Exact answers for ``x OP m`` with m a single all-low or all-high bit mask."""
        m, full = mask.singleton(), (1 << w) - 1
        if m is None:
            return None
        low_k = m.bit_length() if m & (m + 1) == 0 else None  # m = 2^k - 1
        inv = full ^ m
        high_k = inv.bit_length() if inv & (inv + 1) == 0 else None  # m = ~(2^k - 1)
        if op == "and" and low_k is not None:
            return type(self).const(0) if low_k == 0 else self.wrap(low_k, False)
        if op == "and" and high_k is not None:
            return self.floordiv_pow2(high_k).scale(1 << high_k)
        if op == "or" and low_k is not None:
            return self.floordiv_pow2(low_k).scale(1 << low_k).shift(m)
        if op == "xor" and m in (0, full):
            return self if m == 0 else self.math_neg().shift(full)
        return None

    def and_(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``and``."""
        return self._bitwise(other, w, signed, "and")

    def or_(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``or``."""
        return self._bitwise(other, w, signed, "or")

    def xor(self: SI, other: SI, w: int, signed: bool = False) -> SI:
        """``xor``."""
        return self._bitwise(other, w, signed, "xor")

    def not_(self: SI, w: int, signed: bool = False) -> SI:
        """``not``: ``-1 - x``, re-read in the view; exact (a reflection of the view)."""
        return self.wrap(w, signed).math_neg().shift(-1).wrap(w, signed)

    def _shift_amounts(self: SI, amount: SI, w: int) -> list[int]:
        """Distinct effective amounts: a ``.u32`` operand, amounts above w clamped to w."""
        n = amount.as_unsigned(32)
        ks = sorted(n.clip(0, w - 1).gamma()) if not n.is_bottom else []
        return ks + [w] * (not n.is_bottom and not n.clip(w, None).is_bottom)

    def shl(self: SI, amount: SI, w: int, signed: bool = False) -> SI:
        """``shl``: one multiplication per possible amount, joined."""
        a, out = self.wrap(w, signed), type(self).bottom()
        if a.is_bottom:
            return a
        for k in self._shift_amounts(amount, w):
            out = out.join(type(self).const(0) if k >= w else a.scale(1 << k).wrap(w, signed))
        return out

    def shr(self: SI, amount: SI, w: int, signed: bool = False) -> SI:
        """``shr``: floor division by 2^k of the view (arithmetic when signed, logical
        otherwise); the clamped amount w gives 0, or -1/0 for signed values."""
        a, out = self.wrap(w, signed), type(self).bottom()
        if a.is_bottom:
            return a
        for k in self._shift_amounts(amount, w):
            exact = a.exact_map(lambda x: x >> k)  # noqa: B023 (used immediately)
            out = out.join(exact if exact is not None else a.floordiv_pow2(k))
        return out

    def popc(self: SI, w: int) -> SI:
        """``popc``: at most the bit length of the maximum, minus the known zero low bits."""
        a = self.as_unsigned(w)
        exact = a.exact_map(lambda x: bin(x).count("1"))
        if exact is not None:  # also bottom
            return exact
        t, v = low_bits(a, w)
        ones = bin(v).count("1")
        lower = max(1 if a.lo > 0 else 0, ones)
        upper = min(w, a.hi.bit_length() - (t - ones))
        return type(self).range(lower, upper)

    def clz(self: SI, w: int) -> SI:
        """``clz``: ``w - bit_length``, monotone decreasing in the unsigned value."""
        a = self.as_unsigned(w)
        if a.is_bottom:
            return a
        return type(self).range(w - a.hi.bit_length(), w - a.lo.bit_length())

    def brev(self: SI, w: int, signed: bool = False) -> SI:
        """``brev``: known low bits become known high bits, and zero high bits (values
        below 2^L) become zero low bits, i.e. a stride of 2^(w-L)."""
        a = self.as_unsigned(w)
        exact = a.exact_map(lambda x: bit_reverse(x, w), w=w, signed=signed)
        if exact is not None:  # also bottom
            return exact
        t, v = low_bits(a, w)
        high = bit_reverse(v, t) << (w - t)
        step = 1 << (w - a.hi.bit_length())
        return self._new(high, high + (1 << (w - t)) - 1, step, 0).wrap(w, signed)

    def _field_operands(self: SI, pos: SI, length: SI) -> tuple[SI, SI]:
        """PTX uses only bits 0..7 of the ``.u32`` position and length operands."""
        byte = type(self).const(255)
        return pos.and_(byte, 32), length.and_(byte, 32)

    def bfe(self: SI, pos: SI, length: SI, w: int, signed: bool = False) -> SI:
        """``bfe``: extract ``length`` bits at ``pos``, zero- or sign-extended."""
        a = self.as_unsigned(w)
        p, n = self._field_operands(pos, length)
        if a.is_bottom or p.is_bottom or n.is_bottom:
            return type(self).bottom()
        if p.size() * n.size() <= 64:
            out = type(self).bottom()
            for pp in sorted(p.gamma()):
                for nn in sorted(n.gamma()):
                    out = out.join(a._bfe_fixed(pp, nn, w, signed))
            return out
        width = min(n.hi, w)
        if width == 0:
            return type(self).const(0)
        half = 1 << (width - 1)
        return type(self).range(-half, half - 1) if signed else type(self).range(0, 2 * half - 1)

    def _bfe_fixed(self: SI, p: int, n: int, w: int, signed: bool) -> SI:
        if n == 0 or (p >= w and not signed):
            return type(self).const(0)
        if p >= w:  # every bit is the sign bit a[msb]
            return self.as_signed(w).floordiv_pow2(w - 1)
        top = min(p + n - 1, w - 1)
        m = top - p + 1
        if not signed:
            return self.floordiv_pow2(p).and_(type(self).const((1 << m) - 1), w)
        # move the field's top bit to the sign bit, then shift arithmetically back down
        return self.shl(type(self).const(w - 1 - top), w, signed=True).floordiv_pow2(w - m)

    def bfi(self: SI, base: SI, pos: SI, length: SI, w: int, signed: bool = False) -> SI:
        """``bfi``: insert the low ``length`` bits of self into ``base`` at ``pos``."""
        a, b = self.as_unsigned(w), base.as_unsigned(w)
        p, n = self._field_operands(pos, length)
        if a.is_bottom or b.is_bottom or p.is_bottom or n.is_bottom:
            return type(self).bottom()
        if p.size() * n.size() > 64:
            return type(self).full(w, signed)
        out = type(self).bottom()
        for pp in sorted(p.gamma()):
            for nn in sorted(n.gamma()):
                out = out.join(a._bfi_fixed(b, pp, nn, w, signed))
        return out

    def _bfi_fixed(self: SI, base: SI, p: int, n: int, w: int, signed: bool) -> SI:
        if n == 0 or p >= w:
            return base.wrap(w, signed)
        mask = (1 << min(n, w - p)) - 1
        cls = type(self)
        field = self.and_(cls.const(mask), w).shl(cls.const(p), w)
        kept = base.and_(cls.const(((1 << w) - 1) ^ (mask << p)), w)
        return kept.add(field, w, signed)  # disjoint bits: the sum is the OR, and exact
