"""Logic and shift instructions (PTX ISA 9.7.9): bit-wise operations on operands of any
type of the instruction's size; `and`, `or`, `xor` and `not` also on predicates."""
from __future__ import annotations

from ..operands import Immediate, Operand
from .integer import BIT_TYPES, CLAMP_WRAP, INT_TYPES, Compute, HasMode, PairedDest

_PRED_BITS = BIT_TYPES | {"pred"}


class And(Compute, opcode="and"):
    """and.{pred,b16,b32,b64} d, a, b: d = a & b"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = _PRED_BITS


class Or(Compute, opcode="or"):
    """or.{pred,b16,b32,b64} d, a, b: d = a | b"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = _PRED_BITS


class Xor(Compute, opcode="xor"):
    """xor.{pred,b16,b32,b64} d, a, b: d = a ^ b"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = _PRED_BITS


class Not(Compute, opcode="not"):
    """not.{pred,b16,b32,b64} d, a: d = ~a"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _PRED_BITS


class Cnot(Compute, opcode="cnot"):
    """cnot.{b16,b32,b64} d, a: d = (a == 0) ? 1 : 0"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = BIT_TYPES


class Lop3(Compute, PairedDest, opcode="lop3"):
    """lop3{.or,.and}.b32 d[|p], a, b, c, immLut{, q}: d = immLut(a, b, c); p = (d != 0) op q"""

    __slots__ = ()
    arity = (5, 6)
    allowed_mods = frozenset({"b32", "or", "and"})

    @property
    def lut(self) -> int | None:
        """The 8-bit truth table: F(0xF0, 0xCC, 0xAA)."""
        op = self.nth_source(3)
        return op.value if isinstance(op, Immediate) and isinstance(op.value, int) else None

    @property
    def bool_op(self) -> str | None:
        for m in self.mods:
            if m in ("or", "and"):
                return m
        return None

    @property
    def predicate_source(self) -> Operand | None:
        """`q`, combined with d != 0 into the predicate destination."""
        return self.nth_source(4)


class Shf(Compute, HasMode, opcode="shf"):
    """shf.{l,r}.{clamp,wrap}.b32 d, a, b, c: d = 32 bits of the 64-bit [b, a] shifted by c"""

    __slots__ = ()
    arity = (4, 4)
    modes = CLAMP_WRAP
    allowed_mods = CLAMP_WRAP | {"l", "r", "b32"}

    @property
    def direction(self) -> str | None:
        for m in self.mods:
            if m in ("l", "r"):
                return m
        return None


class Shl(Compute, opcode="shl"):
    """shl.{b16,b32,b64} d, a, b: d = a << b, zero-filled; shift amounts above the width clamp"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = BIT_TYPES


class Shr(Compute, opcode="shr"):
    """shr.type d, a, b: d = a >> b, sign-filled for .s types, zero-filled otherwise"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = BIT_TYPES | INT_TYPES
