"""Transfer functions of integer arithmetic (PTX ISA 9.7.1, extended precision 9.7.2).

Importing this module registers every compute family: the bit operations
(`arith_bits`), comparisons and predicates (`arith_compare`) and moves, conversions
and floating point (`arith_move`); the shared value algebra is in `arith_values`.

Exact (as exact as the strided-interval operations): add, sub, mul.lo/.hi/.wide,
mad.lo/.hi/.wide, the carry chain (`add.cc`/`addc`, `sub.cc`/`subc`, `mad.cc`/`madc`;
the flag CC.CF lives in the state under `CARRY` as a {0, 1} set), mul24/mad24 when both
factors fit 24 bits, sad, div, rem, min/max (`.relu`), abs, neg, `.sat`. Affine forms
survive add, sub, neg, mul and mad by a uniform factor, and the wide forms. Float and
packed (`.u16x2`...) forms keep only uniformity.
"""
from __future__ import annotations

from ...domains.strided import StridedInterval as SI
from ...domains.value import Value
from ...ir.instructions.integer import (Abs, Add, Addc, Div, Mad, Mad24, Madc, Max, Min, Mul,
                                       Mul24, Neg, Rem, Sad, Sub, Subc)
from . import arith_bits, arith_compare, arith_move  # noqa: F401 - they register themselves
from .. import links
from .arith_values import (add_values, exact, full_result, mul_values, mul_wide_values,
                           neg_value, numeric_result, opaque_form, plain, read, sub_values,
                           view)
from ..context import Ctx
from .table import assign, transfers
from .warp_uniform import per_warp

CARRY = "%cc"  # the condition-code carry flag CC.CF

__all__ = ["add_values", "sub_values", "CARRY"]


# ---- carry flag ------------------------------------------------------------------------------
def carry_in(s) -> Value:
    """CC.CF as left by the last `.cc` instruction (any of 0, 1 if none wrote it)."""
    v = s[CARRY]
    si = v.si.meet(SI.range(0, 1))
    if si.is_bottom or v.region is not None:
        return Value.of_set(SI.range(0, 1), v.is_uniform)
    return Value.of_set(si, v.is_uniform)


def borrow_out(a: SI, b: SI, w: int, borrow_in: SI | None = None) -> SI:
    """The borrow of `a - (b + borrow_in)` on unsigned w-bit values: 1 when it goes negative."""
    total = a.as_unsigned(w).math_add(b.as_unsigned(w).math_neg())
    if borrow_in is not None:
        total = total.math_add(borrow_in.meet(SI.range(0, 1)).math_neg())
    return total.floordiv_pow2(w).math_neg()


def _write_carry(s, flag: SI, inputs, ctx: Ctx) -> None:
    s.assign(CARRY, numeric_result(flag.meet(SI.range(0, 1)), inputs, ctx, 1))


# ---- add, sub and their carries ----------------------------------------------------------------
@transfers(Add, Sub)
def add_sub(insn, s, ctx: Ctx) -> None:
    """add/sub{.sat}{.cc}: d = a +- b; `.cc` writes the carry (borrow) out."""
    if opaque_form(insn, s, ctx):
        return
    w, signed = view(insn.type)
    a, b = read(insn.a, s, ctx, w, signed), read(insn.b, s, ctx, w, signed)
    is_add = isinstance(insn, Add)
    if insn.saturate:
        x, y = plain(a, ctx), plain(b, ctx)
        op = x.si.add if is_add else x.si.sub
        v = numeric_result(op(y.si, w, signed, sat=True), (x, y), ctx, w)
    else:
        v = (add_values if is_add else sub_values)(a, b, w, signed, ctx)
        if not is_add and (diff := links.difference(s, insn.a, insn.b, a, b, w)) is not None:
            v = v.restrict(*diff)  # `a - min(a, c)`: a bound on b says it cannot wrap
        if not is_add and a.region is None and (m := links.cleared_low_bits(insn, ctx)):
            # `a - (a & m)` is `a & ~m`: a multiple of m + 1, never wrapping
            v = v.restrict(a.si.and_(SI.const(~m & ((1 << w) - 1)), w), w, False)
    if insn.writes_carry:
        x, y = plain(a, ctx), plain(b, ctx)
        flag = x.si.add_carry(y.si, w) if is_add else borrow_out(x.si, y.si, w)
        _write_carry(s, flag, (x, y), ctx)
    assign(insn.dests[0], v, s)


@transfers(Addc, Subc)
def add_sub_with_carry(insn, s, ctx: Ctx) -> None:
    """addc/subc{.cc}: d = a + b + CF, d = a - (b + CF)."""
    w, signed = view(insn.type)
    a, b = read(insn.a, s, ctx, w, signed), read(insn.b, s, ctx, w, signed)
    cin = carry_in(s)
    x, y = plain(a, ctx), plain(b, ctx)
    if isinstance(insn, Addc):
        v = add_values(add_values(a, b, w, signed, ctx), cin, w, signed, ctx)
        flag = x.si.add_carry(y.si, w, cin.si)
    else:
        v = sub_values(sub_values(a, b, w, signed, ctx), cin, w, signed, ctx)
        flag = borrow_out(x.si, y.si, w, cin.si)
    if insn.writes_carry:
        _write_carry(s, flag, (x, y, cin), ctx)
    assign(insn.dests[0], v, s)


# ---- products ----------------------------------------------------------------------------------
def product(mode: str, a: Value, b: Value, w: int, signed: bool, ctx: Ctx) -> Value:
    """The `.lo`, `.hi` or `.wide` part of a * b."""
    if mode == "wide":
        return mul_wide_values(a, b, w, signed, ctx)
    if mode == "hi":
        x, y = plain(a, ctx), plain(b, ctx)
        return numeric_result(x.si.mul_hi(y.si, w, signed), (x, y), ctx, w)
    return mul_values(a, b, w, signed, ctx)


@transfers(Mul)
def mul(insn, s, ctx: Ctx) -> None:
    """mul.{lo,hi,wide}: d = a * b (the low, high or whole 2w-bit product)."""
    if opaque_form(insn, s, ctx):
        return
    w, signed = view(insn.type)
    a, b = read(insn.a, s, ctx, w, signed), read(insn.b, s, ctx, w, signed)
    assign(insn.dests[0], product(insn.mode or "lo", a, b, w, signed, ctx), s)


@transfers(Mad, Madc)
def mad(insn, s, ctx: Ctx) -> None:
    """mad{.cc}.{lo,hi,wide} and madc: d = part(a * b) + c (+ CF); `.cc` writes the carry
    out of that addition. With a pointer c (`mad.wide.s32 %rd, %r, 4, %rd_ptr`) the
    result points into c's object at offset product + offset."""
    if opaque_form(insn, s, ctx):
        return
    w, signed = view(insn.type)
    mode = insn.mode or "lo"
    ww = 2 * w if mode == "wide" else w
    a, b = read(insn.a, s, ctx, w, signed), read(insn.b, s, ctx, w, signed)
    c = read(insn.c, s, ctx, ww, signed)
    prod = product(mode, a, b, w, signed, ctx)
    cin = carry_in(s) if insn.reads_carry else None
    if getattr(insn, "saturate", False):
        p, q = plain(prod, ctx), plain(c, ctx)
        v = numeric_result(p.si.add(q.si, ww, signed, sat=True), (p, q), ctx, ww)
    else:
        v = add_values(prod, c, ww, signed, ctx)
    if cin is not None:
        v = add_values(v, cin, ww, signed, ctx)
    if insn.writes_carry:
        p, q = plain(prod, ctx), plain(c, ctx)
        flag = p.si.add_carry(q.si, ww, None if cin is None else cin.si)
        _write_carry(s, flag, (p, q) if cin is None else (p, q, cin), ctx)
    assign(insn.dests[0], v, s)


def _mul24(mode: str, a: Value, b: Value, signed: bool, ctx: Ctx) -> Value:
    """24 x 24-bit product: bits 31..0 (`.lo`) or 47..16 (`.hi`) of the 48-bit result.
    Exact when both factors fit 24 bits; other bits' treatment is not specified: top."""
    x, y = plain(a, ctx), plain(b, ctx)
    xs, ys = x.si.wrap(32, signed), y.si.wrap(32, signed)
    if not (xs.fits(24, signed) and ys.fits(24, signed)):
        return full_result((x, y), ctx, 32, signed)
    if mode == "lo":
        return mul_values(Value(xs, x.aff, x.cong), Value(ys, y.aff, y.cong), 32, signed, ctx)
    si = exact(lambda p, q: (p * q) >> 16, [xs, ys], 32, signed)
    if si is None:
        si = xs.math_mul(ys).floordiv_pow2(16).wrap(32, signed)
    return numeric_result(si, (x, y), ctx, 32)


@transfers(Mul24, Mad24)
def mul24(insn, s, ctx: Ctx) -> None:
    """mul24/mad24.{hi,lo}{.sat}: 24-bit product, plus c for mad24."""
    _, signed = view(insn.type)
    a, b = read(insn.a, s, ctx, 32, signed), read(insn.b, s, ctx, 32, signed)
    v = _mul24(insn.mode or "lo", a, b, signed, ctx)
    if isinstance(insn, Mad24):
        c = read(insn.c, s, ctx, 32, signed)
        if insn.saturate:
            p, q = plain(v, ctx), plain(c, ctx)
            v = numeric_result(p.si.add(q.si, 32, signed, sat=True), (p, q), ctx, 32)
        else:
            v = add_values(v, c, 32, signed, ctx)
    assign(insn.dests[0], v, s)


@transfers(Sad)
def sad(insn, s, ctx: Ctx) -> None:
    """sad: d = c + |a - b|, the difference taken in the type's view."""
    w, signed = view(insn.type)
    x, y, z = (plain(read(op, s, ctx, w, signed), ctx) for op in (insn.a, insn.b, insn.c))
    xs, ys, zs = (v.si.wrap(w, signed) for v in (x, y, z))
    si = exact(lambda p, q, r: r + abs(p - q), [xs, ys, zs], w, signed)
    if si is None:
        diff = xs.math_add(ys.math_neg())
        mag = diff.clip(0, None).join(diff.clip(None, -1).math_neg())
        si = mag.math_add(zs).wrap(w, signed)
    assign(insn.dests[0], numeric_result(si, (x, y, z), ctx, w), s)


# ---- value-set operations without a lane form -----------------------------------------------
_LIFTED = ((Div, "div"), (Rem, "rem"), (Min, "min"), (Max, "max"))


@transfers(Div, Rem, Min, Max)
def lifted_binary(insn, s, ctx: Ctx) -> None:
    """div, rem, min{.relu}, max{.relu}: the strided-interval operation of the same name;
    uniform iff both inputs are."""
    if opaque_form(insn, s, ctx):
        return
    w, signed = view(insn.type)
    x = plain(read(insn.a, s, ctx, w, signed), ctx)
    y = plain(read(insn.b, s, ctx, w, signed), ctx)
    name = next(n for cls, n in _LIFTED if isinstance(insn, cls))
    si = getattr(x.si, name)(y.si, w, signed)
    if "relu" in insn.mods:
        si = si.max(SI.const(0), w, signed)
    v = numeric_result(si, (x, y), ctx, w)
    if name == "div":  # `tid / 32`, `tid / warpSize`: one value per warp
        v = per_warp(v, x, y.si.singleton(), w, signed, ctx, truncating=signed)
    assign(insn.dests[0], v, s)
    if name in ("min", "max"):
        links.record_bound(insn, s, ctx)  # min(a, c) <= a: `a - min(a, c)` cannot wrap


@transfers(Abs, Neg)
def abs_neg(insn, s, ctx: Ctx) -> None:
    """abs (|MIN| wraps to MIN) and neg (affine)."""
    if opaque_form(insn, s, ctx):
        return
    w, signed = view(insn.type)
    a = read(insn.a, s, ctx, w, signed)
    if isinstance(insn, Neg):
        v = neg_value(a, w, signed, ctx)
    else:
        x = plain(a, ctx)
        v = numeric_result(x.si.abs(w), (x,), ctx, w)
    assign(insn.dests[0], v, s)
