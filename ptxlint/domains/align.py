"""Power-of-two congruences: ``x = residue (mod 2^bits)``, the alignment facts of addresses.

``bits`` runs from 0 (top: nothing known) to ``MAX_BITS`` = 9 (mod 512, the precision
limit: nothing in PTX needs more than 256-byte alignment); bottom is separate. A finite
height lattice, so ``widen`` is ``join`` and ``narrow`` is ``meet``.

Congruence modulo 2^k survives wrapping modulo 2^w only while ``k <= w``, so every
operation takes the register width and caps ``bits`` at it. Within that cap the fact is
the same in the signed and unsigned views. Used to prove e.g. that a ``ld.v4.f32`` address
is a multiple of 16 (``is_multiple_of(16)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .interning import InternTable, new_instance, set_field
from .strided import StridedInterval
from .strided_bits import combine_low_bits

MAX_BITS = 9


def _tz(x: int) -> int:
    """Trailing zero bits of x; MAX_BITS for 0 (every power we track divides 0)."""
    return MAX_BITS if x == 0 else min((x & -x).bit_length() - 1, MAX_BITS)


_CACHE = InternTable(1 << 16)  # (bits, residue), raw or normal -> instance
_new, _set = new_instance, set_field


@dataclass(frozen=True, init=False, eq=False)
class Congruence:
    """``{x : x = residue (mod 2^bits)}``; ``bits = -1`` is bottom; ``0 <= residue < 2^bits``.

    ``Congruence(bits, residue=0)`` normalises its arguments; instances are interned.
    """

    __slots__ = ("bits", "residue", "_hash")

    bits: int
    residue: int

    def __new__(cls, bits: int, residue: int = 0) -> Congruence:
        key = (bits, residue)
        hit = _CACHE.get(key)
        if hit is not None and cls is Congruence:
            return hit
        b = max(-1, min(bits, MAX_BITS))
        r = 0 if b <= 0 else residue % (1 << b)
        norm = (b, r)
        out = _CACHE.get(norm) if cls is Congruence else None
        if out is None:
            out = _new(cls)
            _set(out, "bits", b)
            _set(out, "residue", r)
            _set(out, "_hash", hash(norm))
            if cls is Congruence:
                _CACHE.keep(norm, out)
        if cls is Congruence:
            _CACHE[key] = out
        return out

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.bits == other.bits and self.residue == other.residue

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (type(self), (self.bits, self.residue))

    # ---------------------------------------------------------------- constructors
    @classmethod
    def bottom(cls) -> Congruence:
        return _BOTTOM if cls is Congruence else cls(-1)

    @classmethod
    def top(cls) -> Congruence:
        return _TOP if cls is Congruence else cls(0)

    @classmethod
    def const(cls, x: int) -> Congruence:
        return cls(MAX_BITS, x)

    @classmethod
    def of_interval(cls, si: StridedInterval, w: int = 64) -> Congruence:
        """The power-of-two part of a strided interval's stride, with its residue."""
        if si.is_bottom:
            return cls.bottom()
        if si.is_singleton:
            return cls.const(si.anchor()).cap(w)
        return cls(_tz(si.stride), si.anchor()).cap(w)

    def as_strided(self) -> StridedInterval:
        """The same set as a (two-sided infinite) strided interval, for reductions."""
        if self.is_bottom:
            return StridedInterval.bottom()
        return StridedInterval.congruent(self.residue, 1 << self.bits)

    # ---------------------------------------------------------------- queries
    @property
    def is_bottom(self) -> bool:
        return self.bits < 0

    @property
    def is_top(self) -> bool:
        return self.bits == 0

    def contains(self, x: int) -> bool:
        return not self.is_bottom and (x - self.residue) % (1 << self.bits) == 0

    def is_multiple_of(self, n: int) -> bool:
        """Every value is a multiple of the power of two ``n`` (vacuous for bottom)."""
        if n <= 0 or n & (n - 1):
            raise ValueError("alignment must be a power of two")
        if self.is_bottom:
            return True
        j = n.bit_length() - 1
        return j <= self.bits and self.residue % n == 0

    def cap(self, w: int) -> Congruence:
        """Forget what a w-bit register cannot keep: bits above w."""
        return self if self.bits <= w else Congruence(w, self.residue)

    def __str__(self) -> str:
        if self.is_bottom:
            return "bottom"
        return "any" if self.is_top else f"{self.residue} mod {1 << self.bits}"

    # ---------------------------------------------------------------- lattice
    def leq(self, other: Congruence) -> bool:
        if self.is_bottom:
            return True
        if other.is_bottom or self.bits < other.bits:
            return False
        return self.residue % (1 << other.bits) == other.residue

    def join(self, other: Congruence) -> Congruence:
        """Largest modulus on which both residues agree."""
        if self.is_bottom:
            return other
        if other.is_bottom:
            return self
        agree = _tz(self.residue ^ other.residue)
        return Congruence(min(self.bits, other.bits, agree), self.residue)

    def meet(self, other: Congruence) -> Congruence:
        """The finer class when they are compatible, else bottom (exact)."""
        if self.is_bottom or other.is_bottom:
            return Congruence.bottom()
        k = min(self.bits, other.bits)
        if (self.residue - other.residue) % (1 << k):
            return Congruence.bottom()
        return self if self.bits >= other.bits else other

    def widen(self, other: Congruence, thresholds: Sequence[int] = ()) -> Congruence:
        return self.join(other)  # at most MAX_BITS + 1 strict increases

    def narrow(self, other: Congruence) -> Congruence:
        return self.meet(other)

    # ---------------------------------------------------------------- operations
    def add(self, other: Congruence, w: int = 64) -> Congruence:
        if self.is_bottom or other.is_bottom:
            return Congruence.bottom()
        return Congruence(min(self.bits, other.bits), self.residue + other.residue).cap(w)

    def neg(self, w: int = 64) -> Congruence:
        return self if self.is_bottom else Congruence(self.bits, -self.residue).cap(w)

    def sub(self, other: Congruence, w: int = 64) -> Congruence:
        return self.add(other.neg(w), w)

    def mul(self, other: int | Congruence, w: int = 64) -> Congruence:
        """With ``x = r1 + q1*2^k1`` and ``y = r2 + q2*2^k2`` the product is ``r1*r2``
        modulo ``2^min(k1 + tz(r2), k2 + tz(r1), k1 + k2)``."""
        o = Congruence.const(other) if isinstance(other, int) else other
        if self.is_bottom or o.is_bottom:
            return Congruence.bottom()
        k1, k2 = self.bits, o.bits
        bits = min(k1 + _tz(o.residue), k2 + _tz(self.residue), k1 + k2)
        return Congruence(bits, self.residue * o.residue).cap(w)

    def shl(self, amount: int | None, w: int = 64) -> Congruence:
        """``shl`` by a known amount (clamped at w as in PTX), or by an unknown one, which
        keeps only the guaranteed trailing zeros."""
        if self.is_bottom:
            return self
        if amount is None:
            return Congruence(min(_tz(self.residue), self.bits), 0).cap(w)
        if amount >= w:
            return Congruence.const(0).cap(w)
        return self.mul(1 << amount, w)

    def _bitwise(self, other: int | Congruence, w: int, op: str) -> Congruence:
        o = Congruence.const(other) if isinstance(other, int) else other
        if self.is_bottom or o.is_bottom:
            return Congruence.bottom()
        a, b = self.cap(w), o.cap(w)
        width = min(w, MAX_BITS)
        bits, residue = combine_low_bits(op, (a.bits, a.residue), (b.bits, b.residue), width)
        return Congruence(bits, residue)

    def and_(self, other: int | Congruence, w: int = 64) -> Congruence:
        """``and`` with a mask or another congruence: a known 0 on either side fixes the
        bit, so masking low bits (``& ~15``) creates alignment."""
        return self._bitwise(other, w, "and")

    def or_(self, other: int | Congruence, w: int = 64) -> Congruence:
        """``or``: a known 1 on either side fixes the bit."""
        return self._bitwise(other, w, "or")


_BOTTOM = Congruence(-1)
_TOP = Congruence(0)
