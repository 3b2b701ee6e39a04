"""`cvt` with saturation and rounding modes, against Python integers and the exact
rational oracle."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import elementwise
from .oracle import exact_round

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INT_RANGES = {"s32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "s64": (-2**63, 2**63 - 1),
              "u64": (0, 2**64 - 1), "s16": (-2**15, 2**15 - 1), "u8": (0, 255)}
ROUND = {"rni": lambda x: round(x), "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}


@pytest.mark.parametrize("src", ["f32", "f64"])
@pytest.mark.parametrize("dst", list(INT_RANGES))
@SETTINGS
@given(xs=st.lists(st.one_of(st.floats(width=32), st.sampled_from(
    [2.5, -2.5, 0.5, -0.5, 3e9, -3e9, 1e19, 2.0 ** 63, -2.0 ** 63, 255.5])), min_size=1, max_size=32))
def test_float_to_int_rounds_and_saturates(src, dst, xs):
    lo, hi = INT_RANGES[dst]
    for rnd, fn in ROUND.items():
        got = elementwise(f"  cvt.{rnd}.{dst}.{src} %d, %a;", {"a": src}, {"d": dst}, {"a": xs})["d"]
        for g, x in zip(got, xs):
            x = float(np.float32(x)) if src == "f32" else x
            want = 0 if math.isnan(x) else (hi if x == math.inf else lo if x == -math.inf
                                             else min(max(fn(x), lo), hi))
            assert int(g) == want, (rnd, x, int(g), want)


@pytest.mark.parametrize("src", ["s32", "u32", "s64", "u64"])
@pytest.mark.parametrize("dst", ["f16", "f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@SETTINGS
@given(data=st.data())
def test_int_to_float(src, dst, mode, data):
    lo, hi = INT_RANGES[src]
    xs = data.draw(st.lists(st.one_of(st.integers(lo, hi), st.sampled_from(
        [lo, hi, 0, 1, 2**24 + 1, 2**53 + 1, 2**62 + 2**38 + 1] if hi > 2**32 else [lo, hi, 0, 2**24 + 1])),
        min_size=1, max_size=32))
    xs = [min(max(x, lo), hi) for x in xs]
    got = elementwise(f"  cvt.{mode}.{dst}.{src} %d, %a;", {"a": src}, {"d": dst}, {"a": xs})["d"]
    if dst == "f16":
        got = got.view(np.float16)
    for g, x in zip(got, xs):
        assert float(g) == exact_round(Fraction(x), dst, mode), (x, float(g))


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@SETTINGS
@given(xs=st.lists(st.floats(allow_nan=False), min_size=1, max_size=32))
def test_narrowing_float(mode, xs):
    got = elementwise(f"  cvt.{mode}.f32.f64 %d, %a;", {"a": "f64"}, {"d": "f32"}, {"a": xs})["d"]
    for g, x in zip(got, xs):
        want = x if math.isinf(x) else exact_round(Fraction(x), "f32", mode)
        assert float(g) == want, (x, float(g), want)
    for t in ("f16", "bf16"):
        small = [x for x in xs if math.isfinite(x) and abs(x) < 1e30] or [1.0]
        f32 = [float(np.float32(x)) for x in small]
        got = elementwise(f"  cvt.{mode}.{t}.f32 %d, %a;", {"a": "f32"}, {"d": t}, {"a": f32})["d"]
        dec = (got.view(np.float16).astype(np.float64) if t == "f16"
               else (got.astype(np.uint32) << 16).view(np.float32).astype(np.float64))
        for g, x in zip(dec, f32):
            assert float(g) == exact_round(Fraction(x), t, mode), (t, mode, x, float(g))


def test_float_to_float_forms():
    x = np.array([2.5, -2.5, 1.7, -0.3, 1e-40, np.nan], np.float32)
    got = elementwise("  cvt.rni.f32.f32 %d, %a;", {"a": "f32"}, {"d": "f32"}, {"a": x})["d"]
    assert list(got[:5]) == [2.0, -2.0, 2.0, -0.0, 0.0] and np.isnan(got[5])
    got = elementwise("  cvt.sat.f32.f32 %d, %a;", {"a": "f32"}, {"d": "f32"}, {"a": x})["d"]
    assert list(got) == [1.0, 0.0, 1.0, 0.0, np.float32(1e-40), 0.0]
    got = elementwise("  cvt.ftz.f32.f32 %d, %a;", {"a": "f32"}, {"d": "b32"}, {"a": x[4:5]})["d"]
    assert got[0] == 0
    got = elementwise("  cvt.f64.f32 %d, %a;", {"a": "f32"}, {"d": "f64"}, {"a": x[:4]})["d"]
    assert list(got) == [float(v) for v in x[:4]]
    h = elementwise("  cvt.f32.f16 %d, %a;", {"a": "f16"}, {"d": "f32"},
                    {"a": np.array([1.5, -65504.0], np.float16).view(np.uint16)})["d"]
    assert list(h) == [1.5, -65504.0]


def test_packed_and_special_formats():
    got = elementwise("  cvt.rn.f16x2.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "b32"},
                      {"a": [1.0], "b": [-2.0]})["d"]
    assert list(got.view(np.float16)) == [-2.0, 1.0]  # a goes to the upper half
    got = elementwise("  cvt.rn.bf16x2.f32 %d, %a, %b;", {"a": "f32", "b": "f32"}, {"d": "b32"},
                      {"a": [3.0], "b": [0.5]})["d"]
    assert int(got[0]) == (0x4040 << 16) | 0x3F00
    got = elementwise("  cvt.rna.tf32.f32 %d, %a;", {"a": "f32"}, {"d": "b32"},
                      {"a": np.array([1.0 + 2.0 ** -11], np.float32)})["d"]
    assert got[0] == np.array(1.0 + 2.0 ** -10, np.float32).view(np.uint32)  # tie away
    got = elementwise("  cvt.rn.satfinite.e4m3x2.f32 %d, %a, %b;", {"a": "f32", "b": "f32"},
                      {"d": "b16"}, {"a": [1000.0], "b": [1.0]})["d"]
    assert int(got[0]) == (0x7E << 8) | 0x38  # 448 (saturated) above, 1.0 below
    back = elementwise("  cvt.rn.f16x2.e4m3x2 %d, %a;", {"a": "b16"}, {"d": "b32"},
                       {"a": got})["d"]
    assert list(back.view(np.float16)) == [1.0, 448.0]


def test_f16_overflow_and_saturation():
    got = elementwise("  cvt.rn.f16.f32 %d, %a;\n  cvt.rz.f16.f32 %e, %a;", {"a": "f32"},
                      {"d": "f16", "e": "f16"}, {"a": [70000.0, -70000.0, 65519.0, 65520.0]})
    assert list(got["d"].view(np.float16)) == [np.inf, -np.inf, 65504.0, np.inf]
    assert list(got["e"].view(np.float16)) == [65504.0, -65504.0, 65504.0, 65504.0]
