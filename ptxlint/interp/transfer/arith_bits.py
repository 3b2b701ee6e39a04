"""Transfer functions of the bit-level opcodes: logic and shifts (PTX ISA 9.7.9), the
bit-manipulation integer instructions (popc clz bfind fns brev bfe bfi szext bmsk,
dp4a dp2a, clmad) and the byte permute `prmt`.

Exactness: and/or/xor/not/cnot, shl/shr (amounts clamped at the width), bfe/bfi, popc,
clz, brev go through the strided-interval operations (exact on small sets, bitwise
bounds and known low bits otherwise). lop3 is exact on small sets and reduced to and/or/
xor/not when its table depends on at most two inputs. shf, prmt, fns, bmsk, dp4a/dp2a,
clmad, bfind and szext are computed element-wise on small sets (the `*_eval` functions
follow the ISA's semantics sections); otherwise bfind, szext with a known width and
dp4a/dp2a get bounds, the others the whole view. Only `shl` by a known amount and `not`
(= -1 - x) keep affine forms; everything else is uniform iff its inputs are.
"""
from __future__ import annotations

from itertools import product as tuples

from ...domains.align import Congruence
from ...domains.strided import StridedInterval as SI
from ...domains.strided import wrap_int
from ...domains.strided_bits import combine_low_bits
from ...domains.value import Value, tri_of
from ...ir.instructions.integer import (Bfe, Bfi, Bfind, Bmsk, Brev, Clmad, Clz, Dp2a, Dp4a, Fns,
                                       Popc, Szext)
from ...ir.instructions.logic import And, Cnot, Lop3, Not, Or, Shf, Shl, Shr, Xor
from ...ir.instructions.move import Prmt
from ...ir.types import Kind
from .arith_compare import combine_tri, pred_logic
from .arith_values import (exact, full_result, numeric_result, plain, pred_value, read,
                           shl_value, sub_values, view)
from ..context import Ctx
from .table import assign, transfers
from .warp_uniform import low_zero_bits, per_warp

_M32 = 0xFFFFFFFF


# ---- and, or, xor, not, cnot -----------------------------------------------------------------
def bitwise(op: str, a: Value, b: Value, w: int, ctx: Ctx) -> Value:
    """`and`/`or`/`xor` on plain numbers, known low bits combined for the congruence."""
    x, y = plain(a, ctx), plain(b, ctx)
    si = {"and": x.si.and_, "or": x.si.or_, "xor": x.si.xor}[op](y.si, w)
    cx, cy = x.cong.cap(w), y.cong.cap(w)
    if cx.is_bottom or cy.is_bottom:
        cong = Congruence.bottom()
    else:
        cong = Congruence(*combine_low_bits(op, (cx.bits, cx.residue), (cy.bits, cy.residue),
                                            min(w, 9)))
    return numeric_result(si, (x, y), ctx, w, cong)


def not_value(a: Value, w: int, ctx: Ctx) -> Value:
    """~x = (2^w - 1) - x: affine, exact."""
    return sub_values(Value.const(-1), plain(a, ctx), w, False, ctx)


@transfers(And, Or, Xor, Not)
def logic(insn, s, ctx: Ctx) -> None:
    t = insn.type
    if t is not None and t.kind is Kind.PRED:
        pred_logic(insn, s, ctx)
        return
    w = t.bits if t is not None else 32
    a = read(insn.a, s, ctx, w)
    if isinstance(insn, Not):
        v = not_value(a, w, ctx)
    else:
        b = read(insn.b, s, ctx, w)
        v = bitwise(insn.opcode, a, b, w, ctx)
        if isinstance(insn, And):  # `tid & -32`: a function of tid / 32
            v = per_warp(v, plain(a, ctx), low_zero_bits(b, w), w, False, ctx)
    assign(insn.dests[0], v, s)


@transfers(Cnot)
def cnot(insn, s, ctx: Ctx) -> None:
    """cnot: d = (a == 0) ? 1 : 0."""
    w, _ = view(insn.type)
    x = plain(read(insn.a, s, ctx, w), ctx)
    t = x.si.cmp("eq", SI.const(0), w)
    assign(insn.dests[0], pred_value(t, x.is_uniform), s)


# ---- lop3 ------------------------------------------------------------------------------------
_INPUT_BITS = (4, 2, 1)  # a, b, c select bits 2, 1, 0 of the table index (0xF0, 0xCC, 0xAA)


def lut_eval(lut: int, a: int, b: int, c: int) -> int:
    """F(a, b, c) on 32-bit words: the union of the table's minterms."""
    out = 0
    for i in range(8):
        if lut >> i & 1:
            out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return out & _M32


def _depends(lut: int, bit: int) -> bool:
    return any((lut >> i & 1) != (lut >> (i ^ bit) & 1) for i in range(8))


def _lop3_reduced(lut: int, vals: list[Value], ctx: Ctx) -> Value | None:
    """The table as a function of at most two inputs: a constant, x, ~x, or
    (~)x op (~)y for op in and/or/xor; None for a genuinely three-input table."""
    used = [k for k, bit in enumerate(_INPUT_BITS) if _depends(lut, bit)]
    table = [lut >> sum(_INPUT_BITS[k] for k, on in zip(used, idx) if on) & 1
             for idx in tuples((0, 1), repeat=len(used))]
    if not used:
        return Value.const(_M32 if table[0] else 0)
    if len(used) == 1:
        x = plain(vals[used[0]], ctx)
        return x if table == [0, 1] else not_value(x, 32, ctx)
    if len(used) > 2:
        return None
    ops = {"and": lambda p, q: p & q, "or": lambda p, q: p | q, "xor": lambda p, q: p ^ q}
    for (name, fn), nx, ny, nout in tuples(ops.items(), (0, 1), (0, 1), (0, 1)):
        if table == [fn(p ^ nx, q ^ ny) ^ nout for p, q in tuples((0, 1), repeat=2)]:
            x, y = (vals[k] for k in used)
            x = not_value(x, 32, ctx) if nx else x
            y = not_value(y, 32, ctx) if ny else y
            r = bitwise(name, x, y, 32, ctx)
            return not_value(r, 32, ctx) if nout else r
    return None


@transfers(Lop3)
def lop3(insn, s, ctx: Ctx) -> None:
    """lop3{.or,.and}.b32 d|p, a, b, c, immLut{, q}: d = F(a, b, c); p = (d != 0) op q."""
    vals = [plain(read(insn.nth_source(k), s, ctx, 32), ctx) for k in range(3)]
    lut = insn.lut
    d = None if lut is None else _lop3_reduced(lut & 0xFF, vals, ctx)
    if d is None and lut is not None:
        si = exact(lambda a, b, c: lut_eval(lut, a, b, c), [v.si.as_unsigned(32) for v in vals],
                   32)
        d = numeric_result(si, vals, ctx, 32) if si is not None else None
    if d is None:
        d = full_result(vals, ctx, 32)
    if insn.value_dest is not None:
        assign(insn.value_dest, d, s)
    if insn.predicate_dest is not None:
        q = read(insn.predicate_source, s, ctx, 1)
        nonzero = plain(d, ctx).si.cmp("ne", SI.const(0), 32)
        t = combine_tri(insn.bool_op or "and", nonzero, tri_of(q))
        assign(insn.predicate_dest, pred_value(t, d.is_uniform and q.is_uniform), s)


# ---- shifts ------------------------------------------------------------------------------------
@transfers(Shl)
def shl(insn, s, ctx: Ctx) -> None:
    """shl: zero-filled, amounts above the width give 0; affine for a known amount."""
    w, _ = view(insn.type)
    a, n = read(insn.a, s, ctx, w), read(insn.b, s, ctx, 32)
    assign(insn.dests[0], shl_value(a, n, w, ctx), s)


@transfers(Shr)
def shr(insn, s, ctx: Ctx) -> None:
    """shr: arithmetic for .s types, logical otherwise; amounts clamp at the width."""
    w, signed = view(insn.type)
    x = plain(read(insn.a, s, ctx, w, signed), ctx)
    n = plain(read(insn.b, s, ctx, 32), ctx)
    si = x.si.shr(n.si, w, signed)
    k = n.si.as_unsigned(32).singleton()
    cong = None
    c = x.cong.cap(w)
    if k is not None and not c.is_bottom and c.bits >= min(k, w):
        # floor(x / 2^k) keeps x's residue modulo 2^(bits - k), shifted down
        k = min(k, w)
        cong = Congruence(c.bits - k, c.residue >> k)
    d = 1 << k if k is not None and k < w else None  # `tid >> 5`: one value per warp
    assign(insn.dests[0], per_warp(numeric_result(si, (x, n), ctx, w, cong), x, d, w,
                                   signed, ctx), s)


def shf_eval(left: bool, clamp: bool, a: int, b: int, c: int) -> int:
    n = min(c, 32) if clamp else c & 31
    wide = (b & _M32) << 32 | (a & _M32)
    return ((wide << n) >> 32 if left else wide >> n) & _M32


@transfers(Shf)
def shf(insn, s, ctx: Ctx) -> None:
    """shf.{l,r}.{clamp,wrap}: funnel shift of [b, a]; exact on small sets."""
    vals = [plain(read(insn.nth_source(k), s, ctx, 32), ctx) for k in range(3)]
    left, clamp = insn.direction == "l", insn.mode == "clamp"
    si = exact(lambda a, b, c: shf_eval(left, clamp, a, b, c),
               [v.si.as_unsigned(32) for v in vals], 32)
    v = numeric_result(si, vals, ctx, 32) if si is not None else full_result(vals, ctx, 32)
    assign(insn.dests[0], v, s)


# ---- bit fields and counts ---------------------------------------------------------------------
@transfers(Bfe)
def bfe(insn, s, ctx: Ctx) -> None:
    """bfe: `c` bits of a from bit `b` (both .u32, used modulo 256), zero/sign-extended."""
    w, signed = view(insn.type)
    x, p, n = (plain(read(op, s, ctx, bits), ctx)
               for op, bits in ((insn.a, w), (insn.b, 32), (insn.c, 32)))
    v = numeric_result(x.si.bfe(p.si, n.si, w, signed), (x, p, n), ctx, w)
    pos = p.si.singleton() if n.is_uniform else None  # bits from pos on: x / 2^pos
    d = 1 << (pos & 255) if pos is not None and (pos & 255) < w else None
    assign(insn.dests[0], per_warp(v, x, d, w, False, ctx), s)


@transfers(Bfi)
def bfi(insn, s, ctx: Ctx) -> None:
    """bfi f, a, b, c, d: b with the d low bits of a inserted at bit c."""
    w, _ = view(insn.type)
    x, base, p, n = (plain(read(insn.nth_source(k), s, ctx, w if k < 2 else 32), ctx)
                     for k in range(4))
    si = x.si.bfi(base.si, p.si, n.si, w)
    assign(insn.dests[0], numeric_result(si, (x, base, p, n), ctx, w), s)


@transfers(Popc, Clz, Brev)
def bit_count(insn, s, ctx: Ctx) -> None:
    """popc, clz (.u32 results) and brev (same width)."""
    w, _ = view(insn.type)
    x = plain(read(insn.a, s, ctx, w), ctx)
    if isinstance(insn, Brev):
        v = numeric_result(x.si.brev(w), (x,), ctx, w)
    else:
        si = x.si.popc(w) if isinstance(insn, Popc) else x.si.clz(w)
        v = numeric_result(si, (x,), ctx, 32)
    assign(insn.dests[0], v, s)


def bfind_eval(x: int, w: int, signed: bool, shiftamt: bool) -> int:
    u = x & ((1 << w) - 1)
    if signed and u >> (w - 1):
        u ^= (1 << w) - 1
    if u == 0:
        return _M32
    d = u.bit_length() - 1
    return w - 1 - d if shiftamt else d


@transfers(Bfind)
def bfind(insn, s, ctx: Ctx) -> None:
    """bfind{.shiftamt}: position of the most significant non-sign bit, or 0xffffffff."""
    w, signed = view(insn.type)
    shiftamt = "shiftamt" in insn.mods
    x = plain(read(insn.a, s, ctx, w, signed), ctx)
    si = exact(lambda v: bfind_eval(v, w, signed, shiftamt), [x.si.as_unsigned(w)], 32)
    if si is None and not signed:
        u = x.si.as_unsigned(w)
        lo, hi = max(u.lo, 1).bit_length() - 1, u.hi.bit_length() - 1
        si = SI.range(w - 1 - hi, w - 1 - lo) if shiftamt else SI.range(lo, hi)
        if u.contains(0) or u.lo == 0:
            si = si.join(SI.const(_M32))
    v = numeric_result(si, (x,), ctx, 32) if si is not None else full_result((x,), ctx, 32)
    assign(insn.dests[0], v, s)


def fns_eval(mask: int, base: int, offset: int) -> int:
    """Position of the |offset|-th set bit of mask counting from base, upward for a
    positive offset, downward for a negative one (offset 0: base itself if set)."""
    if offset == 0:
        return base if mask >> base & 1 else _M32
    step = 1 if offset > 0 else -1
    left = abs(offset)
    pos = base
    while 0 <= pos < 32:
        left -= mask >> pos & 1
        if left == 0:
            return pos
        pos += step
    return _M32


@transfers(Fns)
def fns(insn, s, ctx: Ctx) -> None:
    """fns.b32 d, mask, base, offset (base > 31 is undefined: any value)."""
    vals = [plain(read(insn.nth_source(k), s, ctx, 32, k == 2), ctx) for k in range(3)]
    mask, base, off = vals[0].si.as_unsigned(32), vals[1].si.as_unsigned(32), \
        vals[2].si.as_signed(32)
    si = exact(fns_eval, [mask, base, off], 32) if base.within(0, 31) else None
    v = numeric_result(si, vals, ctx, 32) if si is not None else full_result(vals, ctx, 32)
    assign(insn.dests[0], v, s)


def szext_eval(a: int, b: int, clamp: bool, signed: bool) -> int:
    if b >= 32 and clamp:
        return a
    n = b & 31
    return 0 if n == 0 else wrap_int(a, n, signed)


@transfers(Szext)
def szext(insn, s, ctx: Ctx) -> None:
    """szext.{clamp,wrap}.{u32,s32} d, a, b: low b bits of a, zero- or sign-extended."""
    _, signed = view(insn.type)
    clamp = insn.mode == "clamp"
    x, n = plain(read(insn.a, s, ctx, 32), ctx), plain(read(insn.b, s, ctx, 32), ctx)
    xs, ns = x.si.as_unsigned(32), n.si.as_unsigned(32)
    si = exact(lambda a, b: szext_eval(a, b, clamp, signed), [xs, ns], 32, signed)
    k = ns.singleton()
    if si is None and k is not None:
        si = xs.wrap(32, signed) if k >= 32 and clamp else \
            SI.const(0) if k & 31 == 0 else xs.wrap(k & 31, signed)
    v = numeric_result(si, (x, n), ctx, 32) if si is not None else \
        full_result((x, n), ctx, 32, signed)
    assign(insn.dests[0], v, s)


def bmsk_eval(a: int, b: int, clamp: bool) -> int:
    start, width = a & 31, b & 31
    if clamp and (a >= 32 or b >= 32):
        return 0 if a >= 32 else _M32 << start & _M32
    if start + width >= 32:
        return _M32 << start & _M32
    return ((1 << width) - 1) << start


@transfers(Bmsk)
def bmsk(insn, s, ctx: Ctx) -> None:
    """bmsk.{clamp,wrap}.b32 d, a, b: b one bits from bit a."""
    clamp = insn.mode == "clamp"
    vals = [plain(read(insn.nth_source(k), s, ctx, 32), ctx) for k in range(2)]
    si = exact(lambda a, b: bmsk_eval(a, b, clamp), [v.si.as_unsigned(32) for v in vals], 32)
    v = numeric_result(si, vals, ctx, 32) if si is not None else full_result(vals, ctx, 32)
    assign(insn.dests[0], v, s)


# ---- dot products, carryless multiply, byte permute ------------------------------------------
def _pieces(x: int, n: int, bits: int, signed: bool) -> list[int]:
    return [wrap_int(x >> (bits * i), bits, signed) for i in range(n)]


def dot_eval(a: int, b: int, c: int, sa: bool, sb: bool, hi: bool | None) -> int:
    """dp4a (hi None) or dp2a.lo/.hi: c plus the dot product of the packed elements."""
    if hi is None:
        return c + sum(p * q for p, q in zip(_pieces(a, 4, 8, sa), _pieces(b, 4, 8, sb)))
    vb = _pieces(b, 4, 8, sb)[2:] if hi else _pieces(b, 4, 8, sb)[:2]
    return c + sum(p * q for p, q in zip(_pieces(a, 2, 16, sa), vb))


def _dot_bounds(n: int, a_bits: int, sa: bool, sb: bool) -> SI:
    ea = (-(1 << (a_bits - 1)), (1 << (a_bits - 1)) - 1) if sa else (0, (1 << a_bits) - 1)
    eb = (-128, 127) if sb else (0, 255)
    corners = [p * q for p in ea for q in eb]
    return SI.range(n * min(corners), n * max(corners))


@transfers(Dp4a, Dp2a)
def dot(insn, s, ctx: Ctx) -> None:
    """dp4a.atype.btype / dp2a.mode.atype.btype: c (.u32 iff both types are) + dot."""
    types = insn.types
    sa, sb = types[0].is_signed, types[-1].is_signed
    signed = sa or sb
    hi = None if isinstance(insn, Dp4a) else insn.mode == "hi"
    vals = [plain(read(insn.nth_source(k), s, ctx, 32, signed), ctx) for k in range(3)]
    args = [vals[0].si.as_unsigned(32), vals[1].si.as_unsigned(32), vals[2].si.wrap(32, signed)]
    si = exact(lambda a, b, c: dot_eval(a, b, c, sa, sb, hi), args, 32, signed)
    if si is None:
        bound = _dot_bounds(4, 8, sa, sb) if hi is None else _dot_bounds(2, 16, sa, sb)
        si = args[2].math_add(bound).wrap(32, signed)
    assign(insn.dests[0], numeric_result(si, vals, ctx, 32), s)


def clmul(a: int, b: int) -> int:
    out = 0
    while b:
        if b & 1:
            out ^= a
        a, b = a << 1, b >> 1
    return out


@transfers(Clmad)
def clmad(insn, s, ctx: Ctx) -> None:
    """clmad.{hi,lo}.u64: half of the carryless product a * b, xor c."""
    hi = insn.mode == "hi"
    vals = [plain(read(insn.nth_source(k), s, ctx, 64), ctx) for k in range(3)]
    si = exact(lambda a, b, c: ((clmul(a, b) >> 64 if hi else clmul(a, b)) ^ c),
               [v.si.as_unsigned(64) for v in vals], 64)
    v = numeric_result(si, vals, ctx, 64) if si is not None else full_result(vals, ctx, 64)
    assign(insn.dests[0], v, s)


# Source byte of d.b0 .. d.b3 for each selector value c[1:0] of the special modes.
_PRMT_MODES = {
    "f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
    "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
    "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
    "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
    "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
    "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)),
}


def prmt_eval(mode: str | None, a: int, b: int, c: int) -> int:
    source = (b & _M32) << 32 | (a & _M32)
    out = 0
    for i in range(4):
        if mode is None:
            sel = c >> (4 * i) & 0xF
            byte = source >> (8 * (sel & 7)) & 0xFF
            if sel & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = source >> (8 * _PRMT_MODES[mode][c & 3][i]) & 0xFF
        out |= byte << (8 * i)
    return out


@transfers(Prmt)
def prmt(insn, s, ctx: Ctx) -> None:
    """prmt.b32{.mode} d, a, b, c: four bytes of [b, a] picked by c; exact on small sets."""
    vals = [plain(read(insn.nth_source(k), s, ctx, 32), ctx) for k in range(3)]
    mode = insn.mode
    si = exact(lambda a, b, c: prmt_eval(mode, a, b, c), [v.si.as_unsigned(32) for v in vals],
               32)
    v = numeric_result(si, vals, ctx, 32) if si is not None else full_result(vals, ctx, 32)
    assign(insn.dests[0], v, s)


__all__ = ["bitwise", "not_value", "lut_eval", "shf_eval", "bfind_eval", "fns_eval",
           "szext_eval", "bmsk_eval", "dot_eval", "clmul", "prmt_eval"]
