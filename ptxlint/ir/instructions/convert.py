"""Conversions (PTX ISA 9.7.10.24-25): `cvt` between numeric types and packed small
float formats, `cvt.pack` of two saturated integers. (`cvta` converts addresses and
belongs to the memory family.)"""
from __future__ import annotations

from ..operands import Operand
from ..traits import Saturating
from ..types import DataType
from .integer import FLOAT_ROUNDINGS, INT_ROUNDINGS, Arith, Compute

# Scalar types cvt converts between (.dtype = .atype in the ISA's table).
_CVT_SCALARS = frozenset({"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
                          "bf16", "f16", "f32", "f64"})
# Packed and narrow float formats: destinations of narrowing conversions and sources
# of widening ones.
_CVT_PACKED = frozenset({"f16x2", "bf16x2", "tf32",
                         "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2",
                         "e4m3x4", "e5m2x4", "e2m1x4", "e2m3x4", "e3m2x4",
                         "ue8m0x2", "ue5m3x2", "s2f6x2"})
# .rna: nearest, ties away (to .tf32); .rs: stochastic rounding with random bits.
_CVT_ROUNDINGS = FLOAT_ROUNDINGS | INT_ROUNDINGS | {"rna", "rs"}
# .pzo forces +0.0 results; .scaled::nN::ue8m0 takes a scale-factor operand.
_CVT_QUALIFIERS = frozenset({"ftz", "sat", "relu", "satfinite", "pzo",
                             "scaled::n1::ue8m0", "scaled::n2::ue8m0"})


class Cvt(Arith, opcode="cvt"):
    """cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.atype d, a{, b}{, rbits}: d = (dtype) a"""

    __slots__ = ()
    # d, a | d, a, b (two f32 packed into x2) | + rbits (.rs) or scale-factor
    arity = (2, 4)
    allowed_mods = _CVT_SCALARS | _CVT_PACKED | _CVT_ROUNDINGS | _CVT_QUALIFIERS

    @property
    def dest_type(self) -> DataType | None:
        return self.type

    @property
    def rounds_to_integer(self) -> bool:
        return self.rounding in INT_ROUNDINGS

    @property
    def is_scaled(self) -> bool:
        return any(m.startswith("scaled::") for m in self.mods)


class CvtPack(Compute, Saturating, opcode="cvt.pack"):
    """cvt.pack.sat.ctype.s32{.b32} d, a, b{, c}: d = {c's low bits, sat(a), sat(b)}"""

    __slots__ = ()
    arity = (3, 4)
    allowed_mods = frozenset({"sat", "u16", "s16", "u8", "s8", "u4", "s4", "u2", "s2",
                              "s32", "b32"})

    @property
    def convert_type(self) -> DataType | None:
        return self.type

    @property
    def fill(self) -> Operand | None:
        """`c`, whose low bits fill d above the packed values."""
        return self.c
