"""Comparison and selection (PTX ISA 9.7.7) and half-precision comparison (9.7.8):
`set`, `setp`, `selp`, `slct`."""
from __future__ import annotations

from ..operands import Operand, PredicatePair, Register
from ..traits import BOOL_OPS, COMPARISONS, FlushesToZero, HasCompare
from .integer import HALF_TYPES, NUMERIC_TYPES, Compute

_COMPARE_MODS = COMPARISONS | BOOL_OPS | {"ftz"}


class Set(Compute, HasCompare, FlushesToZero, opcode="set"):
    """set.cmp{.bool}{.ftz}.dtype.stype d, a, b{, {!}c}: d = (a cmp b) bool c ? ~0 or 1.0 : 0"""

    __slots__ = ()
    arity = (3, 4)
    # dtype: .u32 .s32 .f32 and, with half sources, .u16 .s16 .f16 .bf16 .f16x2
    # .bf16x2; stype adds bit sizes, .f64 and half types; the packed integer
    # forms (.u8x4 .s8x4 .u16x2 .s16x2) take a single type
    allowed_mods = (_COMPARE_MODS | NUMERIC_TYPES | HALF_TYPES
                    | {"u8x4", "s8x4", "u16x2", "s16x2"})

    @property
    def combine(self) -> Operand | None:
        """The predicate `c` combined with `.and/.or/.xor`, possibly negated."""
        return self.c


class Setp(Compute, HasCompare, FlushesToZero, opcode="setp"):
    """setp.cmp{.bool}{.ftz}.type p[|q], a, b{, {!}c}: p = t bool c, q = !t bool c; t = a cmp b"""

    __slots__ = ()
    arity = (3, 4)
    allowed_mods = _COMPARE_MODS | NUMERIC_TYPES | HALF_TYPES

    @property
    def combine(self) -> Operand | None:
        """The predicate `c` combined with `.and/.or/.xor`, possibly negated."""
        return self.c

    @property
    def pred(self) -> Register | None:
        """`p`: the comparison result (for .f16x2/.bf16x2, of the low halves)."""
        d = self.operands[0] if self.operands else None
        if isinstance(d, PredicatePair):
            d = d.first
        return d if isinstance(d, Register) else None

    @property
    def pred_complement(self) -> Register | None:
        """`q` of `p|q`: the complemented comparison (for .f16x2/.bf16x2, the high halves)."""
        d = self.operands[0] if self.operands else None
        if isinstance(d, PredicatePair) and isinstance(d.second, Register):
            return d.second
        return None


class Selp(Compute, opcode="selp"):
    """selp.type d, a, b, c: d = c ? a : b, c a predicate"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = NUMERIC_TYPES

    @property
    def predicate(self) -> Operand | None:
        return self.c


class Slct(Compute, FlushesToZero, opcode="slct"):
    """slct{.ftz}.dtype.{s32,f32} d, a, b, c: d = c >= 0 ? a : b"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = NUMERIC_TYPES | {"ftz"}
