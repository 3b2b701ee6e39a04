"""`warp_patterns` groups the warps before making their patterns, and `bank_conflict`
is remembered by what it depends on: both answer as the per-warp computation did."""
from __future__ import annotations

from dataclasses import astuple, replace

import pytest

from ptxlint.domains.affine import HARDWARE, Affine
from ptxlint.domains.align import Congruence
from ptxlint.domains.strided import StridedInterval as SI
from ptxlint.domains.value import Value
from ptxlint.threads import warp
from ptxlint.threads.warp import WarpPattern, bank_conflict, warp_count, warp_patterns


def _address(base: SI, **coeffs: int) -> Value:
    terms = tuple((n.replace("_", "."), SI.const(c)) for n, c in coeffs.items())
    return Value(SI.top(), Affine(base, terms), Congruence.top(), None).reduce()


def _per_warp(address: Value, width: int, block, base_align: int):
    """`warp_patterns` as it was: one pattern per warp, merged into the first alike."""
    coeffs = warp._coefficients(address)
    groups: dict[tuple, WarpPattern] = {}
    for w in range(warp_count(block)):
        p = warp._exact(address, width, block, coeffs, w, base_align)
        seen = groups.get(key := (p.offsets, p.alignment))
        groups[key] = p if seen is None else replace(
            seen, warps=seen.warps + (w,), uniform_base=seen.uniform_base.join(p.uniform_base))
    return tuple(groups.values())


def _fields(patterns):
    return [astuple(replace(p, uniform_base=None)) + (repr(p.uniform_base),) for p in patterns]


@pytest.mark.parametrize("block", [(512, 1, 1), (16, 16, 1), (48, 1, 1), (24, 4, 2)])
@pytest.mark.parametrize("coeffs", [dict(tid_x=4), dict(tid_x=8, tid_y=132),
                                    dict(tid_x=-4, laneid=12), dict(tid_y=4, tid_z=1024)])
@pytest.mark.parametrize("base", [SI.const(0), SI.const(36), SI.range(0, 64, 16)])
def test_warp_patterns_are_the_per_warp_patterns_merged(block, coeffs, base):
    address = _address(base, **coeffs)
    for align in (1, 16):
        got = warp_patterns(address, 4, block, HARDWARE, align)
        assert _fields(got) == _fields(_per_warp(address, 4, block, align))


@pytest.mark.parametrize("stride", [4, 8, 12, 128, 132, 0])
@pytest.mark.parametrize("width", [1, 4, 8, 16])
def test_bank_conflict_remembered_is_computed_afresh(stride, width):
    for alignment in (Congruence(7, 36), Congruence(2, 1), Congruence(0, 0), Congruence(3, 4)):
        p = WarpPattern(WarpPattern.strided(stride, width, 24).offsets, width, alignment=alignment)
        for banks, bank_bytes in ((32, 4), (16, 8)):
            fresh = warp._bank_conflict.__wrapped__(p.offsets, alignment, width, banks,
                                                     bank_bytes)
            assert bank_conflict(p, None, banks, bank_bytes) == fresh
