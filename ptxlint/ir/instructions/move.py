"""Register data movement (PTX ISA 9.7.10.3-7): `mov` (copy, address-of, pack/unpack),
the warp shuffles `shfl` (deprecated) and `shfl.sync`, and the byte permute `prmt`."""
from __future__ import annotations

from ..operands import Expression, Operand, Symbol, Vector
from ..traits import HasVector
from .integer import BIT_TYPES, INT_TYPES, Compute, HasMode, PairedDest

_SHFL_MODES = frozenset({"up", "down", "bfly", "idx"})
_PRMT_MODES = frozenset({"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"})


class Mov(Compute, HasVector, opcode="mov"):
    """mov{.v2,.v4}.type d, a: d = a (a register, immediate, or address of a variable/function)"""

    __slots__ = ()
    arity = (2, 2)
    # .b128 and the {..} pack/unpack forms come from the second `mov` section;
    # vector register variables (`.reg .v2 .b64 v`) move with .v2/.v4
    allowed_mods = (frozenset({"pred", "b128", "f32", "f64", "v2", "v4"})
                    | BIT_TYPES | INT_TYPES)

    @property
    def is_pack(self) -> bool:
        """`mov.b32 d, {a, b}`: scalar d from the concatenated elements."""
        return self.vector_width == 1 and isinstance(self.a, Vector)

    @property
    def is_unpack(self) -> bool:
        """`mov.b64 {lo, hi}, a`: the elements of d from the sub-fields of a."""
        d = self.operands[0] if self.operands else None
        return self.vector_width == 1 and isinstance(d, Vector)

    @property
    def takes_address(self) -> bool:
        """`mov.u64 d, var` / `var+imm`: d = the variable's non-generic address
        (or a function's address)."""
        return isinstance(self.a, (Symbol, Expression))


class ShflBase(Compute, HasMode, PairedDest):
    """Warp shuffle: d = a from the lane picked by mode, b (lane or offset) and c
    (clamp and segment mask); the optional `|p` says whether that lane was in range."""

    __slots__ = ()
    modes = _SHFL_MODES
    allowed_mods = _SHFL_MODES | {"b32"}

    @property
    def lane(self) -> Operand | None:
        return self.b

    @property
    def clamp(self) -> Operand | None:
        return self.c


class Shfl(ShflBase, opcode="shfl"):
    """shfl.mode.b32 d[|p], a, b, c: warp shuffle without a member mask (deprecated, < sm_70)"""

    __slots__ = ()
    arity = (4, 4)


class ShflSync(ShflBase, opcode="shfl.sync"):
    """shfl.sync.mode.b32 d[|p], a, b, c, membermask: warp shuffle among the lanes of membermask"""

    __slots__ = ()
    arity = (5, 5)

    @property
    def membermask(self) -> Operand | None:
        return self.nth_source(3)


class Prmt(Compute, HasMode, opcode="prmt"):
    """prmt.b32{.mode} d, a, b, c: d = four bytes of [b, a] picked by selector c"""

    __slots__ = ()
    arity = (4, 4)
    modes = _PRMT_MODES
    allowed_mods = _PRMT_MODES | {"b32"}

    @property
    def selector(self) -> Operand | None:
        return self.c
