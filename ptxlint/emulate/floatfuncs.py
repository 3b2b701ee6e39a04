"""Float-only opcodes: the `.approx` functions, abs/neg, min/max, copysign, testp.

The approximations (`ex2 lg2 sin cos tanh rsqrt`, and `rcp/rsqrt.approx.f64`) are
computed in float64 with numpy and rounded to the destination format: the correctly
rounded value (barring numpy's sub-ulp float64 error), which is within each
instruction's documented error bound (e.g. ex2.approx.f32: 2 ulp; sin/cos.approx.f32:
2^-20.5 absolute in [-100pi, 100pi]). It is not the hardware's bit pattern: code that
depends on the exact bits of an approximation sees the difference.

min/max follow the ISA: one NaN operand gives the other operand, two give the canonical
NaN; `.NaN` makes any NaN operand give the canonical NaN; -0.0 counts as less than +0.0;
`.xorsign.abs` compares magnitudes and gives the result the xor of the signs.
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.floating import Copysign, Testp
from .floatops import canonical32, finish, fmt_of, reader64, writer64
from .floats import F32, F64, flush, round_narrow
from .operands import BOOL, UINT
from .semantics import Compiler, executes

_FUNCS = {
    "ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
}


def factory(insn, c: Compiler):
    op = insn.opcode
    if op in _FUNCS:
        return approx(insn, c, _FUNCS[op])
    if op in ("abs", "neg"):
        return abs_neg(insn, c)
    if op in ("min", "max"):
        return min_max(insn, c)
    raise c.unsupported()


def approx(insn, c: Compiler, fn):
    fmt, lanes = fmt_of(c)
    ftz = insn.ftz
    if fmt is F32:
        a = c.read(insn.a, np.dtype(np.float32))
        w = c.write(insn.operands[0], np.dtype(np.float32))

        def run32(m):
            x = a(m)
            if ftz:
                x = flush(x, F32)
            r = np.asarray(fn(np.asarray(x, np.float64))).astype(np.float32)
            if ftz:
                r = flush(r, F32).astype(np.float32)
            w(m, canonical32(r))
        return run32
    src, w = reader64(c, insn.a, fmt, lanes), writer64(c, insn.operands[0], fmt, lanes)

    def run(m):
        out = []
        for x in src(m):
            x = flush(x, fmt) if ftz else x
            r = np.asarray(fn(x), np.float64)
            out.append(r if fmt is F64 else round_narrow(r, None, fmt, "rn"))
        w(m, finish(out, fmt, ftz, False))
    return run


_SIGN = {(32, 1): 0x80000000, (64, 1): 0x8000000000000000, (16, 1): 0x8000, (32, 2): 0x80008000}


def abs_neg(insn, c: Compiler):
    fmt, lanes = fmt_of(c)
    bits = fmt.bits * lanes
    u = UINT[bits]
    sign = u.type(_SIGN[(bits, lanes)])
    a, w = c.read(insn.a, u), c.write(insn.operands[0], u)
    ftz = insn.ftz
    is_abs = insn.opcode == "abs"

    def run(m):
        x = np.asarray(a(m), u)
        if ftz and lanes == 1:
            v = x.view(np.float32 if bits == 32 else np.float64) if bits >= 32 else None
            if v is not None:
                x = np.asarray(flush(v, fmt if fmt is not F64 else F64)).astype(v.dtype).view(u)
        w(m, (x & ~sign) if is_abs else (x ^ sign))
    return run


def _minmax64(x, y, is_min: bool, nan_mode: bool, xorsign: bool):
    if xorsign:
        s = np.signbit(x) ^ np.signbit(y)
        x, y = np.abs(x), np.abs(y)
    if is_min:
        pick_x = (x < y) | ((x == y) & np.signbit(x))
    else:
        pick_x = (x > y) | ((x == y) & ~np.signbit(x))
    r = np.where(pick_x, x, y)
    nx, ny = np.isnan(x), np.isnan(y)
    r = np.where(nx, y, np.where(ny, x, r))
    if nan_mode:
        r = np.where(nx | ny, np.nan, r)
    if xorsign:
        r = np.where(np.isnan(r), r, np.copysign(r, np.where(s, -1.0, 1.0)))
    return r


def min_max(insn, c: Compiler):
    fmt, lanes = fmt_of(c)
    is_min = insn.opcode == "min"
    nan_mode, xorsign = "NaN" in insn.mods, "xorsign" in insn.mods
    relu, ftz = "relu" in insn.mods, insn.ftz
    n_src = len(insn.sources)
    if fmt is F32 and lanes == 1 and not (nan_mode or xorsign or relu or n_src > 2):
        return _minmax32(insn, c, is_min, ftz)
    srcs = [reader64(c, s, fmt, lanes) for s in insn.sources]
    w = writer64(c, insn.operands[0], fmt, lanes)

    def run(m):
        vals = [s(m) for s in srcs]
        out = []
        for lane in range(lanes):
            xs = [flush(v[lane], fmt) if ftz else v[lane] for v in vals]
            r = xs[0]
            for y in xs[1:]:
                r = _minmax64(np.asarray(r, np.float64), np.asarray(y, np.float64), is_min,
                              nan_mode, xorsign)
            out.append(r)
        w(m, finish(out, fmt, ftz, False, relu))
    return run


def _minmax32(insn, c: Compiler, is_min: bool, ftz: bool):
    f32 = np.dtype(np.float32)
    a, b, w = c.read(insn.a, f32), c.read(insn.b, f32), c.write(insn.operands[0], f32)
    op = np.fmin if is_min else np.fmax

    def run(m):
        x, y = a(m), b(m)
        if ftz:
            x, y = flush(x, F32).astype(np.float32), flush(y, F32).astype(np.float32)
        r = np.asarray(op(x, y))
        zero = r == 0
        if zero.any():  # fmin/fmax leave the sign of equal zeros to chance
            r = np.where(zero, _minmax64(np.asarray(x, np.float64), np.asarray(y, np.float64),
                                         is_min, False, False).astype(np.float32), r)
        w(m, canonical32(r))
    return run


@executes(Copysign)
def copysign(insn, c: Compiler):
    fmt, _ = fmt_of(c)
    u = UINT[fmt.bits]
    sign = u.type(1 << (fmt.bits - 1))
    a, b, w = c.read(insn.a, u), c.read(insn.b, u), c.write(insn.operands[0], u)
    return lambda m: w(m, (b(m) & ~sign) | (a(m) & sign))


@executes(Testp)
def testp(insn, c: Compiler):
    fmt, _ = fmt_of(c)
    a = reader64(c, insn.a, fmt, 1)
    w = c.write(insn.operands[0], BOOL)
    test = insn.test
    tiny = fmt.tiny

    def run(m):
        x = a(m)[0]
        ax = np.abs(x)
        r = {"finite": np.isfinite(x), "infinite": np.isinf(x), "number": ~np.isnan(x),
             "notanumber": np.isnan(x), "normal": np.isfinite(x) & (ax >= tiny),
             "subnormal": (ax < tiny) & (ax > 0)}[test]
        w(m, r)
    return run
