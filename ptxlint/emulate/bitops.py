"""Logic, shifts and bit fields (PTX ISA 9.7.1, 9.7.9), vectorised and bit-exact.

Shift amounts are unsigned 32-bit and clamp at the operand width (`shl` by 40 of a
`.b32` gives 0, `shr.s32` by 40 fills with the sign); numpy's own shifts are undefined
past the width, so every shift here is by at most width - 1 with the rest selected.
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.integer import (
    Bfe,
    Bfi,
    Bfind,
    Bmsk,
    Brev,
    Clmad,
    Clz,
    Dp2a,
    Dp4a,
    Fns,
    Popc,
    Szext,
)
from ..ir.instructions.logic import And, Cnot, Lop3, Not, Or, Shf, Shl, Shr, Xor
from ..ir.instructions.move import Prmt
from .intops import as_array, unsigned
from .operands import BOOL, SINT, UINT
from .semantics import Compiler, executes

U32 = UINT[32]
_REV8 = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], np.uint8)


def width(dt: np.dtype) -> int:
    return dt.itemsize * 8


def shl(x, n, dt):
    w = width(dt)
    n = np.asarray(n, np.uint64)
    s = np.minimum(n, w - 1).astype(dt)
    return np.where(n >= w, dt.type(0), np.left_shift(x, s)).astype(dt)


def shr(x, n, dt):
    """Logical for unsigned `dt`, arithmetic for signed."""
    w = width(dt)
    n = np.asarray(n, np.uint64)
    s = np.minimum(n, w - 1).astype(UINT[w]).view(dt) if dt.kind == "i" else np.minimum(n, w - 1).astype(dt)
    r = np.right_shift(x, s)
    if dt.kind == "i":
        return np.asarray(r, dt)
    return np.where(n >= w, dt.type(0), r).astype(dt)


def low_mask(length, dt):
    """Per element: `length` (0..w) one bits at the bottom, as `dt` (unsigned)."""
    w = width(dt)
    length = np.asarray(length, np.uint64)
    ones = dt.type(np.iinfo(dt).max)
    return np.where(length >= w, ones, shl(dt.type(1), length, dt) - dt.type(1)).astype(dt)


@executes(And, Or, Xor)
def logic(insn, c: Compiler):
    dt = c.dtype()
    op = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[insn.opcode]
    a, b, d = c.read(insn.a, dt), c.read(insn.b, dt), c.write(insn.operands[0], dt)
    return lambda m: d(m, op(a(m), b(m)))


@executes(Not)
def not_(insn, c: Compiler):
    dt = c.dtype()
    a, d = c.read(insn.a, dt), c.write(insn.operands[0], dt)
    return lambda m: d(m, np.invert(a(m)))


@executes(Cnot)
def cnot(insn, c: Compiler):
    dt = c.dtype()
    a, d = c.read(insn.a, dt), c.write(insn.operands[0], dt)
    return lambda m: d(m, (a(m) == 0).astype(dt))


def lut3(lut: int, x, y, z, dt):
    """The truth table `lut` (F(0xF0, 0xCC, 0xAA)) applied bitwise."""
    out = np.zeros(np.broadcast(x, y, z).shape, dt)
    for i in range(8):
        if lut >> i & 1:
            t = (x if i & 4 else ~x) & (y if i & 2 else ~y) & (z if i & 1 else ~z)
            out = out | t
    return out


@executes(Lop3)
def lop3(insn, c: Compiler):
    a, b, z = c.read(insn.a, U32), c.read(insn.b, U32), c.read(insn.c, U32)
    lut = insn.lut
    if lut is None:
        raise c.unsupported("lop3 with a register truth table")
    d = c.write(insn.value_dest, U32)
    p = insn.predicate_dest
    pw = c.write(p, BOOL) if p is not None else None
    q = c.pred(insn.predicate_source) if insn.predicate_source is not None else None
    combine = insn.bool_op

    def run(m):
        r = lut3(lut & 0xFF, a(m), b(m), z(m), U32)
        d(m, r)
        if pw is not None:
            nz = r != 0
            pw(m, (nz | q(m)) if combine == "or" else (nz & q(m)))
    return run


@executes(Shl)
def shl_(insn, c: Compiler):
    dt = c.dtype()
    a, n, d = c.read(insn.a, dt), c.read(insn.b, U32), c.write(insn.operands[0], dt)
    return lambda m: d(m, shl(a(m), n(m), dt))


@executes(Shr)
def shr_(insn, c: Compiler):
    dt = c.dtype()
    if insn.type.kind.value == "b":
        dt = unsigned(dt)
    a, n, d = c.read(insn.a, dt), c.read(insn.b, U32), c.write(insn.operands[0], dt)
    return lambda m: d(m, shr(a(m), n(m), dt))


@executes(Shf)
def shf(insn, c: Compiler):
    a, b, n = c.read(insn.a, U32), c.read(insn.b, U32), c.read(insn.c, U32)
    d = c.write(insn.operands[0], U32)
    left, clamp = insn.direction == "l", insn.mode == "clamp"
    u64 = UINT[64]

    def run(m):
        k = np.asarray(n(m), np.uint64)
        k = np.minimum(k, 32) if clamp else k & np.uint64(31)
        wide = (np.asarray(b(m), u64) << np.uint64(32)) | np.asarray(a(m), u64)
        r = (wide << k) >> np.uint64(32) if left else wide >> k
        d(m, (r & np.uint64(0xFFFFFFFF)).astype(U32))
    return run


@executes(Bfe)
def bfe(insn, c: Compiler):
    dt = c.dtype()
    u = unsigned(dt)
    w = width(dt)
    a, pos, ln = c.read(insn.a, u), c.read(insn.b, U32), c.read(insn.c, U32)
    d = c.write(insn.operands[0], u)
    signed = dt.kind == "i"

    def run(m):
        x, p, L = a(m), np.asarray(pos(m), np.uint64) & 0xFF, np.asarray(ln(m), np.uint64) & 0xFF
        field = np.where(p >= w, 0, np.minimum(L, np.maximum(w - p.astype(np.int64), 0)))
        r = shr(x, p, u) & low_mask(field, u)
        if signed:
            sbit = shr(x, np.minimum(p + L - 1, w - 1), u) & u.type(1)
            sbit = np.where(L == 0, u.type(0), sbit)
            r = np.where(sbit == 1, r | ~low_mask(field, u), r)
        d(m, np.asarray(r, u))
    return run


@executes(Bfi)
def bfi(insn, c: Compiler):
    u = c.dtype()
    w = width(u)
    a, b = c.read(insn.a, u), c.read(insn.b, u)
    pos, ln = c.read(insn.c, U32), c.read(insn.nth_source(3), U32)
    d = c.write(insn.operands[0], u)

    def run(m):
        p, L = np.asarray(pos(m), np.uint64) & 0xFF, np.asarray(ln(m), np.uint64) & 0xFF
        field = np.where(p >= w, 0, np.minimum(L, np.maximum(w - p.astype(np.int64), 0)))
        mask = shl(low_mask(field, u), p, u)
        d(m, np.asarray((b(m) & ~mask) | (shl(a(m), p, u) & mask), u))
    return run


def popcount(x):
    return np.bitwise_count(x).astype(U32)


def clz(x, u):
    x = np.asarray(x, u)
    s = 1
    while s < width(u):
        x = x | (x >> u.type(s))
        s *= 2
    return (width(u) - np.bitwise_count(x)).astype(U32)


@executes(Popc, Clz)
def popc_clz(insn, c: Compiler):
    u = unsigned(c.dtype())
    a, d = c.read(insn.a, u), c.write(insn.operands[0], U32)
    if insn.opcode == "popc":
        return lambda m: d(m, popcount(a(m)))
    return lambda m: d(m, clz(a(m), u))


def brev(x, u):
    x = np.ascontiguousarray(np.atleast_1d(np.asarray(x, u)))
    rev = _REV8[x.view(np.uint8).reshape(len(x), -1)[:, ::-1]]
    return np.ascontiguousarray(rev).view(u).reshape(-1)


@executes(Brev)
def brev_(insn, c: Compiler):
    u = c.dtype()
    a, d = c.read(insn.a, u), c.write(insn.operands[0], u)
    return lambda m: d(m, brev(as_array(a(m), m.count()), u))


@executes(Bfind)
def bfind(insn, c: Compiler):
    dt = c.dtype()
    u = unsigned(dt)
    w = width(dt)
    a, d = c.read(insn.a, dt), c.write(insn.operands[0], U32)
    shiftamt = "shiftamt" in insn.mods

    def run(m):
        x = np.asarray(a(m))
        if dt.kind == "i":
            x = np.where(x < 0, ~x, x)
        lead = clz(x.view(u) if x.ndim else np.asarray(x).view(u), u).astype(np.int64)
        pos = (w - 1) - lead
        r = np.where(lead == w, 0xFFFFFFFF, (w - 1) - pos if shiftamt else pos)
        d(m, np.asarray(r).astype(U32))
    return run


@executes(Fns)
def fns(insn, c: Compiler):
    mask, base = c.read(insn.a, U32), c.read(insn.b, U32)
    off, d = c.read(insn.c, SINT[32]), c.write(insn.operands[0], U32)

    def run(m):
        n = m.count()
        msk = as_array(mask(m), n).astype(np.int64)
        b = as_array(base(m), n).astype(np.int64)
        o = as_array(off(m), n).astype(np.int64)
        result = np.full(n, 0xFFFFFFFF, np.int64)
        found = np.zeros(n, bool)
        remaining = np.abs(o) - 1
        step = np.where(o > 0, 1, -1)
        hit0 = (o == 0) & (b < 32) & ((msk >> np.minimum(b, 31)) & 1 == 1)
        result = np.where(hit0, b, result)
        found |= o == 0
        pos = b.copy()
        for _ in range(32):
            inside = (pos >= 0) & (pos < 32) & ~found
            bit = inside & ((msk >> np.clip(pos, 0, 31)) & 1 == 1)
            take = bit & (remaining == 0)
            result = np.where(take, pos, result)
            found |= take
            remaining = np.where(bit & ~take, remaining - 1, remaining)
            pos = pos + step
        d(m, result.astype(U32))
    return run


@executes(Szext)
def szext(insn, c: Compiler):
    a, b, d = c.read(insn.a, U32), c.read(insn.b, U32), c.write(insn.operands[0], U32)
    clamp, signed = insn.mode == "clamp", c.dtype().kind == "i"

    def run(m):
        x, n = np.asarray(a(m), U32), np.asarray(b(m), U32)
        n1 = n & np.uint32(31)
        too_large = (n >= 32) if clamp else np.zeros(np.shape(n), bool)
        mask = np.where(too_large, np.uint32(0), shl(np.uint32(0xFFFFFFFF), n1, U32))
        sbit = shr(x, (n1 - np.uint32(1)) & np.uint32(31), U32) & np.uint32(1)
        sbit = np.where((n1 == 0) | too_large | (not signed), np.uint32(0), sbit)
        d(m, np.asarray((x & ~mask) | np.where(sbit == 1, mask, np.uint32(0)), U32))
    return run


@executes(Bmsk)
def bmsk(insn, c: Compiler):
    a, b, d = c.read(insn.a, U32), c.read(insn.b, U32), c.write(insn.operands[0], U32)
    clamp = insn.mode == "clamp"
    ones = np.uint32(0xFFFFFFFF)

    def run(m):
        x, y = np.asarray(a(m), U32), np.asarray(b(m), U32)
        a1, b1 = x & np.uint32(31), y & np.uint32(31)
        mask0 = shl(ones, a1, U32)
        total = a1.astype(np.uint64) + b1
        mask1 = shl(ones, total, U32)
        overflow = total >= 32
        if clamp:
            overflow = overflow | (x >= 32) | (y >= 32)
            mask0 = np.where(x >= 32, np.uint32(0), mask0)
        mask1 = np.where(overflow, np.uint32(0), np.where(b1 == 0, ones, mask1))
        d(m, np.asarray(mask0 & ~mask1, U32))
    return run


def _lanes(x, count: int, bits: int, signed: bool):
    x = np.asarray(x, np.int64) & 0xFFFFFFFF
    out = []
    for i in range(count):
        v = (x >> (bits * i)) & ((1 << bits) - 1)
        if signed:
            v = np.where(v >> (bits - 1) & 1, v - (1 << bits), v)
        out.append(v)
    return out


@executes(Dp4a, Dp2a)
def dot(insn, c: Compiler):
    ta, tb = insn.types[0], insn.types[-1]
    sa, sb = ta.is_signed, tb.is_signed
    a, b, z = c.read(insn.a, U32), c.read(insn.b, U32), c.read(insn.c, U32)
    d = c.write(insn.operands[0], U32)
    two = insn.opcode == "dp2a"
    sel = 2 if "hi" in insn.mods else 0

    def run(m):
        acc = np.asarray(z(m), np.uint32).astype(np.int64)
        if two:
            va, vb = _lanes(a(m), 2, 16, sa), _lanes(b(m), 4, 8, sb)
            for i in range(2):
                acc = acc + va[i] * vb[sel + i]
        else:
            for x, y in zip(_lanes(a(m), 4, 8, sa), _lanes(b(m), 4, 8, sb)):
                acc = acc + x * y
        d(m, (acc & 0xFFFFFFFF).astype(U32))
    return run


_PRMT = {
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}


@executes(Prmt)
def prmt(insn, c: Compiler):
    a, b, s = c.read(insn.a, U32), c.read(insn.b, U32), c.read(insn.c, U32)
    d = c.write(insn.operands[0], U32)
    mode = insn.mode
    u64 = np.uint64

    def run(m):
        wide = (np.asarray(b(m), u64) << u64(32)) | np.asarray(a(m), u64)
        sel = np.asarray(s(m), u64)
        out = np.zeros(np.broadcast(wide, sel).shape, u64)
        if mode is None:
            for i in range(4):
                ctl = (sel >> u64(4 * i)) & u64(0xF)
                byte = (wide >> ((ctl & u64(7)) * u64(8))) & u64(0xFF)
                rep = np.where(byte & u64(0x80), u64(0xFF), u64(0))
                out |= np.where(ctl & u64(8), rep, byte) << u64(8 * i)
        else:
            table = np.array(_PRMT[mode], np.uint64)[:, ::-1]  # [selector][target byte]
            pick = table[(sel & u64(3)).astype(np.int64)]
            for i in range(4):
                col = pick[..., i]
                out |= ((wide >> (col * u64(8))) & u64(0xFF)) << u64(8 * i)
        d(m, out.astype(U32))
    return run


@executes(Clmad)
def clmad(insn, c: Compiler):
    u64 = UINT[64]
    a, b, z = c.read(insn.a, u64), c.read(insn.b, u64), c.read(insn.c, u64)
    d = c.write(insn.operands[0], u64)
    hi = insn.mode == "hi"

    def run(m):
        x, y = np.asarray(a(m), u64), np.asarray(b(m), u64)
        lo_acc = np.zeros(np.broadcast(x, y).shape, u64)
        hi_acc = np.zeros_like(lo_acc)
        for i in range(64):
            bit = (y >> u64(i)) & u64(1)
            sel = np.where(bit == 1, x, u64(0))
            lo_acc ^= sel << u64(i)
            if i:
                hi_acc ^= sel >> u64(64 - i)
        d(m, (hi_acc if hi else lo_acc) ^ np.asarray(z(m), u64))
    return run
