"""Conversions (PTX ISA 9.7.10.24-25): `cvt` between integer and floating-point types
with saturation and every rounding mode, and `cvt.pack`.

- integer -> integer: truncation or sign/zero extension by the source type; `.sat`
  clamps to the destination's range.
- float -> integer (`.rni .rzi .rmi .rpi`): rounded, then always clamped to the
  destination range; NaN gives 0.
- integer -> float (`.rn .rz .rm .rp`): exact (64-bit values are rounded from their
  exact value, not through a double rounding).
- float -> float: widening is exact; narrowing rounds once with the mode (and
  `.satfinite`, `.relu`); an integer rounding (`cvt.rni.f32.f32`) rounds to an integral
  value in the float format. Pairs: `cvt.rn.f16x2.f32 d, a, b` puts a in the upper half;
  the FP8 pairs `e4m3x2`/`e5m2x2` likewise, and convert back to `f16x2`.
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.convert import Cvt, CvtPack
from ..ir.types import Kind
from .floats import (
    BF16,
    E4M3,
    E5M2,
    F16,
    F32,
    F64,
    FORMATS,
    TF32,
    decode,
    encode,
    flush,
    round_f64,
    round_narrow,
    round_native,
)
from .operands import SINT, UINT
from .semantics import Compiler, executes

_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
_PAIRS = {"f16x2": F16, "bf16x2": BF16, "e4m3x2": E4M3, "e5m2x2": E5M2}


def saturate_int(v, src: np.dtype, dst: np.dtype):
    si, di = np.iinfo(src), np.iinfo(dst)
    lo, hi = max(si.min, di.min), min(si.max, di.max)
    if lo > si.min or hi < si.max:
        v = np.clip(v, src.type(lo), src.type(hi))
    return np.asarray(v).astype(dst)


def int_to_float(x, src: np.dtype, fmt, mode: str):
    """Exact integer values -> `fmt` (float64 result)."""
    x = np.asarray(x)
    s = x.astype(np.float64)
    if src.itemsize <= 4:
        e = None
    elif src.kind == "i":
        top = s >= 2.0 ** 63  # only x near INT64_MAX rounds up to 2^63
        back = np.where(top, 0.0, s).astype(np.int64)
        e = np.where(top, -1, np.sign(x - back))
    else:
        top = s >= 2.0 ** 64
        back = np.where(top, 0.0, s).astype(np.uint64)
        e = np.where(top, -1, np.where(x > back, 1, np.where(x < back, -1, 0)))
    if fmt is F64:
        return s if e is None else round_f64(s, e, mode)
    return round_narrow(s, e, fmt, mode)


def float_to_int(v, dst: np.dtype, rnd: str):
    r = _INT_ROUND[rnd](np.asarray(v, np.float64))
    info = np.iinfo(dst)
    hi_edge = float(info.max) + 1.0  # 2^k: exactly representable
    nan = np.isnan(r)
    over, under = r >= hi_edge, r < float(info.min)
    ok = ~(nan | over | under)
    out = np.where(ok, r, 0.0).astype(dst)
    out = np.where(over, dst.type(info.max), out)
    out = np.where(under, dst.type(info.min), out)
    return np.where(nan, dst.type(0), out).astype(dst)


def _float_reader(c: Compiler, op, t):
    name = t.name
    if name == "f64":
        r = c.read(op, np.dtype(np.float64))
        return lambda m: np.asarray(r(m), np.float64)
    if name in ("f32", "tf32"):
        r = c.read(op, np.dtype(np.float32))
        return lambda m: np.asarray(r(m)).astype(np.float64)
    fmt = FORMATS.get(name)
    if fmt is None:
        raise c.unsupported()
    r = c.read(op, UINT[t.bits])
    return lambda m: decode(r(m), fmt)


@executes(Cvt)
def cvt(insn, c: Compiler):
    types = insn.types
    if len(types) < 2 or insn.is_scaled or "rs" in insn.mods:
        raise c.unsupported()
    dt_, st = types[0], types[-1]
    if dt_.name in _PAIRS:
        return _pair(insn, c, dt_, st)
    if st.name in _PAIRS:
        return _unpair(insn, c, dt_, st)
    if dt_.is_integer:
        return _to_int(insn, c, dt_, st)
    if FORMATS.get(dt_.name) is None or dt_.kind is not Kind.FLOAT:
        raise c.unsupported()
    if st.is_integer:
        return _int_to_float(insn, c, dt_, st)
    if st.name in ("f32", "f64") and dt_.name in ("f32", "f64") and "relu" not in insn.mods:
        return _cvt_native(insn, c, st, dt_, insn.rounding, _sat(insn), insn.ftz)
    return _float_to_float(insn, c, dt_, st)


def _sat(insn) -> bool:
    return insn.saturate and "satfinite" not in insn.mods


def _to_int(insn, c: Compiler, dt_, st):
    dst = c.dtype(dt_)
    w = c.write(insn.operands[0], dst)
    if st.is_integer:
        src = c.dtype(st)
        a = c.read(insn.a, src)
        if _sat(insn):
            return lambda m: w(m, saturate_int(a(m), src, dst))
        return lambda m: w(m, np.asarray(a(m)).astype(dst))
    a = _float_reader(c, insn.a, st)
    rnd = insn.rounding if insn.rounding in _INT_ROUND else "rzi"
    ftz = insn.ftz
    return lambda m: w(m, float_to_int(flush(a(m), F32) if ftz else a(m), dst, rnd))


def _int_to_float(insn, c: Compiler, dt_, st):
    fmt = FORMATS[dt_.name]
    w = c.write(insn.operands[0], UINT[dt_.bits])
    src = c.dtype(st)
    a = c.read(insn.a, src)
    mode = insn.rounding if insn.rounding in ("rn", "rz", "rm", "rp") else "rn"
    sat = _sat(insn)
    if fmt is F32 and mode == "rn" and not sat:  # numpy's conversion rounds once
        return lambda m: w(m, np.asarray(a(m)).astype(np.float32))
    return lambda m: w(m, encode(_finish(int_to_float(a(m), src, fmt, mode), fmt, sat,
                                         False, False), fmt))


def _float_to_float(insn, c: Compiler, dt_, st):
    fmt, src_fmt = FORMATS[dt_.name], FORMATS[st.name]
    w = c.write(insn.operands[0], UINT[dt_.bits])
    a = _float_reader(c, insn.a, st)
    mode, sat, ftz = insn.rounding, _sat(insn), insn.ftz
    satfinite, relu = "satfinite" in insn.mods, "relu" in insn.mods
    widening = fmt is F64 or (fmt.p >= src_fmt.p and fmt.emin <= src_fmt.emin)

    def run(m):
        x = a(m)
        if ftz:
            x = flush(x, src_fmt)
        if mode in _INT_ROUND:
            r = _INT_ROUND[mode](x)
            r = round_narrow(r, None, fmt, "rn") if fmt is not F64 else r
        elif widening:
            r = x  # exact
        else:
            r = round_narrow(x, None, fmt, mode or "rn", satfinite)
        w(m, encode(_finish(r, fmt, sat, ftz, relu), fmt))
    return run


def _cvt_native(insn, c: Compiler, st, dt_, mode, sat: bool, ftz: bool):
    """f32/f64 -> f32/f64 in numpy's own types: widening is exact, `astype` rounds to
    nearest once, `round_native` does the directed modes."""
    src = np.dtype(np.float32 if st.name == "f32" else np.float64)
    dst = np.dtype(np.float32 if dt_.name == "f32" else np.float64)
    a, w = c.read(insn.a, src), c.write(insn.operands[0], dst)
    fmt = F32 if dst == np.float32 else F64
    narrowing = src.itemsize > dst.itemsize

    def run(m):
        x = np.asarray(a(m))
        if ftz and src == np.float32:
            x = flush(x, F32).astype(src)
        if mode in _INT_ROUND:
            x = _INT_ROUND[mode](x)
        if narrowing and mode not in (None, "rn") and mode not in _INT_ROUND:
            r = round_native(x, None, np.float32, mode)
        else:
            r = x.astype(dst)
        if ftz and dst == np.float32:
            r = flush(r, F32).astype(dst)
        if sat:
            r = np.where(np.isnan(r), dst.type(0), np.clip(r, dst.type(0), dst.type(1)))
        nan = np.isnan(r)
        if nan.any():
            r = np.where(nan, dst.type(np.nan), r)
            r = encode(r.astype(np.float64), fmt)
        w(m, r)
    return run


def _finish(r, fmt, sat: bool, ftz: bool, relu: bool):
    if ftz and fmt is F32:
        r = flush(r, F32)
    if sat:
        r = np.where(np.isnan(r), 0.0, np.clip(r, 0.0, 1.0))
    if relu:
        r = np.where(np.isnan(r), r, np.maximum(r, 0.0))
    return r


def _pair(insn, c: Compiler, dt_, st):
    """`cvt.rn{.satfinite}{.relu}.f16x2.f32 d, a, b` (a -> upper half) and the FP8 pairs,
    also from one packed `f16x2` source."""
    fmt = _PAIRS[dt_.name]
    half = dt_.bits // 2
    mode = insn.rounding or "rn"
    satfinite, relu = "satfinite" in insn.mods, "relu" in insn.mods
    if fmt in (E4M3, E5M2):
        satfinite = satfinite or False
    if st.name in _PAIRS:
        src_fmt = _PAIRS[st.name]
        r = c.read(insn.a, UINT[st.bits])
        sh = st.bits // 2
        hi = lambda m: decode(np.asarray(r(m)) >> sh, src_fmt)
        lo = lambda m: decode(np.asarray(r(m)) & ((1 << sh) - 1), src_fmt)
    elif len(insn.sources) >= 2:
        hi, lo = _float_reader(c, insn.a, st), _float_reader(c, insn.b, st)
    else:
        raise c.unsupported()
    w = c.write(insn.operands[0], UINT[dt_.bits])
    u = UINT[dt_.bits]

    def run(m):
        parts = []
        for get in (lo, hi):
            v = round_narrow(get(m), None, fmt, mode, satfinite)
            if relu:
                v = np.where(np.isnan(v), v, np.maximum(v, 0.0))
            parts.append(np.asarray(encode(v, fmt)).astype(np.uint64))
        w(m, (parts[0] | (parts[1] << np.uint64(half))).astype(u))
    return run


def _unpair(insn, c: Compiler, dt_, st):
    """`cvt.rn.f16x2.e4m3x2 d, a`: each FP8 of a -> an f16 half of d (exact)."""
    if dt_.name not in ("f16x2", "bf16x2"):
        raise c.unsupported()
    fmt, src_fmt = _PAIRS[dt_.name], _PAIRS[st.name]
    r = c.read(insn.a, UINT[st.bits])
    w = c.write(insn.operands[0], UINT[32])
    sh = st.bits // 2

    def run(m):
        x = np.asarray(r(m)).astype(np.uint32)
        lo = encode(round_narrow(decode(x & ((1 << sh) - 1), src_fmt), None, fmt), fmt)
        hi = encode(round_narrow(decode(x >> sh, src_fmt), None, fmt), fmt)
        w(m, np.asarray(lo).astype(np.uint32) | (np.asarray(hi).astype(np.uint32) << np.uint32(16)))
    return run


@executes(CvtPack)
def cvt_pack(insn, c: Compiler):
    t = insn.convert_type
    if t is None or t.bits not in (2, 4, 8, 16):
        raise c.unsupported()
    size, signed = t.bits, t.is_signed
    lo_v, hi_v = (-(1 << (size - 1)), (1 << (size - 1)) - 1) if signed else (0, (1 << size) - 1)
    a, b = c.read(insn.a, SINT[32]), c.read(insn.b, SINT[32])
    fill = c.read(insn.c, UINT[32]) if insn.c is not None else None
    w = c.write(insn.operands[0], UINT[32])
    mask = (1 << size) - 1

    def run(m):
        ta = np.clip(np.asarray(a(m), np.int64), lo_v, hi_v) & mask
        tb = np.clip(np.asarray(b(m), np.int64), lo_v, hi_v) & mask
        d = tb | (ta << size)
        if size < 16 and fill is not None:
            d = d | ((np.asarray(fill(m), np.int64) << (2 * size)) & 0xFFFFFFFF)
        w(m, np.asarray(d & 0xFFFFFFFF).astype(np.uint32))
    return run


__all__ = ["TF32", "cvt", "cvt_pack", "float_to_int", "int_to_float", "saturate_int"]
