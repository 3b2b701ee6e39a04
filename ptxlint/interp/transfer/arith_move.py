"""Transfer functions of register moves, conversions and floating point (PTX ISA
9.7.3-9.7.6 and 9.7.10: mov, shfl, cvt, cvt.pack, fma rcp sqrt ... copysign).

- `mov` copies the value (provenance, lane form and, for predicates, the recorded
  comparison); `mov.b64 d, {lo, hi}` packs exactly (zero-extended pieces, shifted and
  added, so a form in `lo` survives) and `mov.b64 {lo, hi}, a` unpacks (the low piece
  keeps a form that fits, the others only their value sets).
- integer `cvt` is `StridedInterval.cvt` (sign/zero extension by the source type,
  truncation, `.sat` clamping); a widening keeps the form read in the source view, a
  truncation keeps it when it fits, a saturating one only when nothing clamps. A
  pointer keeps its object through a zero-extension or truncation (32-bit window
  addresses <-> 64-bit ones). Conversions with a float side give an unknown value,
  uniform iff the source is (float -> int at least lands in the destination range).
- floating-point arithmetic is not modelled: unknown, uniform iff the inputs are.
- `shfl`/`shfl.sync` read another lane's register: unknown, varying unless it is a
  broadcast (`warp_uniform.broadcast`).
"""
from __future__ import annotations

from ...domains.affine import Affine
from ...domains.strided import StridedInterval as SI
from ...domains.strided import view_range
from ...domains.value import Value
from ...ir.instructions.convert import Cvt, CvtPack
from ...ir.instructions.floating import Copysign, FloatUnary, Fma
from ...ir.instructions.move import Mov, ShflBase
from ...ir.operands import Register, Sink, Vector
from ...ir.types import Kind
from .arith_values import (add_values, exact, extend, extend_value, finish, float_result,
                           full_result, mul_values, numeric_result, opaque_form, plain, read,
                           truncate, view)
from ..context import Ctx
from .table import assign, transfers
from .warp_uniform import shuffled

_M32 = 0xFFFFFFFF


# ---- mov -------------------------------------------------------------------------------------
def pack(pieces: list[Value], total: int, ctx: Ctx) -> Value:
    """`{p0, p1, ...}` as one total-bit value, p0 in the low bits."""
    k = total // len(pieces)
    acc = Value.const(0)
    for i, v in enumerate(pieces):
        part = extend_value(v, k, False, ctx)
        if i:
            part = mul_values(part, Value.const(1 << (k * i)), total, False, ctx)
        acc = add_values(acc, part, total, False, ctx)
    return acc


def unpack(v: Value, n: int, total: int, ctx: Ctx) -> list[Value]:
    """The n k-bit pieces of a total-bit value, lowest first."""
    k = total // n
    x = plain(v, ctx)
    out = [finish(x.si.wrap(k, False), truncate(x.aff, k, ctx.bounds), x.cong, k, False, ctx)]
    for i in range(1, n):
        si = x.si.as_unsigned(total).floordiv_pow2(k * i).wrap(k, False)
        out.append(numeric_result(si, (x,), ctx, k))
    return out


@transfers(Mov)
def mov(insn, s, ctx: Ctx) -> None:
    """mov: copy, address-of (`value_of` resolves symbols), pack and unpack."""
    t = insn.type
    w, signed = view(t, 64)
    d, a = insn.operands[0], insn.a
    if insn.is_unpack:
        pieces = unpack(read(a, s, ctx, w, signed), len(d.elements), w, ctx)
        for e, v in zip(d.elements, pieces):
            if not isinstance(e, Sink):
                assign(e, v, s)
    elif insn.is_pack:
        k = w // len(a.elements)
        assign(d, pack([read(e, s, ctx, k) for e in a.elements], w, ctx), s)
    elif isinstance(d, Vector) and isinstance(a, Vector):
        values = [read(e, s, ctx, w, signed) for e in a.elements]
        for e, v in zip(d.elements, values):
            assign(e, v, s)
    else:
        is_pred = t is not None and t.kind is Kind.PRED
        cond = s.conds.get(a.key) if is_pred and isinstance(a, Register) else None
        assign(d, read(a, s, ctx, w, signed), s)
        if cond is not None and isinstance(d, Register) and not cond.mentions(d.key):
            s.conds[d.key] = cond


@transfers(ShflBase)
def shfl(insn, s, ctx: Ctx) -> None:
    """shfl{.sync}: another lane's value (and whether that lane was in range); one
    value for the whole warp when it reads one lane (`warp_uniform.broadcast`)."""
    values = shuffled(insn, s, ctx)
    for d, v in zip((insn.value_dest, insn.predicate_dest), values):
        if d is not None:
            assign(d, v, s)


# ---- cvt -------------------------------------------------------------------------------------
def convert(a: Value, fw: int, fs: bool, tw: int, ts: bool, sat: bool, ctx: Ctx) -> Value:
    """Integer cvt from a (fw, fs) source to a (tw, ts) destination."""
    if a.region is not None and not sat and (tw <= fw or not fs):
        if tw > fw:
            return zero_extended_address(a, fw, ctx)
        if tw == fw:
            return a
        return finish(a.si.wrap(tw, True), truncate(a.aff, tw, ctx.bounds), a.cong, tw, True,
                      ctx, a.region)
    x = plain(a, ctx)
    si = x.si.cvt(fw, fs, tw, ts, sat)
    if sat and not x.si.wrap(fw, fs).fits(tw, ts):
        return numeric_result(si, (x,), ctx, tw)
    # same width: the same bits, so a form known modulo 2^w stays (`truncate` keeps it)
    widens = tw > fw or (tw == fw and not x.aff.is_modular)
    aff = extend(x.aff, fw, fs, ctx.bounds) if widens else truncate(x.aff, tw, ctx.bounds)
    return finish(si, aff, x.cong.cap(min(fw, tw)), tw, ts, ctx)


def zero_extended_address(a: Value, fw: int, ctx: Ctx) -> Value:
    """An fw-bit address `object + offset` zero-extended. Where the offset is negative the
    fw-bit sum may have wrapped (the object may sit at window address 0: the first
    `.shared` variable does), and the extension is then 2^fw higher; the lane form does
    not survive that (only some lanes wrap)."""
    neg = a.si.clip(None, -1)
    if neg.is_bottom:
        return a
    si = a.si.join(neg.shift(1 << fw))
    aff = Affine.uniform(si) if a.is_uniform else Affine.top()
    return Value(si, aff, a.cong, a.region).reduce(ctx.bounds)


@transfers(Cvt)
def cvt(insn, s, ctx: Ctx) -> None:
    """cvt.dtype.atype d, a{, b}: integer conversions exactly, anything float unknown."""
    dt, st = insn.type, insn.source_type
    srcs = insn.sources
    if dt is None or st is None or not (dt.is_integer and st.is_integer) or len(srcs) != 1:
        inputs = [read(op, s, ctx, st.bits if st is not None else 32) for op in srcs]
        v = full_result(inputs, ctx, dt.bits, dt.is_signed) if dt is not None and \
            dt.is_integer else float_result(inputs)
        assign(insn.dests[0], v, s)
        return
    a = read(insn.a, s, ctx, st.bits, st.is_signed)
    v = convert(a, st.bits, st.is_signed, dt.bits, dt.is_signed, insn.saturate, ctx)
    assign(insn.dests[0], v, s)


def pack_eval(a: int, b: int, c: int, bits: int, signed: bool) -> int:
    """cvt.pack: saturate a and b to `bits`, b in the low field, a above it, then c's low
    bits (for the 8-, 4- and 2-bit types) above both."""
    low, high = view_range(bits, signed)
    mask = (1 << bits) - 1
    ta, tb = min(max(a, low), high) & mask, min(max(b, low), high) & mask
    out = tb | ta << bits
    if bits < 16:
        out |= c << (2 * bits)
    return out & _M32


@transfers(CvtPack)
def cvt_pack(insn, s, ctx: Ctx) -> None:
    """cvt.pack.sat.convertType.s32{.b32} d, a, b{, c}."""
    ct = insn.convert_type
    vals = [plain(read(insn.nth_source(k), s, ctx, 32, k < 2), ctx)
            for k in range(len(insn.sources))]
    if ct is None or not ct.is_integer or len(vals) < 2:
        assign(insn.dests[0], full_result(vals, ctx, 32), s)
        return
    args = [vals[0].si.as_signed(32), vals[1].si.as_signed(32)]
    args.append(vals[2].si.as_unsigned(32) if len(vals) > 2 else SI.const(0))
    si = exact(lambda a, b, c: pack_eval(a, b, c, ct.bits, ct.is_signed), args, 32)
    v = numeric_result(si, vals, ctx, 32) if si is not None else full_result(vals, ctx, 32)
    assign(insn.dests[0], v, s)


# ---- floating point ----------------------------------------------------------------------------
@transfers(FloatUnary, Fma, Copysign)
def float_arith(insn, s, ctx: Ctx) -> None:
    """fma, rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh, copysign: unknown values."""
    if not opaque_form(insn, s, ctx):
        inputs = [read(op, s, ctx) for op in insn.sources]
        assign(insn.dests[0], float_result(inputs), s)
