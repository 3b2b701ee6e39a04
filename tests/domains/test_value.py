"""The reduced product `Value`: what `reduce` shares between the value set and the lane
form, and how widening keeps them in step."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.domains import Affine, StridedInterval as SI, ThreadBounds
from ptxlint.domains.align import Congruence
from ptxlint.domains.value import Value

from .strategies import RNG, intervals, member

BLOCK = ThreadBounds.for_block(128)


@settings(max_examples=400)
@given(values=intervals(w=16, bottom=False), base=intervals(w=16, bottom=False),
       coeff=st.sampled_from([1, 2, 4, -1, 128]), rnd=RNG)
def test_reduce_keeps_every_thread(values, base, coeff, rnd):
    """A thread whose value lies in both components (``v = b + c*tid.x``, v in the set,
    b in the base) lies in the reduced value: in its set, and its lane form gives v for
    that thread (with the same base, while the form keeps its coefficient)."""
    aff = Affine(base, (("tid.x", SI.const(coeff)),))
    reduced = Value(values, aff, Congruence.top()).reduce(BLOCK)
    for _ in range(20):
        b, t = member(base, rnd), rnd.randrange(128)
        v = b + coeff * t
        if not values.contains(v):
            continue
        assert not reduced.is_bottom
        assert reduced.si.contains(v), (v, reduced)
        assert reduced.aff.evaluate((t, 0, 0), t % 32).contains(v), (v, t, reduced)
        if reduced.aff.coeffs == aff.coeffs:
            assert reduced.aff.base.contains(b), (b, reduced)


def test_a_bounded_value_bounds_the_lanes_base():
    # i = tid.x + 128*k in a block of 128 threads, known to be below 256: k is 0 or 1
    lanes = Affine(SI.range(0, 384, 128), (("tid.x", SI.const(1)),))
    v = Value(SI.range(0, 255), lanes, Congruence.top()).reduce(BLOCK)
    assert v.aff.base == SI.range(0, 128, 128)


def test_widening_moves_the_base_with_the_values():
    """Once the values jump to infinity the base jumps too, rather than growing by one
    step per visit of the loop."""
    def counter(hi_base: int, hi: int | None) -> Value:
        return Value(SI.range(0, hi, 4), Affine(SI.range(0, hi_base, 4096),
                                                (("tid.x", SI.const(4)),)), Congruence.top())
    old, new = counter(4096, 8188), counter(8192, 12284)
    widened = old.widen(old.join(new))
    assert widened.si.hi is None and widened.aff.base.hi is None
    assert widened.aff.base.lo == 0 and widened.aff.base.stride == 4096


@settings(max_examples=300)
@given(values=intervals(w=16, infinite=False, bottom=False),
       coeff=st.sampled_from([1, 4, 16, 64, -4]))
def test_reduce_keeps_a_modular_form_modular(values, coeff):
    """A form known modulo 2^w only (`Affine.is_modular`: a pointer carried round a loop)
    has no integer base for `reduce` to narrow, even when the value set is bounded: the
    lanes may wrap between two of its values."""
    aff = Affine(SI.top(), (("tid.x", SI.const(coeff)),))
    reduced = Value(values, aff, Congruence.top()).reduce(BLOCK)
    assert reduced.aff.is_modular or reduced.aff.is_uniform
    if not values.is_singleton:
        assert reduced.aff == aff and reduced.si == values


def test_modular_lanes_may_wrap_inside_a_bounded_set():
    # 8-bit lanes holding 16*tid.x mod 256 all lie in {0..255}, yet no integer b gives
    # b + 16*tid.x for tid.x = 0 and 16 (0 and 256 have the same bits): narrowing the
    # base to {0..255} - 16*{0..31} would claim one
    lanes = Affine(SI.top(), (("tid.x", SI.const(16)),))
    v = Value(SI.range(0, 255), lanes, Congruence.top()).reduce(ThreadBounds.for_block(32))
    assert v.aff.is_modular
