"""Floating-point semantics against numpy, `math` and an exact rational oracle
(`oracle.py`): IEEE arithmetic in every rounding mode at f16/bf16/f32/f64, fma, the
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
