"""Floating-point arithmetic (PTX ISA 9.7.3-9.7.4): add sub mul fma mad div rcp sqrt on
.f32 .f64 .f16 .bf16 and the packed pairs, with every rounding mode, `.ftz` and `.sat`.

Exactness (see `floats.py` for the method):
- f32/f64 `.rn` add, sub, mul, div, sqrt, rcp: numpy's IEEE operations, exact.
- `fma`/`mad` f32: the product is exact in float64; the float64 sum is rounded to f32
  and re-done exactly in the rare lanes where it lands on an f32 midpoint: exact.
- `fma` f64 `.rn`: Boldo-Melquiond emulation (TwoProduct, TwoSum, round-to-odd), exact;
  lanes with extreme exponents (products beyond 2^995 or errors below the subnormal range)
  and the directed modes of f64 fma use exact rational arithmetic (slow, exact).
- `.rz .rm .rp` everywhere: exact (error-free transformations, fallbacks as above).
- half types: computed in float64 with exact errors, rounded once: exact.
- `div.full.f32` (2 ulp) and the `.approx` forms of div, rcp, sqrt give the correctly
  rounded quotient, which lies within their documented error; `div.approx.f32` returns 0
  (NaN for an infinite dividend) for divisors of magnitude in (2^126, 2^128), as
  documented; `rcp.approx.ftz.f64` is the reciprocal of the input's upper word, with a
  zero lower word (its definition in the ISA).
- NaN results are the canonical NaN of the format (0x7fffffff for f32).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..ir.instructions.floating import Cos, Ex2, Fma, Lg2, Rcp, Rsqrt, Sin, Sqrt, Tanh
from .floats import (
    BF16,
    F16,
    F32,
    F64,
    Format,
    decode,
    encode,
    flush,
    risky,
    round_f64,
    round_fraction,
    round_narrow,
    two_prod,
    two_sum,
)
from .operands import UINT
from .semantics import Compiler, executes

FMTS = {"f32": (F32, 1), "f64": (F64, 1), "f16": (F16, 1), "f16x2": (F16, 2),
        "bf16": (BF16, 1), "bf16x2": (BF16, 2)}
NAN32 = np.uint32(0x7FFFFFFF)
_MID = np.uint64(1 << 28)
TINY = 2.0 ** -968  # below this a float64 product's error may not be representable
_LOW29 = np.uint64((1 << 29) - 1)


def fmt_of(c: Compiler, t=None) -> tuple[Format, int]:
    t = t or c.insn.type
    hit = FMTS.get(t.name if t else "")
    if hit is None:
        raise c.unsupported()
    return hit


# ---- float64 views of operands ---------------------------------------------------------------
def reader64(c: Compiler, op, fmt: Format, lanes: int):
    """`f(m)` -> list of float64 values, one per packed lane (low half first)."""
    if fmt is F64:
        r = c.read(op, np.dtype(np.float64))
        return lambda m: [np.asarray(r(m), np.float64)]
    if fmt is F32:
        r = c.read(op, np.dtype(np.float32))
        return lambda m: [np.asarray(r(m)).astype(np.float64)]
    r = c.read(op, UINT[16 * lanes])
    if lanes == 1:
        return lambda m: [decode(r(m), fmt)]
    return lambda m: [decode(np.asarray(r(m)) & 0xFFFF, fmt), decode(np.asarray(r(m)) >> 16, fmt)]


def writer64(c: Compiler, op, fmt: Format, lanes: int):
    """`f(m, values)`: float64 values already representable in `fmt` -> the register."""
    if fmt is F64:
        w = c.write(op, np.dtype(np.uint64))
        return lambda m, vs: w(m, encode(vs[0], F64))
    if fmt is F32:
        w = c.write(op, np.dtype(np.uint32))
        return lambda m, vs: w(m, encode(vs[0], F32))
    w = c.write(op, UINT[16 * lanes])
    if lanes == 1:
        return lambda m, vs: w(m, encode(vs[0], fmt))
    return lambda m, vs: w(m, encode(vs[0], fmt).astype(np.uint32)
                           | (encode(vs[1], fmt).astype(np.uint32) << np.uint32(16)))


# ---- exact arithmetic in float64 --------------------------------------------------------------
def _fraction_op(op: str, args) -> Fraction:
    f = [Fraction(float(x)) for x in args]
    if op == "add":
        return f[0] + f[1]
    if op == "sub":
        return f[0] - f[1]
    if op == "mul":
        return f[0] * f[1]
    if op == "fma":
        return f[0] * f[1] + f[2]
    if op == "div":
        return f[0] / f[1]
    raise ValueError(op)


def _fallback(op: str, xs, s, lanes, fmt: Format, mode: str):
    """Exact rational results for `lanes` (where every input is finite and the rn result
    `s` is not a NaN); zero results keep the sign IEEE gives them."""
    out = np.array(s, np.float64, copy=True)
    for i in np.flatnonzero(lanes):
        args = [float(np.broadcast_to(x, np.shape(s))[i]) for x in xs]
        if not all(np.isfinite(args)) or (op == "div" and args[1] == 0):
            continue
        exact = _fraction_op(op, args)
        neg_zero = bool(np.signbit(s[i])) if exact == 0 else False
        if exact == 0 and op in ("add", "sub", "fma") and mode == "rm":
            neg_zero = True if s[i] == 0 and not _both_positive_zero(op, args) else neg_zero
        out[i] = round_fraction(exact, fmt, mode, negative_zero=neg_zero)
    return out


def _both_positive_zero(op, args) -> bool:
    if op == "fma":
        prod = args[0] * args[1]
        return prod == 0 and not np.signbit(prod) and args[2] == 0 and not np.signbit(args[2])
    b = -args[1] if op == "sub" else args[1]
    return args[0] == 0 and b == 0 and not np.signbit(args[0]) and not np.signbit(b)


def _rm_zero(s, a, b):
    """IEEE: an exact zero sum is -0 when rounding toward -inf (unless both are +0)."""
    both_pos = (a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b)
    return np.where((s == 0) & ~both_pos, -0.0, s)


def _sqrt(xs, fmt: Format, mode: str):
    a = xs[0]
    s = np.sqrt(a)
    if fmt is F64 and mode == "rn":
        return s
    p, pe = two_prod(s, s)
    e = np.sign((a - p) - pe)  # sign of a - s^2: is the root above s?
    if fmt is F64:
        bad = (risky(s) | risky(p)) & np.isfinite(s) & (s != 0)
        return _sqrt_fallback(round_f64(s, e, mode), a, bad, mode)
    return round_narrow(s, np.where(np.isfinite(s), e, 0), fmt, mode)


def _add(xs, fmt: Format, mode: str):
    a, b = xs
    s, e = two_sum(a, b)
    if mode == "rm":
        s = _rm_zero(s, a, b)
    e = np.where(np.isfinite(s), e, 0)
    if fmt is F64:
        return round_f64(s, e, mode, np.isinf(s) & np.isfinite(a) & np.isfinite(b))
    return round_narrow(s, e, fmt, mode)


def _mul(xs, fmt: Format, mode: str):
    a, b = xs
    s = a * b
    if fmt is not F64:
        return round_narrow(s, None, fmt, mode)  # a product of <= 24-bit values is exact
    if mode == "rn":
        return s
    _, e = two_prod(a, b)
    bad = (risky(a, b, s) | (np.abs(s) < TINY)) & np.isfinite(a) & np.isfinite(b) \
        & (a != 0) & (b != 0)
    out = round_f64(s, np.where(np.isfinite(s), e, 0), mode)
    return _fallback("mul", xs, out, bad, F64, mode) if bad.any() else out


def _fma(xs, fmt: Format, mode: str):
    a, b, c = xs
    if fmt is F64:
        return fma64(a, b, c, mode)
    p = a * b  # exact
    s, e = two_sum(p, c)
    if mode == "rm":
        s = _rm_zero(s, p, c)
    return round_narrow(s, np.where(np.isfinite(s), e, 0), fmt, mode)


def _div(xs, fmt: Format, mode: str):
    a, b = xs
    s = a / b
    if fmt is F64 and mode == "rn":
        return s
    p, pe = two_prod(s, b)
    e = np.sign((a - p) - pe) * np.sign(b)  # sign of a/b - s
    e = np.where(np.isfinite(s) & (s != 0), e, 0)
    if fmt is not F64:
        return round_narrow(s, e, fmt, mode)
    bad = (risky(a, b, s) | risky(p) | (np.abs(s) < TINY)) & np.isfinite(a) \
        & np.isfinite(b) & (b != 0) & (a != 0)
    out = round_f64(s, e, mode, np.isinf(s) & np.isfinite(a) & (b != 0))
    return _fallback("div", xs, out, bad, F64, mode) if bad.any() else out


_EXACT = {"sqrt": _sqrt, "add": _add, "mul": _mul, "fma": _fma, "div": _div}


def exact(op: str, xs, fmt: Format, mode: str):
    """`op` of float64 values rounded once to `fmt` with `mode` (float64 result)."""
    xs = [np.asarray(x, np.float64) for x in xs]
    if op == "sub":
        op, xs = "add", [xs[0], -xs[1]]
    return _EXACT[op](xs, fmt, mode)


def _sqrt_fallback(out, a, bad, mode):
    for i in np.flatnonzero(bad):
        x = Fraction(float(a[i]))
        # bisect on the float64 neighbours of the rn result
        r = float(np.sqrt(a[i]))
        lo, hi = np.nextafter(r, 0.0), np.nextafter(r, np.inf)
        cands = sorted({lo, r, hi})
        below = [v for v in cands if Fraction(v) ** 2 <= x]
        above = [v for v in cands if Fraction(v) ** 2 >= x]
        if mode == "rp" and above:
            out[i] = above[0]
        elif mode in ("rz", "rm") and below:
            out[i] = below[-1]
    return out


def fma64(a, b, c, mode: str = "rn"):
    """Correctly rounded a*b + c in float64 (Boldo-Melquiond with round-to-odd)."""
    uh, ul = two_prod(a, b)
    th, tl = two_sum(c, uh)
    v, ve = two_sum(tl, ul)
    even = (v.view(np.uint64) & np.uint64(1)) == 0
    bump = (ve != 0) & even
    v = np.where(bump, np.nextafter(v, np.where(ve > 0, np.inf, -np.inf)), v)
    r = th + v
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    plain = a * b + c  # special values: IEEE rules of the unfused form are the same here
    r = np.where(finite & np.isfinite(r), r, plain)
    if mode == "rn":
        bad = finite & (risky(a, b, uh) | (np.abs(uh) > 2.0 ** 1000) | (np.abs(uh) < TINY)) \
            & (a != 0) & (b != 0)
    else:
        bad = finite
    if bad.any():
        r = _fallback("fma", [a, b, c], r, bad, F64, mode)
    return r


# ---- the f32 fast paths ---------------------------------------------------------------------------
def fma32(a, b, c):
    """Correctly rounded f32 fma of float32 values (see the module docstring)."""
    s = np.asarray(np.asarray(a, np.float64) * np.asarray(b, np.float64)
                   + np.asarray(c, np.float64))
    r = s.astype(np.float32)
    bits = s.view(np.uint64)
    suspect = ((bits & _LOW29) == _MID) | ((np.abs(s) < 2.0 ** -125) & (s != 0))
    if suspect.any():
        if s.ndim == 0:
            return exact("fma", [np.atleast_1d(x) for x in (a, b, c)], F32, "rn").astype(
                np.float32)[0]
        lanes = np.flatnonzero(suspect)
        sub = [np.broadcast_to(np.asarray(x, np.float64), s.shape)[lanes] for x in (a, b, c)]
        r[lanes] = exact("fma", sub, F32, "rn").astype(np.float32)
    return r


def canonical32(r):
    """f32 results with NaNs made the canonical 0x7fffffff."""
    r = np.asarray(r, np.float32)
    nan = np.isnan(r)
    if nan.any():
        r = np.where(nan, NAN32.view(np.float32), r)
    return r


def finish32(r, ftz: bool, sat: bool):
    if ftz:
        r = flush(r, F32).astype(np.float32)
    if sat:
        r = np.where(np.isnan(r), np.float32(0), np.clip(r, np.float32(0), np.float32(1)))
    return canonical32(r)


def finish(vals, fmt: Format, ftz: bool, sat: bool, relu: bool = False):
    out = []
    for v in vals:
        if ftz:
            v = flush(v, fmt)
        if sat:
            v = np.where(np.isnan(v), 0.0, np.clip(v, 0.0, 1.0))
        if relu:
            v = np.where(np.isnan(v), v, np.maximum(v, 0.0))
        out.append(v)
    return out


# ---- factory ----------------------------------------------------------------------------------
_OPS = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "mad": 3, "div": 2, "rcp": 1, "sqrt": 1}


@executes(Fma, Rcp, Sqrt, Rsqrt, Sin, Cos, Lg2, Ex2, Tanh)
def float_factory(insn, c: Compiler):
    """Executors of the float forms of the shared opcodes and of the float-only ones."""
    from . import floatfuncs

    op = insn.opcode
    if op not in _OPS:
        return floatfuncs.factory(insn, c)
    fmt, lanes = fmt_of(c)
    if op == "rcp" and "approx" in insn.mods and fmt is F64:
        a = c.read(insn.sources[0], np.dtype(np.uint64))
        w64 = c.write(insn.operands[0], np.dtype(np.uint64))
        return lambda m: w64(m, _rcp_approx_f64(np.asarray(a(m), np.uint64)))
    mode = insn.rounding or "rn"
    ftz, sat, relu = insn.ftz, "sat" in insn.mods, "relu" in insn.mods
    if op == "mad":
        op = "fma"
    if fmt is F32 and lanes == 1 and not relu:
        fast = _fast32(insn, c, op, mode, ftz, sat)
        if fast is not None:
            return fast
    srcs = [reader64(c, s, fmt, lanes) for s in insn.sources[: _OPS[insn.opcode]]]
    w = writer64(c, insn.operands[0], fmt, lanes)
    approx = "approx" in insn.mods or "full" in insn.mods

    def run(m):
        shape = (m.count(),)
        vals = [s(m) for s in srcs]
        out = []
        for lane in range(lanes):
            xs = [np.broadcast_to(v[lane], shape) for v in vals]
            if ftz:
                xs = [flush(x, fmt) for x in xs]
            if op == "rcp":
                xs, kind = [np.float64(1.0), xs[0]], "div"
            else:
                kind = op
            r = exact(kind, xs, fmt, mode)
            if approx and op == "div" and fmt is F32:
                # 2^126 < |b| < 2^128: 0 for a finite a (signed), NaN for an infinite one
                big = (np.abs(xs[1]) > 2.0 ** 126) & (np.abs(xs[1]) < 2.0 ** 128)
                r = np.where(big, np.where(np.isfinite(xs[0]), np.copysign(0.0, r), np.nan),
                             r)
            out.append(r)
        w(m, finish(out, fmt, ftz, sat, relu))
    return run


_HIGH_WORD = np.uint64(0xFFFFFFFF00000000)


def _rcp_approx_f64(bits: np.ndarray) -> np.ndarray:
    """rcp.approx.ftz.f64 on bit patterns, as the ISA defines it: the reciprocal of the
    input's upper word (a 1.11.20 float), written to the upper word with the lower word
    zero (truncated here); subnormals flush to zero, NaN gives 0x7fffffff00000000."""
    x = flush((bits & _HIGH_WORD).view(np.float64), F64)
    with np.errstate(divide="ignore", over="ignore"):
        r = np.float64(1.0) / x
    out = flush((np.asarray(r).view(np.uint64) & _HIGH_WORD).view(np.float64), F64)
    return np.where(np.isnan(x), np.uint64(0x7FFFFFFF00000000),
                    np.asarray(out, np.float64).view(np.uint64))


def _fast32(insn, c: Compiler, op: str, mode: str, ftz: bool, sat: bool):
    """numpy float32 kernels for the round-to-nearest forms."""
    if mode != "rn" or (op == "div" and "approx" in insn.mods):
        return None
    f32 = np.dtype(np.float32)
    srcs = [c.read(s, f32) for s in insn.sources[: _OPS[insn.opcode]]]
    w = c.write(insn.operands[0], f32)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "sqrt": np.sqrt, "rcp": lambda x: np.float32(1) / x, "fma": fma32}[op]
    if not ftz and not sat:
        if len(srcs) == 2:
            a, b = srcs
            return lambda m: w(m, canonical32(fn(a(m), b(m))))
        if len(srcs) == 1:
            a, = srcs
            return lambda m: w(m, canonical32(fn(a(m))))

    def run(m):
        xs = [s(m) for s in srcs]
        if ftz:
            xs = [flush(x, F32).astype(np.float32) for x in xs]
        w(m, finish32(fn(*xs), ftz, sat))
    return run
