"""Opcodes that exist only for floating point (PTX ISA 9.7.3), with their half (9.7.4),
mixed (9.7.5) and alternate (9.7.6) precision forms. `add`, `sub`, `mul`, `mad`, `div`,
`abs`, `neg`, `min` and `max` share their names with integer opcodes: see `integer.py`.
"""
from __future__ import annotations

from typing import ClassVar

from .integer import ALT_FLOAT, F32_F64, FLOAT_ARITH, FLOAT_ROUNDINGS, HALF_TYPES, Arith

_F32 = frozenset({"f32"})
_APPROX_FTZ = frozenset({"approx", "ftz"})


class FloatUnary(Arith):
    """d = f(a) computed in floating point; `.approx` asks for the fast approximation."""

    __slots__ = ()

    @property
    def is_approx(self) -> bool:
        return "approx" in self.mods


class Fma(Arith, opcode="fma"):
    """fma.rnd{.ftz}{.sat}{.relu}{.oob}.type d, a, b, c: d = a * b + c, rounded once"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = FLOAT_ARITH | ALT_FLOAT | {"relu", "oob"}


class Rcp(FloatUnary, opcode="rcp"):
    """rcp{.approx,.rnd}{.ftz}.{f32,f64} d, a: d = 1 / a"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _APPROX_FTZ | FLOAT_ROUNDINGS | F32_F64


class Sqrt(FloatUnary, opcode="sqrt"):
    """sqrt{.approx,.rnd}{.ftz}.{f32,f64} d, a: d = sqrt(a)"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _APPROX_FTZ | FLOAT_ROUNDINGS | F32_F64


class Rsqrt(FloatUnary, opcode="rsqrt"):
    """rsqrt.approx{.ftz}.{f32,f64} d, a: d = 1 / sqrt(a), approximated"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _APPROX_FTZ | F32_F64


class Sin(FloatUnary, opcode="sin"):
    """sin.approx{.ftz}.f32 d, a: d = sin(a), a in radians"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _APPROX_FTZ | _F32


class Cos(FloatUnary, opcode="cos"):
    """cos.approx{.ftz}.f32 d, a: d = cos(a), a in radians"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _APPROX_FTZ | _F32


class Lg2(FloatUnary, opcode="lg2"):
    """lg2.approx{.ftz}.f32 d, a: d = log2(a)"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _APPROX_FTZ | _F32


class Ex2(FloatUnary, opcode="ex2"):
    """ex2.approx{.ftz}.{f32,f16,f16x2,bf16,bf16x2} d, a: d = 2 ** a"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = _APPROX_FTZ | _F32 | HALF_TYPES


class Tanh(FloatUnary, opcode="tanh"):
    """tanh.approx.{f32,f16,f16x2,bf16,bf16x2} d, a: d = tanh(a)"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"approx"}) | _F32 | HALF_TYPES


class Copysign(Arith, opcode="copysign"):
    """copysign.{f32,f64} d, a, b: d = b with the sign bit of a"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = F32_F64


class Testp(Arith, opcode="testp"):
    """testp.op.{f32,f64} p, a: p = a is finite/infinite/number/notanumber/normal/subnormal"""

    __slots__ = ()
    arity = (2, 2)
    tests: ClassVar[frozenset[str]] = frozenset({"finite", "infinite", "number", "notanumber",
                                                 "normal", "subnormal"})
    allowed_mods = tests | F32_F64

    @property
    def test(self) -> str | None:
        for m in self.mods:
            if m in self.tests:
                return m
        return None
