"""Integer arithmetic (PTX ISA 9.7.1-9.7.2), bit-exact at every width: wrapping in the
unsigned view, `.sat` clamping, carries through CC.CF (`m.cc`), 64-bit high products
from 32-bit limbs, truncating division. Float forms of the shared opcodes are passed
on to `floatops`.

Division by zero is unspecified by the ISA: the quotient is all ones and the remainder
the dividend (nothing is recorded); `INT_MIN / -1` wraps to `INT_MIN` with remainder 0.
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.integer import (
    Abs,
    Add,
    Addc,
    Div,
    Mad,
    Mad24,
    Madc,
    Max,
    Min,
    Mul,
    Mul24,
    Neg,
    Rem,
    Sad,
    Sub,
    Subc,
)
from .operands import SINT, UINT
from .semantics import Compiler, executes

M32 = np.uint64(0xFFFFFFFF)
S32 = np.uint64(32)


def unsigned(dt: np.dtype) -> np.dtype:
    return UINT[dt.itemsize * 8]


def as_array(v, n_like) -> np.ndarray:
    return v if np.ndim(v) else np.full(n_like, v)


def mulhi_u64(a, b):
    """High 64 bits of the 128-bit product of two uint64 values."""
    a, b = np.asarray(a, np.uint64), np.asarray(b, np.uint64)
    al, ah, bl, bh = a & M32, a >> S32, b & M32, b >> S32
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> S32) + (lh & M32) + (hl & M32)
    return hh + (lh >> S32) + (hl >> S32) + (mid >> S32)


def mulhi_s64(a, b):
    ua, ub = np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64)
    h = mulhi_u64(ua, ub)
    h = h - np.where(np.asarray(a) < 0, ub, np.uint64(0)) - np.where(np.asarray(b) < 0, ua, np.uint64(0))
    return h.view(np.int64)


def product(a, b, dt: np.dtype, mode: str):
    """`mul.{lo,hi,wide}`: the low or high half of the 2w-bit product, or all of it."""
    w = dt.itemsize * 8
    signed = dt.kind == "i"
    if mode == "lo":
        u = unsigned(dt)
        return (np.asarray(a).view(u) * np.asarray(b).view(u)).view(dt)
    if w <= 32:
        wide = SINT[2 * w] if signed else UINT[2 * w]
        p = np.asarray(a).astype(wide) * np.asarray(b).astype(wide)
        if mode == "wide":
            return p
        return (p >> (w if wide.kind == "i" else wide.type(w))).astype(dt)
    if mode == "wide":
        raise ValueError("mul.wide is not defined for 64-bit operands")
    return mulhi_s64(a, b) if signed else mulhi_u64(a, b)


def saturate(x_wide, dt: np.dtype):
    info = np.iinfo(dt)
    return np.clip(x_wide, info.min, info.max).astype(dt)


def _float(insn, c):
    from .floatops import float_factory

    return float_factory(insn, c)


def _packed(insn) -> np.dtype | None:
    t = insn.type
    return {"u16x2": np.dtype(np.uint16), "s16x2": np.dtype(np.int16),
            "u8x4": np.dtype(np.uint8), "s8x4": np.dtype(np.int8)}.get(t.name if t else "")


def _binary_packed(insn, c: Compiler, op):
    lane = _packed(insn)
    a, b, d = c.read(insn.a, UINT[32]), c.read(insn.b, UINT[32]), c.write(insn.operands[0], UINT[32])
    sat = insn.saturate
    relu = "relu" in insn.mods

    def run(m):
        n = m.count()
        x = as_array(a(m), n).view(lane)
        y = as_array(b(m), n).view(lane)
        if sat:
            r = saturate(op(x.astype(np.int64), y.astype(np.int64)), lane)
        else:
            r = op(x, y)
        if relu:
            r = np.maximum(r, lane.type(0))
        d(m, np.ascontiguousarray(r).view(np.uint32))
    return run


@executes(Add, Sub)
def add_sub(insn, c: Compiler):
    if insn.is_float:
        return _float(insn, c)
    sub = insn.opcode == "sub"
    if _packed(insn) is not None:
        return _binary_packed(insn, c, np.subtract if sub else np.add)
    dt = c.dtype()
    u = unsigned(dt)
    a, b, d = c.read(insn.a, u), c.read(insn.b, u), c.write(insn.operands[0], u)
    if insn.saturate:
        sa, sb = c.read(insn.a, dt), c.read(insn.b, dt)
        op = np.subtract if sub else np.add
        return lambda m: d(m, saturate(op(np.asarray(sa(m), np.int64), sb(m)), dt).view(u))
    if not insn.writes_carry:
        if sub:
            return lambda m: d(m, a(m) - b(m))
        return lambda m: d(m, a(m) + b(m))

    def run(m):
        x, y = a(m), b(m)
        r = x - y if sub else x + y
        carry = (x < y) if sub else (r < x)
        d(m, r)
        set_cc(m, carry)
    return run


def set_cc(m, flag) -> None:
    f = np.asarray(flag, np.uint64)
    if m.idx is None:
        m.cc = np.broadcast_to(f, (m.n,)).copy()
    else:
        m.cc[m.idx] = f


def get_cc(m, dt: np.dtype):
    cc = m.cc if m.idx is None else m.cc[m.idx]
    return cc.astype(dt)


@executes(Addc, Subc)
def addc_subc(insn, c: Compiler):
    u = unsigned(c.dtype())
    a, b, d = c.read(insn.a, u), c.read(insn.b, u), c.write(insn.operands[0], u)
    sub = insn.opcode == "subc"
    out = insn.writes_carry

    def run(m):
        x, y, cf = a(m), b(m), get_cc(m, u)
        if sub:
            t = x - y
            r = t - cf
            flag = (x < y) | (t < cf)
        else:
            t = x + y
            r = t + cf
            flag = (t < x) | (r < t)
        d(m, r)
        if out:
            set_cc(m, flag)
    return run


@executes(Mul)
def mul(insn, c: Compiler):
    if insn.is_float:
        return _float(insn, c)
    dt = c.dtype()
    mode = insn.mode or "lo"
    a, b = c.read(insn.a, dt), c.read(insn.b, dt)
    out = (SINT if dt.kind == "i" else UINT)[dt.itemsize * 16] if mode == "wide" else dt
    d = c.write(insn.operands[0], out)
    return lambda m: d(m, product(a(m), b(m), dt, mode))


@executes(Mad, Madc)
def mad(insn, c: Compiler):
    if insn.is_float:
        return _float(insn, c)
    dt = c.dtype()
    mode = insn.mode or "lo"
    wide = mode == "wide"
    out = (SINT if dt.kind == "i" else UINT)[dt.itemsize * 16] if wide else dt
    uo = unsigned(out)
    a, b = c.read(insn.a, dt), c.read(insn.b, dt)
    cc_, d = c.read(insn.c, uo), c.write(insn.operands[0], uo)
    sat = getattr(insn, "saturate", False)
    carry_in, carry_out = insn.opcode == "madc", insn.writes_carry
    sc = c.read(insn.c, dt)

    def run(m):
        p = np.asarray(product(a(m), b(m), dt, mode)).view(uo)
        if sat:
            r = saturate(np.asarray(p).view(out).astype(np.int64) + np.asarray(sc(m), np.int64), dt)
            d(m, r.view(uo))
            return
        z = cc_(m)
        t = p + z
        flag = t < p
        if carry_in:
            cf = get_cc(m, uo)
            r = t + cf
            flag = flag | (r < t)
            t = r
        d(m, t)
        if carry_out:
            set_cc(m, flag)
    return run


@executes(Mul24, Mad24)
def mul24(insn, c: Compiler):
    dt = c.dtype()
    hi = insn.mode == "hi"
    a, b = c.read(insn.a, dt), c.read(insn.b, dt)
    d = c.write(insn.operands[0], UINT[32])
    add = c.read(insn.c, dt) if insn.opcode == "mad24" else None
    sat = insn.saturate

    def low24(x):
        x = np.asarray(x, np.int64)
        return ((x << 40) >> 40) if dt.kind == "i" else (x & 0xFFFFFF)

    def run(m):
        t = low24(a(m)) * low24(b(m))  # the 48-bit product
        r = (t >> 16) & 0xFFFFFFFF if hi else t & 0xFFFFFFFF
        if add is not None:
            r = (r.astype(np.uint32).view(dt).astype(np.int64) if dt.kind == "i" else r) + add(m)
            r = saturate(r, dt) if sat else r
        d(m, np.asarray(r).astype(np.int64).astype(np.uint32))
    return run


@executes(Sad)
def sad(insn, c: Compiler):
    dt = c.dtype()
    u = unsigned(dt)
    a, b, z, d = c.read(insn.a, dt), c.read(insn.b, dt), c.read(insn.c, u), c.write(insn.operands[0], u)

    def run(m):
        x, y = a(m), b(m)
        diff = np.where(x < y, np.asarray(y).view(u) - np.asarray(x).view(u),
                        np.asarray(x).view(u) - np.asarray(y).view(u))
        d(m, (diff + z(m)).astype(u))
    return run


def divide(x, y, dt: np.dtype, want_rem: bool):
    """Truncating division and remainder at the width of `dt` (see the module doc)."""
    u = unsigned(dt)
    x, y = np.asarray(x, dt), np.asarray(y, dt)
    zero = y == 0
    if dt.kind == "u":
        ys = np.where(zero, 1, y).astype(dt)
        q = np.where(zero, np.iinfo(dt).max, x // ys).astype(dt)
        return np.where(zero, x, x % ys).astype(dt) if want_rem else q
    ux, uy = x.view(u), y.view(u)
    mx = np.where(x < 0, -ux, ux).astype(u)  # magnitudes; INT_MIN's is 2^(w-1) unsigned
    my = np.where(y < 0, -uy, uy).astype(u)
    my = np.where(zero, 1, my).astype(u)
    qm = mx // my
    q = np.where((x < 0) != (y < 0), -qm, qm).astype(u)
    if want_rem:
        r = (ux - q * uy).astype(u)
        return np.where(zero, ux, r).view(dt)
    return np.where(zero, np.iinfo(u).max, q).astype(u).view(dt)


@executes(Div, Rem)
def div_rem(insn, c: Compiler):
    if insn.is_float:
        return _float(insn, c)
    dt = c.dtype()
    a, b, d = c.read(insn.a, dt), c.read(insn.b, dt), c.write(insn.operands[0], dt)
    rem = insn.opcode == "rem"
    return lambda m: d(m, divide(a(m), b(m), dt, rem))


@executes(Abs, Neg)
def abs_neg(insn, c: Compiler):
    if insn.is_float:
        return _float(insn, c)
    packed = _packed(insn)
    if packed is not None:
        a, d = c.read(insn.a, UINT[32]), c.write(insn.operands[0], UINT[32])
        u = unsigned(packed)

        def run_packed(m):
            x = as_array(a(m), m.count()).view(packed)
            r = np.abs(x) if insn.opcode == "abs" else (-(x.view(u))).view(packed)
            d(m, np.ascontiguousarray(r).view(np.uint32))
        return run_packed
    dt = c.dtype()
    u = unsigned(dt)
    a, d = c.read(insn.a, dt), c.write(insn.operands[0], u)
    if insn.opcode == "neg":
        ua = c.read(insn.a, u)
        return lambda m: d(m, u.type(0) - ua(m))
    return lambda m: d(m, np.asarray(np.abs(a(m))).view(u))


@executes(Min, Max)
def min_max(insn, c: Compiler):
    if insn.is_float:
        return _float(insn, c)
    op = np.minimum if insn.opcode == "min" else np.maximum
    if _packed(insn) is not None:
        return _binary_packed(insn, c, op)
    dt = c.dtype()
    a, b, d = c.read(insn.a, dt), c.read(insn.b, dt), c.write(insn.operands[0], dt)
    if "relu" in insn.mods:
        return lambda m: d(m, np.maximum(op(a(m), b(m)), dt.type(0)))
    return lambda m: d(m, op(a(m), b(m)))
