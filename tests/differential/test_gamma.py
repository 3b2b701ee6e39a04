"""The membership tests of the soundness suite against brute force: the harness's own
arithmetic, independent of the domains' (a bug in `meet` must not hide in the oracle)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from differential.gamma import cong_contains, lane_form_violations, si_contains
from ptxlint.domains.affine import Affine
from ptxlint.domains.align import Congruence
from ptxlint.domains.strided import StridedInterval as SI

from ..domains.strategies import intervals


def brute(si: SI, v: int, w: int) -> bool:
    """Some element congruent to v modulo 2^w, searched over a window wide enough for
    the finite sets the strategy draws (bounds within +-2^(w+1))."""
    m = 1 << w
    if si.is_bottom:
        return False
    if si.is_finite:
        return any((x - v) % m == 0 for x in si.gamma())
    # along an infinite set the residues modulo 2^w repeat within 2^w steps
    anchor = si.lo if si.lo is not None else si.hi if si.hi is not None else si.residue
    steps = [k * si.stride for k in range(m + 1)]
    xs = ([anchor + d for d in steps] if si.lo is not None else []) + \
        ([anchor - d for d in steps] if si.hi is not None else []) + \
        ([anchor + d for d in steps] + [anchor - d for d in steps]
         if si.lo is None and si.hi is None else [])
    return any(si.contains(x) and (x - v) % m == 0 for x in xs)


@settings(max_examples=400, deadline=None)
@given(si=intervals(w=8), v=st.integers(0, 255))
def test_si_contains_is_membership_modulo_2w(si, v):
    assert si_contains(si, v, 8) == brute(si, v, 8)


def test_si_contains_reads_both_views():
    assert si_contains(SI.const(-1), 0xFFFFFFFF, 32)
    assert si_contains(SI.range(-4, 4), 0xFFFFFFFE, 32)
    assert not si_contains(SI.range(-4, 4), 0xFFFFFFF0, 32)
    assert si_contains(SI.range(1 << 32, (1 << 32) + 8, 4), 4, 32)
    assert not si_contains(SI.range(0, 64, 8), 12, 32)
    assert not si_contains(SI.bottom(), 0, 32)


@given(bits=st.integers(0, 9), residue=st.integers(0, 511), v=st.integers(0, 2**16 - 1))
def test_cong_contains(bits, residue, v):
    c = Congruence(bits, residue)
    assert cong_contains(c, v, 16) == ((v - c.residue) % (1 << c.bits) == 0)


def _lanes(values, tid_x, warps, w=32, **other):
    idx = {"tid.x": np.asarray(tid_x, np.uint64), "tid.y": np.zeros(len(tid_x), np.uint64),
           "tid.z": np.zeros(len(tid_x), np.uint64),
           "laneid": np.asarray(tid_x, np.uint64) % np.uint64(32)}
    idx.update({k: np.asarray(v, np.uint64) for k, v in other.items()})
    return np.asarray(values, np.uint64), idx, np.asarray(warps, np.int64), w


def test_lane_form_one_base_per_warp():
    aff = Affine(SI.range(0, 1024, 128), (("tid.x", SI.const(4)),))
    t = np.arange(64)
    base = np.where(t < 32, 128, 256)
    vals, idx, warps, w = _lanes(base + 4 * t, t, t // 32)
    assert lane_form_violations(aff, vals, idx, warps, w).bad_warps == ()
    vals[33] += 4  # warp 1 no longer has one base
    assert lane_form_violations(aff, vals, idx, warps, w).bad_warps == (1,)
    vals, idx, warps, w = _lanes(2048 + 4 * t, t, t // 32)  # base outside its set
    assert lane_form_violations(aff, vals, idx, warps, w).bad_warps == (0, 1)


def test_lane_form_wraps_and_unknown_coefficients():
    t = np.arange(32)
    neg = Affine(SI.const(0), (("tid.x", SI.const(-4)),))
    vals, idx, warps, w = _lanes((-4 * t) % (1 << 32), t, np.zeros(32))
    assert lane_form_violations(neg, vals, idx, warps, w).bad_warps == ()
    some = Affine(SI.const(0), (("tid.x", SI.range(1, 8)),))  # a uniform, unknown stride
    vals, idx, warps, w = _lanes(3 * t, t, np.zeros(32))
    assert lane_form_violations(some, vals, idx, warps, w).bad_warps == ()
    vals, idx, warps, w = _lanes(9 * t, t, np.zeros(32))
    assert lane_form_violations(some, vals, idx, warps, w).bad_warps == (0,)
    wide = Affine(SI.const(0), (("tid.x", SI.range(1, 1 << 20)),))
    res = lane_form_violations(wide, vals, idx, warps, w)
    assert res.unchecked == 1 and res.bad_warps == ()  # undecided, never passed silently
