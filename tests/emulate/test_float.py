"""Floating-point semantics against numpy, `math` and an exact rational oracle
(`oracle.py`): IEEE arithmetic and rcp in every rounding mode at f16/bf16/f32/f64, fma, the
`.approx` functions within their documented errors, min/max NaN rules, comparisons."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import elementwise
from .oracle import exact_round

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NPT = {"f32": np.float32, "f64": np.float64}


def floats(t: str, finite: bool = False):
    width = 32 if t == "f32" else 64
    edge = [0.0, -0.0, 1.0, -1.0, 1.5, 2.0 ** -126, 2.0 ** -149, 3.4e38, 1e-40, 0.1]
    one = st.one_of(st.floats(width=width, allow_nan=not finite, allow_infinity=not finite),
                    st.sampled_from(edge))
    return st.lists(st.tuples(one, one, one), min_size=1, max_size=32)


def run(body, t, triples, n_in, out=None):
    names = ["a", "b", "c"][:n_in]
    vals = {k: [x[i] for x in triples] for i, k in enumerate(names)}
    return elementwise(body, {k: t for k in names}, {"d": out or t}, vals)["d"], vals


def exact(op, xs):
    f = [Fraction(x) for x in xs]
    return {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
            "div": lambda: f[0] / f[1], "fma": lambda: f[0] * f[1] + f[2]}[op]()


def numpy_value(op, xs, t):
    """numpy's round-to-nearest result (special values: NaN and infinities)."""
    a, b = xs[0], xs[1]
    with np.errstate(all="ignore"):
        if op == "fma":
            wide = np.float64(a) * np.float64(b) + np.float64(xs[2])
            return NPT[t](wide)
        return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](a, b)


def same(got, want) -> bool:
    return (math.isnan(got) and math.isnan(want)) or got == want


ARITH = [("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("fma", 3)]


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@pytest.mark.parametrize("op,n", ARITH, ids=[a for a, _ in ARITH])
@SETTINGS
@given(data=st.data())
def test_arithmetic_rounding(op, n, mode, t, data):
    triples = data.draw(floats(t))
    got, vals = run(f"  {op}.{mode}.{t} %d, %a, %b{', %c' if n == 3 else ''};", t, triples, n)
    dt = NPT[t]
    for i, g in enumerate(got):
        xs = [dt(vals[k][i]) for k in "abc"[:n]]
        if not all(np.isfinite(xs)) or (op == "div" and xs[1] == 0):
            ref = numpy_value(op, xs, t)
            if mode == "rn" or not np.isfinite(ref):
                assert np.isnan(g) == np.isnan(ref), (xs, g, ref)
            continue
        x = exact(op, [float(v) for v in xs])
        want = exact_round(x, t, mode)
        assert same(float(g), want), (op, mode, [float(v) for v in xs], float(g), want)


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@SETTINGS
@given(data=st.data())
def test_sqrt_rounding(t, mode, data):
    triples = data.draw(floats(t))
    got, vals = run(f"  sqrt.{mode}.{t} %d, %a;", t, triples, 1)
    for g, x in zip(got, vals["a"]):
        x = NPT[t](x)
        if not np.isfinite(x) or x <= 0:
            continue
        # the float r is right iff the exact root lies on the right side of its neighbours
        r = Fraction(float(g))
        want_lo = exact_round_sqrt(Fraction(float(x)), t, mode)
        assert float(g) == want_lo, (float(x), float(g), want_lo, float(r))


def exact_round_sqrt(x: Fraction, t: str, mode: str) -> float:
    seed = math.sqrt(float(x))
    dt = NPT[t]
    cands = sorted({float(np.nextafter(dt(seed), dt(d))) for d in (-np.inf, np.inf)} | {float(dt(seed))})
    below = [c for c in cands if Fraction(c) ** 2 <= x]
    above = [c for c in cands if Fraction(c) ** 2 >= x]
    lo, hi = max(below), min(above)
    if lo == hi:
        return lo
    if mode in ("rz", "rm"):
        return lo
    if mode == "rp":
        return hi
    mid = (Fraction(lo) + Fraction(hi)) / 2
    return lo if mid ** 2 > x else hi  # an exact tie is impossible for square roots


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("op,n", [("add", 2), ("sub", 2), ("mul", 2), ("fma", 3)])
@SETTINGS
@given(bits=st.lists(st.tuples(*[st.integers(0, 0xFFFF)] * 3), min_size=1, max_size=32))
def test_half_arithmetic(t, op, n, bits):
    def dec(b):
        if t == "f16":
            return float(np.array(b, np.uint16).view(np.float16))
        return float(np.array(b << 16, np.uint32).view(np.float32))
    got = elementwise(f"  {op}.rn.{t} %d, %a, %b{', %c' if n == 3 else ''};",
                      {k: t for k in "abc"[:n]}, {"d": t},
                      {k: [x[i] for x in bits] for i, k in enumerate("abc"[:n])})["d"]
    for g, trip in zip(got, bits):
        xs = [dec(b) for b in trip[:n]]
        if not all(math.isfinite(v) for v in xs):
            continue
        want = exact_round(exact(op, xs), t, "rn")
        assert same(dec(int(g)), want), (op, xs, dec(int(g)), want)


def test_packed_half_pairs():
    a = np.array([1.5, -2.25], np.float16).view(np.uint32)
    b = np.array([0.25, 4.0], np.float16).view(np.uint32)
    got = elementwise("  add.rn.f16x2 %d, %a, %b;", {"a": "f16x2", "b": "f16x2"},
                      {"d": "f16x2"}, {"a": a, "b": b})["d"]
    assert list(got.view(np.float16)) == [1.75, 1.75]


@pytest.mark.parametrize("fn,ref,tol", [
    ("ex2", np.exp2, 2.0 ** -22), ("lg2", np.log2, 2.0 ** -22), ("rsqrt", lambda x: 1 / np.sqrt(x), 2.0 ** -22),
    ("sin", np.sin, 2.0 ** -20.5), ("cos", np.cos, 2.0 ** -20.5), ("tanh", np.tanh, 2.0 ** -10.987),
])
def test_approx_functions_within_documented_error(fn, ref, tol):
    x = np.linspace(0.01 if fn in ("lg2", "rsqrt") else -20, 100, 997).astype(np.float32)
    got = elementwise(f"  {fn}.approx.f32 %d, %a;", {"a": "f32"}, {"d": "f32"}, {"a": x})["d"]
    want = ref(x.astype(np.float64))
    err = np.abs(got - want) / (1.0 if fn in ("sin", "cos", "lg2", "tanh") else np.abs(want))
    assert err.max() <= tol


def test_approx_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0], np.float32)
    lg = elementwise("  lg2.approx.f32 %d, %a;", {"a": "f32"}, {"d": "f32"}, {"a": x})["d"]
    assert list(lg[:3]) == [-np.inf, -np.inf, np.inf] and np.isnan(lg[3:]).all()
    ex = elementwise("  ex2.approx.ftz.f32 %d, %a;", {"a": "f32"}, {"d": "f32"},
                     {"a": np.array([-np.inf, 1e-40, 128.0], np.float32)})["d"]
    assert list(ex) == [0.0, 1.0, np.inf]
    nan_bits = elementwise("  sqrt.rn.f32 %d, %a;", {"a": "f32"}, {"d": "b32"},
                           {"a": np.array([-1.0], np.float32)})["d"]
    assert nan_bits[0] == 0x7FFFFFFF  # the canonical NaN


def test_ftz_and_sat():
    tiny = np.float32(1e-40)
    got = elementwise("  add.ftz.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": [tiny, 1.0], "b": [tiny, 0.5]})["d"]
    assert list(got) == [0.0, 1.5]
    got = elementwise("  add.sat.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": [0.75, -3.0, np.nan], "b": [0.5, 1.0, 1.0]})["d"]
    assert list(got) == [1.0, 0.0, 0.0]


NAN = float("nan")


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_min_max_nan_and_zero_rules(t):
    a = [1.0, NAN, NAN, -0.0, 0.0, -5.0, 3.0]
    b = [2.0, 2.0, NAN, 0.0, -0.0, 4.0, NAN]
    lo = elementwise(f"  min.{t} %d, %a, %b;", {"a": t, "b": t}, {"d": t}, {"a": a, "b": b})["d"]
    hi = elementwise(f"  max.{t} %d, %a, %b;", {"a": t, "b": t}, {"d": t}, {"a": a, "b": b})["d"]
    assert [float(x) for x in lo[[0, 1, 5, 6]]] == [1.0, 2.0, -5.0, 3.0] and np.isnan(lo[2])
    assert [float(x) for x in hi[[0, 1, 5, 6]]] == [2.0, 2.0, 4.0, 3.0] and np.isnan(hi[2])
    assert np.signbit(lo[3]) and np.signbit(lo[4]) and not np.signbit(hi[3]) and not np.signbit(hi[4])
    nan_mode = elementwise(f"  min.NaN.{t} %d, %a, %b;", {"a": t, "b": t}, {"d": t},
                           {"a": a, "b": b})["d"]
    assert np.isnan(nan_mode[[1, 2, 6]]).all() and nan_mode[0] == 1.0
    xs = elementwise(f"  max.xorsign.abs.{t} %d, %a, %b;", {"a": t, "b": t}, {"d": t},
                     {"a": [-5.0, 3.0], "b": [4.0, -2.0]})["d"]
    assert list(xs) == [-5.0, -3.0]


FLOAT_CMP = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
             "num", "nan"]


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_float_comparisons(t):
    pairs = [(1.0, 2.0), (2.0, 1.0), (1.0, 1.0), (NAN, 1.0), (1.0, NAN), (NAN, NAN),
             (-0.0, 0.0), (-np.inf, np.inf)]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ops = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
           "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
    for op in FLOAT_CMP:
        got = elementwise(f"  setp.{op}.{t} %p, %a, %b;", {"a": t, "b": t}, {"p": "pred"},
                          {"a": a, "b": b})["p"]
        for g, x, y in zip(got, a, b):
            nan = math.isnan(x) or math.isnan(y)
            if op == "num":
                want = not nan
            elif op == "nan":
                want = nan
            elif op.endswith("u"):
                want = nan or ops[op[:-1]](x, y)
            else:
                want = not nan and ops[op](x, y)
            assert g == want, (op, x, y)


def test_set_selp_slct_testp_copysign():
    got = elementwise("  set.lt.f32.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": [1.0, 3.0], "b": [2.0, 2.0]})["d"]
    assert list(got) == [1.0, 0.0]
    got = elementwise("  set.lt.u32.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "u32"},
                      {"a": [1.0, 3.0], "b": [2.0, 2.0]})["d"]
    assert list(got) == [0xFFFFFFFF, 0]
    got = elementwise("  selp.f32 %d, %a, %b, %p;", {"a": "f32", "b": "f32", "p": "pred"},
                      {"d": "f32"}, {"a": [1.0, 2.0], "b": [5.0, 6.0], "p": [True, False]})["d"]
    assert list(got) == [1.0, 6.0]
    got = elementwise("  slct.s32.f32 %d, %a, %b, %c;", {"a": "s32", "b": "s32", "c": "f32"},
                      {"d": "s32"}, {"a": [1, 1, 1], "b": [2, 2, 2], "c": [-0.0, -1.0, NAN]})["d"]
    assert list(got) == [1, 2, 2]
    x = [1.0, 1e-40, np.inf, NAN, 0.0]
    for test, want in (("finite", [1, 1, 0, 0, 1]), ("infinite", [0, 0, 1, 0, 0]),
                       ("number", [1, 1, 1, 0, 1]), ("notanumber", [0, 0, 0, 1, 0]),
                       ("normal", [1, 0, 0, 0, 0]), ("subnormal", [0, 1, 0, 0, 0])):
        got = elementwise(f"  testp.{test}.f32 %p, %a;", {"a": "f32"}, {"p": "pred"}, {"a": x})["p"]
        assert list(got) == [bool(w) for w in want], test
    got = elementwise("  copysign.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": [-1.0, 1.0], "b": [2.0, -3.0]})["d"]
    assert list(got) == [-2.0, 3.0]
    got = elementwise("  abs.f32 %d, %a;\n  neg.f32 %d, %d;", {"a": "f32"}, {"d": "f32"},
                      {"a": [-1.5, 2.0]})["d"]
    assert list(got) == [-1.5, -2.0]


def test_half_forms_of_compare_select_and_functions():
    h = lambda *v: np.array(v, np.float16).view(np.uint16)
    got = elementwise("  setp.lt.f16 %p, %a, %b;\n  min.f16 %d, %a, %b;\n  neg.f16 %e, %a;",
                      {"a": "f16", "b": "f16"}, {"p": "pred", "d": "f16", "e": "f16"},
                      {"a": h(1.0, 3.0, np.nan), "b": h(2.0, -1.0, 5.0)})
    assert list(got["p"]) == [True, False, False]
    assert list(got["d"].view(np.float16)) == [1.0, -1.0, 5.0]
    assert list(got["e"].view(np.float16)[:2]) == [-1.0, -3.0]
    pair = lambda lo, hi: np.array([lo, hi], np.float16).view(np.uint32)
    got = elementwise("  setp.gt.f16x2 %p|%q, %a, %b;\n  max.f16x2 %d, %a, %b;",
                      {"a": "f16x2", "b": "f16x2"}, {"p": "pred", "q": "pred", "d": "f16x2"},
                      {"a": pair(1.0, 5.0), "b": pair(2.0, 4.0)})
    assert (got["p"][0], got["q"][0]) == (False, True)
    assert list(got["d"].view(np.float16)) == [2.0, 5.0]
    got = elementwise("  ex2.approx.f16 %d, %a;", {"a": "f16"}, {"d": "f16"}, {"a": h(3.0, -1.0)})
    assert list(got["d"].view(np.float16)) == [8.0, 0.5]


# ---- rcp, and the .approx / .full forms of div and sqrt ---------------------------------------
# The bounds below are the PTX ISA's (section 9.7.3, "Floating Point Instructions": div, rcp,
# rcp.approx.ftz.f64, sqrt), quoted in each test; the oracles are exact rationals.
F32_MAX = Fraction(float(np.finfo(np.float32).max))
MIN_NORMAL = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022}
EDGE = {"f32": [0.0, -0.0, 1.0, -1.0, 3.0, 0.1, 2.0 ** -126, -(2.0 ** -126), 2.0 ** -149, 1e-40,
                -1e-40, 2.0 ** 126, 2.0 ** 127, -(2.0 ** 127), 3.4e38, 2.0 ** -127 * 1.5],
        "f64": [0.0, -0.0, 1.0, -1.0, 3.0, 0.1, 2.0 ** -1022, 5e-324, -5e-324, 1e-310, 2.0 ** 1022,
                -(2.0 ** 1023), 1.7e308, 2.0 ** -1023 * 1.5]}


def one_float(t: str, finite: bool = False):
    return st.one_of(st.floats(width=32 if t == "f32" else 64, allow_nan=not finite,
                               allow_infinity=not finite), st.sampled_from(EDGE[t]))


def unary(body: str, t: str, xs, out: str | None = None):
    return elementwise(body, {"a": t}, {"d": out or t}, {"a": xs})["d"]


def ulp(x: Fraction, t: str = "f32") -> Fraction:
    """The spacing of `t` at the exact value x (x != 0): 2^(max(e, emin) - p + 1)."""
    emin, p = (-126, 24) if t == "f32" else (-1022, 53)
    e = math.frexp(float(abs(x)))[1] - 1
    if Fraction(2) ** e > abs(x):  # float(x) rounded up to the next power of two
        e -= 1
    return Fraction(2) ** (max(e, emin) - p + 1)


def ulp_error(got: float, x: Fraction, t: str = "f32") -> Fraction:
    return abs(Fraction(got) - x) / ulp(x, t)


def rcp_special(x: float):
    """1/x where IEEE fixes it regardless of rounding (None for finite non-zero x)."""
    if math.isnan(x):
        return math.nan
    if x == 0:
        return math.copysign(math.inf, x)
    if math.isinf(x):
        return math.copysign(0.0, x)
    return None


def same_signed(got: float, want: float) -> bool:
    return same(got, want) and (math.isnan(want) or math.copysign(1, got) == math.copysign(1, want))


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@SETTINGS
@given(data=st.data())
def test_rcp_rounding(t, mode, data):
    """rcp.rnd.{f32,f64}: "IEEE 754 compliant rounding": 1/x exactly, rounded once in `mode`
    (overflow from subnormal x included: inf or the largest finite value, as the mode says)."""
    vals = data.draw(st.lists(one_float(t), min_size=1, max_size=32))
    got = unary(f"  rcp.{mode}.{t} %d, %a;", t, vals)
    for g, x in zip(got, vals):
        x = float(NPT[t](x))
        want = rcp_special(x)
        if want is None:
            want = exact_round(1 / Fraction(x), t, mode)
        assert same_signed(float(g), want), (mode, t, x, float(g), want)


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@SETTINGS
@given(xs=st.lists(one_float("f32"), min_size=1, max_size=32))
def test_rcp_ftz_rounding(mode, xs):
    """rcp.rnd.ftz.f32 "flushes subnormal inputs and results to sign-preserving zero": a
    subnormal x is +-0 (so the result is +-inf), a subnormal result is +-0."""
    got = unary(f"  rcp.{mode}.ftz.f32 %d, %a;", "f32", xs)
    for g, x in zip(got, xs):
        x = float(np.float32(x))
        if x != 0 and abs(x) < MIN_NORMAL["f32"]:
            x = math.copysign(0.0, x)
        want = rcp_special(x)
        if want is None:
            exact_q = 1 / Fraction(x)
            want = exact_round(exact_q, "f32", mode)
            if abs(exact_q) < MIN_NORMAL["f32"] <= abs(want):
                continue  # rounds up to the smallest normal: whether it flushes is unspecified
            if abs(want) < MIN_NORMAL["f32"]:
                want = math.copysign(0.0, want)
        assert same_signed(float(g), want), (mode, x, float(g), want)


def test_rcp_special_values_every_form():
    """The ISA's table for rcp.approx.f32 (-Inf -> -0.0, -0.0 -> -Inf, +0.0 -> +Inf,
    +Inf -> +0.0, NaN -> NaN), which IEEE gives the rounded forms too."""
    x = [-np.inf, -0.0, 0.0, np.inf, np.nan]
    want = [-0.0, -np.inf, np.inf, 0.0, np.nan]
    forms = [f"rcp.{m}{z}.f32" for m in ("approx", "rn", "rz", "rm", "rp") for z in ("", ".ftz")]
    forms += [f"rcp.{m}.f64" for m in ("rn", "rz", "rm", "rp")] + ["rcp.approx.ftz.f64"]
    for form in forms:
        t = form[-3:]
        got = unary(f"  {form} %d, %a;", t, x)
        assert all(same_signed(float(g), w) for g, w in zip(got, want)), (form, list(got))


@pytest.mark.parametrize("ftz", ["", ".ftz"])
@SETTINGS
@given(xs=st.lists(one_float("f32", finite=True), min_size=1, max_size=32))
def test_rcp_approx_f32_within_one_ulp(ftz, xs):
    """rcp.approx.f32: "The maximum ulp error is 1 across the full range of inputs". With
    .ftz a subnormal x gives +-inf and a result below 2^-126 may only be +-0 or within 1 ulp
    of 1/x. Results beyond the largest float: +-inf or +-max."""
    got = unary(f"  rcp.approx{ftz}.f32 %d, %a;", "f32", xs)
    for g, x in zip(got, xs):
        x, g = float(np.float32(x)), float(g)
        if ftz and abs(x) < MIN_NORMAL["f32"]:
            x = math.copysign(0.0, x)
        if x == 0:
            assert g == math.copysign(math.inf, x), (x, g)
            continue
        q = 1 / Fraction(x)
        if abs(q) > F32_MAX:
            assert math.copysign(1, g) == math.copysign(1, x) and abs(g) >= F32_MAX, (x, g)
        elif ftz and abs(q) < MIN_NORMAL["f32"] and g == 0:
            assert math.copysign(1, g) == math.copysign(1, x), (x, g)
        else:
            assert math.isfinite(g) and ulp_error(g, q) <= 1, (x, g, float(q))


def test_rcp_subnormals_without_and_with_ftz():
    """Subnormal inputs and results are kept without .ftz and flushed with it."""
    x = np.array([2.0 ** 127, -(2.0 ** 127), 2.0 ** -149, 1.5 * 2.0 ** -129], np.float32)
    plain = unary("  rcp.rn.f32 %d, %a;", "f32", x)
    assert list(plain[:2]) == [2.0 ** -127, -(2.0 ** -127)] and np.isinf(plain[2:]).all()
    flushed = unary("  rcp.rn.ftz.f32 %d, %a;", "f32", x)
    assert [float(v) for v in flushed] == [0.0, -0.0, math.inf, math.inf]
    assert np.signbit(flushed[1]) and not np.signbit(flushed[0])
    d = np.array([2.0 ** 1023, 5e-324, -(2.0 ** -1074) * 3], np.float64)
    got = unary("  rcp.rn.f64 %d, %a;", "f64", d)
    assert list(got) == [2.0 ** -1023, math.inf, -math.inf]  # f64: no .ftz, subnormals kept
    assert list(unary("  rcp.rz.f64 %d, %a;", "f64", d[1:])) == [1.7976931348623157e308,
                                                                 -1.7976931348623157e308]


# rcp.approx.ftz.f64 (ISA 9.7.3.14): tmp = a[63:32] (1.11.20 format); d[63:32] = 1.0 / tmp;
# d[31:0] = 0. The ISA gives no numeric bound ("a fast, gross approximation"); truncating a
# to 20 mantissa bits and the result to 20 bits each cost < 2^-20 relative, so 2^-17 is a
# deliberately loose bound for the value.
RCP64_BOUND = Fraction(1, 2 ** 17)


@SETTINGS
@given(xs=st.lists(st.floats(min_value=2.0 ** -1000, max_value=2.0 ** 1000), min_size=1,
                   max_size=32), signs=st.lists(st.booleans(), min_size=32, max_size=32))
def test_rcp_approx_ftz_f64_within_a_loose_bound(xs, signs):
    xs = [-x if s else x for x, s in zip(xs, signs)]
    got = unary("  rcp.approx.ftz.f64 %d, %a;", "f64", xs)
    for g, x in zip(got, xs):
        q = 1 / Fraction(x)
        assert math.isfinite(g) and abs(Fraction(float(g)) - q) <= RCP64_BOUND * abs(q), (x, g)


def test_rcp_approx_ftz_f64_special_values():
    """The ISA's table: -Inf -> -0.0, -subnormal -> -Inf, -0.0 -> -Inf, +0.0 -> +Inf,
    +subnormal -> +Inf, +Inf -> +0.0, NaN -> NaN; subnormal results flush to +-0."""
    x = [-np.inf, -1e-310, -0.0, 0.0, 5e-324, np.inf, np.nan, 2.0 ** 1023, -(2.0 ** 1023)]
    want = [-0.0, -np.inf, -np.inf, np.inf, np.inf, 0.0, np.nan, 0.0, -0.0]
    got = unary("  rcp.approx.ftz.f64 %d, %a;", "f64", x)
    assert all(same_signed(float(g), w) for g, w in zip(got, want)), list(got)


def test_rcp_approx_ftz_f64_low_word_is_zero_and_ignored():
    x = np.array([3.0, 0.1, -7.25, 1.0 + 2.0 ** -40, 123456.789], np.float64)
    bits = unary("  rcp.approx.ftz.f64 %d, %a;", "f64", x, out="b64")
    assert all(int(b) & 0xFFFFFFFF == 0 for b in bits), [hex(int(b)) for b in bits]
    upper = (x.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    assert list(unary("  rcp.approx.ftz.f64 %d, %a;", "f64", upper, out="b64")) == list(bits)


def test_rcp_approx_ftz_f64_canonical_nan():
    bits = unary("  rcp.approx.ftz.f64 %d, %a;", "f64", [np.nan, -np.nan], out="b64")
    assert [hex(int(b)) for b in bits] == ["0x7fffffff00000000"] * 2


def f32_bits():
    """Any float32, by its bit pattern (every exponent equally likely)."""
    return st.integers(0, 0xFFFFFFFF).map(lambda b: float(np.array(b, np.uint32).view(np.float32)))


def finite_f32():
    """Finite float32 values (as the Python floats they are exactly)."""
    edge = st.sampled_from(EDGE["f32"]).map(lambda v: float(np.float32(v)))
    return st.one_of(f32_bits().filter(math.isfinite), edge)


@SETTINGS
@given(pairs=st.lists(st.tuples(finite_f32(), finite_f32()), min_size=1, max_size=32))
def test_div_approx_f32_within_two_ulps(pairs):
    """div.approx.f32: "For |b| in [2^-126, 2^126], the maximum ulp error is 2" (a finite;
    quotients beyond the largest float may be +-inf or +-max)."""
    pairs = [(a, b) for a, b in pairs if MIN_NORMAL["f32"] <= abs(b) <= 2.0 ** 126] or [(1.0, 3.0)]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    got = elementwise("  div.approx.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": a, "b": b})["d"]
    for g, x, y in zip(got, a, b):
        q, g = Fraction(x) / Fraction(y), float(g)
        if abs(q) > F32_MAX:
            assert abs(g) >= F32_MAX and (g > 0) == (q > 0), (x, y, g)
        elif q == 0:
            assert g == 0, (x, y, g)
        else:
            assert math.isfinite(g) and ulp_error(g, q) <= 2, (x, y, g, float(q))


def test_div_approx_f32_large_divisors_give_signed_zero():
    """div.approx.f32: "For 2^126 < |b| < 2^128 ... otherwise it returns a sign-preserving
    zero" (a finite)."""
    a = [1.0, -3.0, 3.0e38, -1e-40, 0.0]
    b = [2.0 ** 127, 2.0 ** 126 * 1.5, -(2.0 ** 127) * 1.9, 2.0 ** 127, -(2.0 ** 127)]
    got = elementwise("  div.approx.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": a, "b": b})["d"]
    assert list(got) == [0.0] * 5 and list(np.signbit(got)) == [False, True, True, True, True]


def test_div_approx_f32_infinity_over_large_divisor_is_nan():
    got = elementwise("  div.approx.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": [np.inf, -np.inf], "b": [2.0 ** 127, -(2.0 ** 126) * 1.5]})["d"]
    assert np.isnan(got).all(), list(got)


def test_div_approx_f32_divisor_two_to_the_126_is_in_range():
    got = elementwise("  div.approx.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "f32"},
                      {"a": [1.0, -6.0], "b": [2.0 ** 126, 2.0 ** 126]})["d"]
    for g, want in zip(got, [Fraction(1, 2 ** 126), Fraction(-6, 2 ** 126)]):
        assert ulp_error(float(g), want) <= 2, (float(g), float(want))


@pytest.mark.parametrize("ftz", ["", ".ftz"])
@SETTINGS
@given(pairs=st.lists(st.tuples(finite_f32(), finite_f32()), min_size=1, max_size=32))
def test_div_full_f32_within_two_ulps(ftz, pairs):
    """div.full.f32: "The maximum ulp error is 2 across the full range of inputs". With .ftz
    subnormal inputs are +-0 and subnormal results may only be +-0 (or within 2 ulp)."""
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    got = elementwise(f"  div.full{ftz}.f32 %d, %a, %b;", {"a": "f32", "b": "f32"},
                      {"d": "f32"}, {"a": a, "b": b})["d"]
    for g, x, y in zip(got, a, b):
        g = float(g)
        if ftz:
            x, y = (math.copysign(0.0, v) if abs(v) < MIN_NORMAL["f32"] else v for v in (x, y))
        if y == 0:
            inf = math.copysign(math.inf, x) * math.copysign(1, y)
            assert math.isnan(g) if x == 0 else g == inf, (x, y, g)
            continue
        q = Fraction(x) / Fraction(y)
        if abs(q) > F32_MAX:
            assert abs(g) >= F32_MAX and (g > 0) == (q > 0), (x, y, g)
        elif q == 0 or (ftz and abs(q) < MIN_NORMAL["f32"] and g == 0):
            assert g == 0, (x, y, g)
        else:
            assert math.isfinite(g) and ulp_error(g, q) <= 2, (x, y, g, float(q))


@pytest.mark.parametrize("ftz", ["", ".ftz"])
@SETTINGS
@given(xs=st.lists(f32_bits().filter(lambda v: math.isfinite(v) and v > 0),
                   min_size=1, max_size=32))
def test_sqrt_approx_f32_relative_error(ftz, xs):
    """sqrt.approx.f32: "The maximum relative error over the entire positive finite
    floating-point range is 2^-23" (checked exactly: (g/(1+-e))^2 brackets x)."""
    got = unary(f"  sqrt.approx{ftz}.f32 %d, %a;", "f32", xs)
    e = Fraction(1, 2 ** 23)
    for g, x in zip(got, xs):
        g = Fraction(float(g))
        if ftz and x < MIN_NORMAL["f32"]:
            assert g == 0, (x, float(g))
            continue
        # |g - r| <= e r with r = sqrt(x)  <=>  g/(1+e) <= r <= g/(1-e)
        assert (g / (1 + e)) ** 2 <= Fraction(x) <= (g / (1 - e)) ** 2, (x, float(g))


def test_sqrt_approx_special_values():
    """The ISA's table: -Inf -> NaN, -normal -> NaN, -0.0 -> -0.0, +0.0 -> +0.0,
    +Inf -> +Inf, NaN -> NaN; .ftz flushes a subnormal input to a signed zero first."""
    x = [-np.inf, -2.5, -0.0, 0.0, np.inf, np.nan]
    want = [np.nan, np.nan, -0.0, 0.0, np.inf, np.nan]
    for ftz in ("", ".ftz"):
        got = unary(f"  sqrt.approx{ftz}.f32 %d, %a;", "f32", x)
        assert all(same_signed(float(g), w) for g, w in zip(got, want)), (ftz, list(got))
    got = unary("  sqrt.approx.ftz.f32 %d, %a;", "f32", [1e-40, -1e-40])
    assert same_signed(float(got[0]), 0.0) and same_signed(float(got[1]), -0.0)
    got = unary("  sqrt.approx.f32 %d, %a;", "f32", [2.0 ** -148])
    assert got[0] == 2.0 ** -74  # subnormal input kept without .ftz
