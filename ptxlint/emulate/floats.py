"""Floating-point formats and exact rounding, vectorised over numpy float64 arrays.

Every result of a narrow format (f32, f16, bf16, tf32, e4m3, e5m2) is computed as an
unevaluated pair `s + e`: `s` the float64 nearest the exact value and `e` the exact
float64 error (from TwoSum/TwoProduct), of which only the sign matters. Because these
formats have at most 24 bits of precision, a midpoint between two of their values is a
float64, so rounding `s` and breaking a tie with the sign of `e` gives the correctly
rounded result in every rounding mode (`round_narrow`). float64 results use `s` itself
and step one ulp by the sign of `e` for the directed modes (`round_f64`).

TwoProduct (Dekker's split) is exact unless the operands are huge (beyond 2^995) or the
product's low part underflows; `risky` flags those lanes and callers fall back to exact
rational arithmetic (`round_fraction`) for them, one element at a time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

MODES = ("rn", "rz", "rm", "rp", "rna")
_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's constant for float64


@dataclass(frozen=True)
class Format:
    """A binary floating-point format: `p` significant bits (the hidden one included),
    `emin` the exponent of the smallest normal, `max_finite` its largest finite value."""

    name: str
    bits: int
    p: int
    emin: int
    max_finite: float
    has_inf: bool = True

    @property
    def tiny(self) -> float:
        """Smallest normal magnitude (what `.ftz` flushes below)."""
        return math.ldexp(1.0, self.emin)


F64 = Format("f64", 64, 53, -1022, float(np.finfo(np.float64).max))
F32 = Format("f32", 32, 24, -126, float(np.finfo(np.float32).max))
F16 = Format("f16", 16, 11, -14, 65504.0)
BF16 = Format("bf16", 16, 8, -126, math.ldexp(255.0, 120))
TF32 = Format("tf32", 32, 11, -126, math.ldexp(2047.0, 117))
E4M3 = Format("e4m3", 8, 4, -6, 448.0, has_inf=False)
E5M2 = Format("e5m2", 8, 3, -14, 57344.0)
FORMATS = {f.name: f for f in (F64, F32, F16, BF16, TF32, E4M3, E5M2)}


# ---- error-free transformations -------------------------------------------------------------
def two_sum(a, b):
    """s = fl(a + b) and the exact error e = (a + b) - s (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """p = fl(a * b) and the error e = a*b - p (Dekker), exact unless `risky`."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def risky(*xs):
    """Lanes where Dekker's product may be inexact: a huge operand, a product whose
    error underflows, or a non-finite value (those take the exact fallback)."""
    bad = np.zeros(np.broadcast(*xs).shape, bool)
    for x in xs:
        ax = np.abs(x)
        bad |= ~np.isfinite(ax) | (ax > 2.0 ** 995) | ((ax < 2.0 ** -968) & (ax != 0))
    return bad


# ---- rounding ------------------------------------------------------------------------------
def _magnitude_mode(mode: str, neg):
    """Per element: 'near', 'near_away', 'zero' or 'away' (rounding of the magnitude)."""
    if mode == "rn":
        return "near"
    if mode == "rna":
        return "near_away"
    if mode == "rz":
        return "zero"
    away = ~neg if mode == "rp" else neg  # rp rounds positives up, rm negatives down
    return away


_NATIVE = {"f32": np.float32, "f16": np.float16}


def round_native(s, e, dt, mode: str = "rn"):
    """`s + e` rounded to a format numpy has (float32, float16), as that dtype.

    numpy converts float64 to it with round-to-nearest-even, which is right unless `s` is
    a midpoint and `e` breaks the tie; the sign of `(s + e) - r` is that of `s - r`, or of
    `e` when `s == r`, so one step toward the exact value fixes ties and gives the
    directed modes. Only the sign of `e` is used."""
    s = np.asarray(s, np.float64)
    r = s.astype(dt)
    if e is None and mode == "rn":
        return r
    e = np.zeros_like(s) if e is None else np.asarray(e, np.float64)
    r64 = r.astype(np.float64)
    # the sign of exact - r: e (|e| under half a float64 ulp of s) only decides when s
    # is r itself, two distinct float64 values being at least an ulp apart
    d = np.where(s != r64, s - r64, np.sign(e))
    up, down = np.asarray(np.inf, dt), np.asarray(-np.inf, dt)
    if mode in ("rn", "rna"):
        mx = float(np.finfo(dt).max)
        edge = mx + (mx - float(np.nextafter(dt(mx), dt(0)))) / 2  # ties here go to inf
        over_tie = (np.abs(s) == edge) & (np.sign(e) == -np.sign(s))
        r = np.where(over_tie, np.copysign(dt(mx), s).astype(dt), r)
        r64 = r.astype(np.float64)
        toward = np.nextafter(r, np.where(s > r64, up, down))
        t64 = toward.astype(np.float64)
        tie = (s != r64) & np.isfinite(r64) & (2 * (s - r64) == (t64 - r64))
        if mode == "rn":
            switch = tie & (e != 0) & (np.sign(e) == np.sign(t64 - r64))
        else:  # ties away from zero, unless the error says the tie is not one
            switch = tie & ((e == 0) & (np.abs(t64) > np.abs(r64)) | (e != 0) & (
                np.sign(e) == np.sign(t64 - r64)))
        return np.where(switch, toward, r)
    if mode == "rm":
        return np.where(d < 0, np.nextafter(r, down), r)
    if mode == "rp":
        return np.where(d > 0, np.nextafter(r, up), r)
    # rz: step toward zero when the rounding went away from it
    step = ((r > 0) & (d < 0)) | ((r < 0) & (d > 0))
    return np.where(step, np.nextafter(r, np.zeros_like(r)), r)


def round_narrow(s, e, fmt: Format, mode: str = "rn", satfinite: bool = False):
    """The value `s + e` (`e` may be None: exact `s`) rounded to `fmt` with `mode`,
    returned as float64 (exactly representable in `fmt`). NaN stays NaN."""
    native = _NATIVE.get(fmt.name)
    if native is not None and not satfinite:
        return round_native(s, e, native, mode).astype(np.float64)
    s = np.asarray(s, np.float64)
    a = np.abs(s)
    neg = np.signbit(s)
    d = np.zeros_like(a) if e is None else np.sign(np.asarray(e, np.float64))
    d = np.where(neg, -d, d)  # +1: the exact magnitude is larger than |s|
    finite = np.isfinite(a)
    safe = np.where(finite & (a > 0), a, 1.0)
    E = np.maximum(np.frexp(safe)[1] - 1, fmt.emin)
    q = np.ldexp(1.0, E - (fmt.p - 1))
    x = safe / q
    fl = np.floor(x)
    frac = x - fl
    mm = _magnitude_mode(mode, neg)
    if isinstance(mm, str):
        away = np.full(a.shape, mm == "away")
        zero = np.full(a.shape, mm == "zero")
        near = mm in ("near", "near_away")
    else:
        away, zero, near = mm, ~mm, False
    if near:
        tie_up = (d > 0) | ((d == 0) & ((np.fmod(fl, 2) == 1) if mode == "rn" else True))
        up = (frac > 0.5) | ((frac == 0.5) & tie_up)
        down = np.zeros(a.shape, bool)
    else:
        up = away & ((frac > 0) | ((frac == 0) & (d > 0)))
        down = zero & (frac == 0) & (d < 0)
    res = (fl + up) * q
    at_binade = (fl == 2.0 ** (fmt.p - 1)) & (E > fmt.emin)
    res = np.where(down, safe - np.where(at_binade, q / 2, q), res)
    over = res > fmt.max_finite
    if satfinite:
        big = fmt.max_finite
    else:
        inf = np.inf if fmt.has_inf else np.nan
        big = np.where(zero if not near else False, fmt.max_finite, inf)
    res = np.where(over, big, res)
    smallest = math.ldexp(1.0, fmt.emin - fmt.p + 1)
    res = np.where(a == 0, np.where(away & (d > 0), smallest, 0.0), res)
    if satfinite:
        a = np.where(np.isinf(a), fmt.max_finite, a)
    res = np.where(np.isfinite(a), res, a)
    return np.copysign(res, s)


def round_f64(s, e, mode: str, overflowed=None):
    """Directed rounding of float64 results: `s` is the round-to-nearest value and `e`
    the sign of the exact error; `overflowed` marks lanes whose exact value is finite
    but `s` is infinite (they become the largest finite value toward zero)."""
    if mode in ("rn", "rna"):
        return s
    s = np.asarray(s, np.float64)
    d = np.sign(e)
    neg = np.signbit(s)
    mm = _magnitude_mode(mode, neg)
    away = np.full(s.shape, mm == "away") if isinstance(mm, str) else mm
    dm = np.where(neg, -d, d)
    step_up = away & (dm > 0)
    step_down = ~away & (dm < 0)
    out = np.where(step_up, np.nextafter(s, np.copysign(np.inf, s)), s)
    out = np.where(step_down, np.nextafter(s, np.copysign(0.0, s)), out)
    if overflowed is not None:
        out = np.where(overflowed & ~away & np.isinf(s), np.copysign(F64.max_finite, s), out)
    return out


def round_fraction(x: Fraction, fmt: Format, mode: str, negative_zero: bool = False) -> float:
    """Exact rounding of a rational to `fmt` (the slow reference and fallback)."""
    if x == 0:
        return -0.0 if negative_zero else 0.0
    neg = x < 0
    a = -x if neg else x
    E = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** E > a:
        E -= 1
    if Fraction(2) ** (E + 1) <= a:
        E += 1
    E = max(E, fmt.emin)
    q = Fraction(2) ** (E - fmt.p + 1)
    n = a / q
    fl = n.numerator // n.denominator
    frac = n - fl
    away = {"rz": False, "rp": not neg, "rm": neg}.get(mode)
    if mode in ("rn", "rna"):
        half = Fraction(1, 2)
        up = frac > half or (frac == half and (mode == "rna" or fl % 2 == 1))
    else:
        up = bool(away) and frac > 0
    r = (fl + up) * q
    if r > Fraction(fmt.max_finite):
        toward_zero = mode not in ("rn", "rna") and not away
        r_f = fmt.max_finite if toward_zero else (math.inf if fmt.has_inf else math.nan)
        return -r_f if neg else r_f
    value = float(r)
    return -value if neg else value


# ---- encodings -----------------------------------------------------------------------------
def _encode_small(v, fmt: Format, nan_bits: int):
    """Bits of values already representable in an 8-bit format."""
    a = np.abs(v)
    sign = np.signbit(v).astype(np.uint32) << (fmt.bits - 1)
    safe = np.where(np.isfinite(a) & (a > 0), a, 1.0)
    E = np.frexp(safe)[1] - 1
    normal = E >= fmt.emin
    biased = np.where(normal, E - fmt.emin + 1, 0)
    scale = np.ldexp(1.0, np.where(normal, E, fmt.emin) - (fmt.p - 1))
    mant = safe / scale - np.where(normal, 2.0 ** (fmt.p - 1), 0)
    bits = (biased.astype(np.uint32) << (fmt.p - 1)) | mant.astype(np.uint32)
    bits = np.where(a == 0, 0, bits)
    exp_all = ((1 << (fmt.bits - fmt.p)) - 1) << (fmt.p - 1)
    bits = np.where(np.isinf(a), exp_all, bits)
    bits = (bits | sign).astype(np.uint32)
    return np.where(np.isnan(v), nan_bits, bits).astype(np.uint8)


def _small_table(fmt: Format) -> np.ndarray:
    out = np.empty(256, np.float64)
    mbits = fmt.p - 1
    ebits = fmt.bits - 1 - mbits
    for b in range(256):
        sign = -1.0 if b >> 7 else 1.0
        e = (b >> mbits) & ((1 << ebits) - 1)
        m = b & ((1 << mbits) - 1)
        if fmt.has_inf and e == (1 << ebits) - 1:
            out[b] = sign * math.inf if m == 0 else math.nan
        elif not fmt.has_inf and e == (1 << ebits) - 1 and m == (1 << mbits) - 1:
            out[b] = math.nan
        elif e == 0:
            out[b] = sign * math.ldexp(m, fmt.emin - mbits)
        else:
            out[b] = sign * math.ldexp(m + (1 << mbits), e + fmt.emin - 1 - mbits)
    return out


_TABLES = {"e4m3": _small_table(E4M3), "e5m2": _small_table(E5M2)}
CANONICAL_NAN = {"f64": 0x7FFFFFFFFFFFFFFF, "f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF,
                 "tf32": 0x7FFFFFFF, "e4m3": 0x7F, "e5m2": 0x7F}


def encode(v, fmt: Format):
    """float64 values (representable in `fmt`) -> unsigned bit patterns of `fmt`;
    NaNs become the canonical NaN of the format."""
    v = np.asarray(v, np.float64)
    nan = np.isnan(v)
    if fmt.name == "f64":
        return np.where(nan, np.uint64(CANONICAL_NAN["f64"]), v.view(np.uint64))
    if fmt.name in ("f32", "tf32"):
        return np.where(nan, np.uint32(0x7FFFFFFF), v.astype(np.float32).view(np.uint32))
    if fmt.name == "f16":
        return np.where(nan, np.uint16(0x7FFF), v.astype(np.float16).view(np.uint16))
    if fmt.name == "bf16":
        bits = (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return np.where(nan, np.uint16(0x7FFF), bits)
    return _encode_small(v, fmt, CANONICAL_NAN[fmt.name])


def decode(bits, fmt: Format):
    """Bit patterns of `fmt` -> float64 values (exact)."""
    bits = np.asarray(bits)
    if fmt.name == "f64":
        return bits.astype(np.uint64).view(np.float64)
    if fmt.name in ("f32", "tf32"):
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if fmt.name == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt.name == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return _TABLES[fmt.name][bits.astype(np.uint8)]


def flush(x, fmt: Format):
    """`.ftz`: subnormal values become zero of the same sign."""
    return np.where(np.abs(x) < fmt.tiny, np.copysign(np.zeros_like(x), x), x)
