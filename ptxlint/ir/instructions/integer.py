"""Integer arithmetic (PTX ISA 9.7.1), extended precision (9.7.2), and the arithmetic
opcodes whose names the integer and floating-point families share.

One class per opcode name: `add`, `sub`, `mul`, `mad`, `div`, `abs`, `neg`, `min` and
`max` carry their integer, packed-integer, `.f32`/`.f64`, half (9.7.4), mixed (9.7.5)
and alternate floating-point (9.7.6) forms in one `allowed_mods`; `floating.py` holds
the opcodes that exist only for floating point. The modifier sets below are shared by
the other compute families (`floating`, `compare`, `logic`, `convert`, `move`).
"""
from __future__ import annotations

from typing import ClassVar

from ..instruction import Instruction
from ..operands import Operand, PredicatePair, Register
from ..traits import FlushesToZero, HasDest, HasRounding, HasType, Saturating

# Types, as the ISA's syntax tables list them per instruction.
INT_TYPES = frozenset({"u16", "u32", "u64", "s16", "s32", "s64"})
INT32_64 = frozenset({"u32", "s32", "u64", "s64"})
BIT_TYPES = frozenset({"b16", "b32", "b64"})
F32_F64 = frozenset({"f32", "f64"})
HALF_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2"})
# Four packed FP8/FP6/FP4/UE8M0 values: the alternate floating-point forms of
# add/sub/mul/fma (sm_100a); .e2m1p4x4 is FP4 padded to one value per byte.
FP8X4_TYPES = frozenset({"e5m2x4", "e4m3x4", "e3m2x4", "e2m3x4", "e2m1x4", "e2m1p4x4",
                         "ue8m0x4"})
# Every type `setp`/`selp`/`slct` accept (no predicates, no half types).
NUMERIC_TYPES = INT_TYPES | BIT_TYPES | F32_F64

# Rounding modifiers.
FLOAT_ROUNDINGS = frozenset({"rn", "rz", "rm", "rp"})
INT_ROUNDINGS = frozenset({"rni", "rzi", "rmi", "rpi"})

# Float arithmetic shared by add/sub/mul/fma: rounding, subnormal flush, [0,1] clamp,
# .f32/.f64, packed .f32x2, half and bfloat16, and the mixed .f32.f16 style pairs.
FLOAT_ARITH = FLOAT_ROUNDINGS | {"ftz", "sat", "f32", "f64", "f32x2"} | HALF_TYPES
# Alternate floating point: saturate to the finite range of the destination format.
ALT_FLOAT = FP8X4_TYPES | {"satfinite"}

MUL_MODES = frozenset({"hi", "lo", "wide"})
HI_LO = frozenset({"hi", "lo"})
CLAMP_WRAP = frozenset({"clamp", "wrap"})


class Compute(HasDest, HasType):
    """d = f(a, b, c, ...): one destination, then the sources in order."""

    __slots__ = ()

    def nth_source(self, i: int) -> Operand | None:
        srcs = self.sources
        return srcs[i] if i < len(srcs) else None

    @property
    def a(self) -> Operand | None:
        return self.nth_source(0)

    @property
    def b(self) -> Operand | None:
        return self.nth_source(1)

    @property
    def c(self) -> Operand | None:
        return self.nth_source(2)

    @property
    def is_float(self) -> bool:
        t = self.type
        return t is not None and t.is_float


class Arith(Compute, HasRounding, Saturating, FlushesToZero):
    """Arithmetic that may round, saturate or flush subnormals (float forms)."""

    __slots__ = ()


class HasMode(Instruction):
    """An instruction whose one mode modifier comes from `modes` (`.hi`, `.clamp`, ...)."""

    __slots__ = ()
    modes: ClassVar[frozenset[str]] = frozenset()

    @property
    def mode(self) -> str | None:
        for m in self.mods:
            if m in self.modes:
                return m
        return None


class CarryChain(Instruction):
    """Uses the condition-code carry flag CC.CF: `.cc` writes the carry-out, and
    `addc`/`subc`/`madc` read the carry-in left by the previous `.cc` instruction."""

    __slots__ = ()
    reads_carry: ClassVar[bool] = False

    @property
    def writes_carry(self) -> bool:
        return "cc" in self.mods


class PairedDest(HasDest):
    """The destination may be `d|p`: a value register (or `_`) and a predicate."""

    __slots__ = ()

    @property
    def value_dest(self) -> Operand | None:
        d = self.operands[0] if self.operands else None
        return d.first if isinstance(d, PredicatePair) else d

    @property
    def predicate_dest(self) -> Register | None:
        d = self.operands[0] if self.operands else None
        if isinstance(d, PredicatePair) and isinstance(d.second, Register):
            return d.second
        return None


class Add(Arith, CarryChain, opcode="add"):
    """add{.sat}{.cc}.type d, a, b | add{.rnd}{.ftz}{.sat}.ftype: d = a + b, wrapping unless .sat"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = (INT_TYPES | {"u16x2", "s16x2", "u8x4", "s8x4", "sat", "cc"}
                    | FLOAT_ARITH | ALT_FLOAT)


class Sub(Arith, CarryChain, opcode="sub"):
    """sub{.sat}{.cc}.type d, a, b (also sub{.rnd}{.ftz}{.sat}.ftype): d = a - b"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = (INT_TYPES | {"u8x4", "s8x4", "sat", "cc"} | FLOAT_ARITH | ALT_FLOAT)


class Mul(Arith, HasMode, opcode="mul"):
    """mul.{hi,lo,wide}.itype d, a, b | mul{.rnd}{.ftz}{.sat}.ftype: d = a * b (.wide: 2x wide)"""

    __slots__ = ()
    arity = (3, 3)
    modes = MUL_MODES
    allowed_mods = MUL_MODES | INT_TYPES | FLOAT_ARITH | ALT_FLOAT


class Mad(Arith, HasMode, CarryChain, opcode="mad"):
    """mad.{hi,lo,wide}{.sat}{.cc}.itype d, a, b, c | mad{.rnd}{.ftz}{.sat}.ftype: d = a * b + c"""

    __slots__ = ()
    arity = (4, 4)
    modes = MUL_MODES
    allowed_mods = (MUL_MODES | INT_TYPES | {"sat", "cc", "ftz"} | FLOAT_ROUNDINGS
                    | F32_F64)


class Mul24(Arith, HasMode, opcode="mul24"):
    """mul24.{hi,lo}.{u32,s32} d, a, b: 24x24-bit product, high or low 32 of its 48 bits"""

    __slots__ = ()
    arity = (3, 3)
    modes = HI_LO
    allowed_mods = HI_LO | {"u32", "s32"}


class Mad24(Arith, HasMode, opcode="mad24"):
    """mad24.{hi,lo}{.sat}.{u32,s32} d, a, b, c: 24x24-bit product (high or low 32 bits) plus c"""

    __slots__ = ()
    arity = (4, 4)
    modes = HI_LO
    allowed_mods = HI_LO | {"sat", "u32", "s32"}


class Sad(Compute, opcode="sad"):
    """sad.type d, a, b, c: d = c + |a - b|"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = INT_TYPES


class Div(Arith, opcode="div"):
    """div.itype d, a, b | div{.approx,.full,.rnd}{.ftz}.f32 | div.rnd.f64: d = a / b"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = INT_TYPES | {"approx", "full", "ftz"} | FLOAT_ROUNDINGS | F32_F64

    @property
    def is_approx(self) -> bool:
        return "approx" in self.mods or "full" in self.mods


class Rem(Compute, opcode="rem"):
    """rem.type d, a, b: d = a % b (integer remainder)"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = INT_TYPES


class Abs(Arith, opcode="abs"):
    """abs.{s16,s32,s64} d, a | abs{.ftz}.{f32,f64,f16,f16x2,bf16,bf16x2} d, a: d = |a|"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"s16", "s32", "s64", "ftz"}) | F32_F64 | HALF_TYPES


class Neg(Arith, opcode="neg"):
    """neg.{s8x4,s16,s32,s64} d, a | neg{.ftz}.{f32,f64,f16,f16x2,bf16,bf16x2} d, a: d = -a"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"s8x4", "s16", "s32", "s64", "ftz"}) | F32_F64 | HALF_TYPES


_MIN_MAX_MODS = (INT_TYPES | {"u16x2", "s16x2", "u8x4", "s8x4", "relu"}
                 | {"ftz", "NaN", "xorsign", "abs"} | F32_F64 | HALF_TYPES)


class Min(Arith, opcode="min"):
    """min{.relu}.itype d, a, b | min{.ftz}{.NaN}{.xorsign.abs}.ftype d, a, b{, c}: d = least"""

    __slots__ = ()
    arity = (3, 4)
    allowed_mods = _MIN_MAX_MODS


class Max(Arith, opcode="max"):
    """max{.relu}.itype d, a, b | max{.ftz}{.NaN}{.xorsign.abs}.ftype d, a, b{, c}: d = greatest"""

    __slots__ = ()
    arity = (3, 4)
    allowed_mods = _MIN_MAX_MODS


class Popc(Compute, opcode="popc"):
    """popc.{b32,b64} d, a: d (.u32) = number of one bits in a"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"b32", "b64"})


class Clz(Compute, opcode="clz"):
    """clz.{b32,b64} d, a: d (.u32) = number of leading zero bits in a"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"b32", "b64"})


class Bfind(Compute, opcode="bfind"):
    """bfind{.shiftamt}.type d, a: d = bit position of the most significant non-sign bit, or ~0"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = INT32_64 | {"shiftamt"}


class Fns(Compute, opcode="fns"):
    """fns.b32 d, mask, base, offset: d = position of the offset-th set bit from base, or ~0"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = frozenset({"b32"})


class Brev(Compute, opcode="brev"):
    """brev.{b32,b64} d, a: d = a with its bits reversed"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"b32", "b64"})


class Bfe(Compute, opcode="bfe"):
    """bfe.{u32,u64,s32,s64} d, a, b, c: d = c bits of a from bit b, zero- or sign-extended"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = INT32_64


class Bfi(Compute, opcode="bfi"):
    """bfi.{b32,b64} f, a, b, c, d: f = b with d low bits of a inserted at bit c"""

    __slots__ = ()
    arity = (5, 5)
    allowed_mods = frozenset({"b32", "b64"})


class Szext(Compute, HasMode, opcode="szext"):
    """szext.{clamp,wrap}.{u32,s32} d, a, b: d = low b bits of a, sign- or zero-extended"""

    __slots__ = ()
    arity = (3, 3)
    modes = CLAMP_WRAP
    allowed_mods = CLAMP_WRAP | {"u32", "s32"}


class Bmsk(Compute, HasMode, opcode="bmsk"):
    """bmsk.{clamp,wrap}.b32 d, a, b: d = mask of b one bits starting at bit a"""

    __slots__ = ()
    arity = (3, 3)
    modes = CLAMP_WRAP
    allowed_mods = CLAMP_WRAP | {"b32"}


class Dp4a(Compute, opcode="dp4a"):
    """dp4a.{u32,s32}.{u32,s32} d, a, b, c: d = c + dot product of the 4 bytes of a and b"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = frozenset({"u32", "s32"})


class Dp2a(Compute, HasMode, opcode="dp2a"):
    """dp2a.{lo,hi}.atype.btype d, a, b, c: d = c + dot(a's 2 halves, 2 bytes of b's lo/hi half)"""

    __slots__ = ()
    arity = (4, 4)
    modes = HI_LO
    allowed_mods = HI_LO | {"u32", "s32"}


class Addc(Compute, CarryChain, opcode="addc"):
    """addc{.cc}.type d, a, b: d = a + b + CC.CF; .cc writes the carry-out"""

    __slots__ = ()
    arity = (3, 3)
    reads_carry = True
    allowed_mods = INT32_64 | {"cc"}


class Subc(Compute, CarryChain, opcode="subc"):
    """subc{.cc}.type d, a, b: d = a - (b + CC.CF); .cc writes the borrow-out"""

    __slots__ = ()
    arity = (3, 3)
    reads_carry = True
    allowed_mods = INT32_64 | {"cc"}


class Madc(Compute, HasMode, CarryChain, opcode="madc"):
    """madc{.hi,.lo}{.cc}.type d, a, b, c: d = (a * b).half + c + CC.CF; .cc writes the carry-out"""

    __slots__ = ()
    arity = (4, 4)
    modes = HI_LO
    reads_carry = True
    allowed_mods = HI_LO | INT32_64 | {"cc"}


class Clmad(Compute, HasMode, opcode="clmad"):
    """clmad.{hi,lo}.u64 d, a, b, c: d = half of the carryless product a * b, xor c"""

    __slots__ = ()
    arity = (4, 4)
    modes = HI_LO
    allowed_mods = HI_LO | {"u64"}
