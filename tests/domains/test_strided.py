"""Strided intervals: normal form, lattice laws, views, widening, comparisons.

Transfer functions are in test_strided_ops.py. Sets are drawn at 8 bits (see strategies),
so membership over a window of integers decides set equality and inclusion.
"""

from __future__ import annotations

import operator

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ptxlint.domains import StridedInterval as SI
from ptxlint.domains import Tri
from ptxlint.domains.strided import WIDTH_LIMITS

from .strategies import RNG, WINDOW, holds_bits, intervals, members, same_on_window, view

# -------------------------------------------------------------------------- normal form


@given(a=intervals(), b=intervals())
def test_equality_means_same_set(a, b):
    assert (a == b) == same_on_window(a, b)


@given(a=intervals(bottom=False), d=st.integers(0, 500), e=st.integers(0, 500))
def test_unsnapped_bounds_normalise(a, d, e):
    assume(a.stride > 0)
    lo = None if a.lo is None else a.lo - d % a.stride
    hi = None if a.hi is None else a.hi + e % a.stride
    assert SI(lo, hi, a.stride, a.anchor() + d * a.stride) == a


@given(a=intervals(infinite=False))
def test_hull_of_gamma_is_identity(a):
    assert len(a.gamma()) == a.size()
    assert SI.hull(a.gamma()) == a


def test_normal_form_examples():
    assert SI.range(0, 10, 4) == SI(0, 8, 4, 0)  # hi snapped down to an element
    assert SI.range(3, 3, 7) == SI.const(3)  # singletons have stride 0
    assert SI.range(5, 4) == SI.bottom()
    assert SI.range(None, 7, 4).residue == 3  # anchored at the finite bound
    assert SI.congruent(5, 4) == SI(None, None, 4, 1)
    assert SI.congruent(5, 1) == SI.top()
    assert str(SI.range(0, 3968, 128)) == "{0..3968 step 128}"
    with pytest.raises(ValueError):
        SI(0, 5, 0)


# -------------------------------------------------------------------------- lattice laws


@given(a=intervals(), b=intervals(), c=intervals())
def test_join_laws(a, b, c):
    j = a.join(b)
    assert j == b.join(a) and a.join(a) == a and j.join(c) == a.join(b.join(c))
    assert a.leq(j) and b.leq(j)
    assert not (a.leq(c) and b.leq(c)) or j.leq(c)  # least upper bound
    assert a.leq(b) == (j == b)


@given(a=intervals(), b=intervals(), c=intervals())
def test_meet_laws(a, b, c):
    m = a.meet(b)
    assert m == b.meet(a) and a.meet(a) == a and m.meet(c) == a.meet(b.meet(c))
    assert m.leq(a) and m.leq(b)
    assert not (c.leq(a) and c.leq(b)) or c.leq(m)  # greatest lower bound
    assert all(m.contains(x) == (a.contains(x) and b.contains(x)) for x in WINDOW)


@given(a=intervals(), b=intervals())
def test_leq_is_inclusion(a, b):
    assert a.leq(b) == all(b.contains(x) for x in WINDOW if a.contains(x))


@given(a=intervals(), b=intervals())
def test_join_covers_both(a, b):
    j = a.join(b)
    assert all(j.contains(x) for x in WINDOW if a.contains(x) or b.contains(x))


# -------------------------------------------------------------------------- widening

THRESHOLDS = st.lists(st.integers(-600, 600), max_size=4)
#: keep steps grow the set by 20% up to 1024 elements (<= 38), each side passes each
#: threshold (width limits among them) and infinity once, the stride shrinks to a divisor (<= 11 times at 8 bits)
#: and bottom turns into a value once.
def max_widenings(thresholds) -> int:
    return 38 + 2 * (len(thresholds) + 1) + 11 + 1


@settings(max_examples=300)
@given(chain=st.lists(intervals(), min_size=2, max_size=300), ts=THRESHOLDS)
def test_widening_stabilises(chain, ts):
    x, changes = chain[0], 0
    for y in chain[1:]:
        nxt = x.widen(x.join(y), ts)
        assert x.leq(nxt) and y.leq(nxt)
        changes, x = changes + (nxt != x), nxt
    assert changes <= max_widenings(ts)


@given(a=intervals(), b=intervals(), ts=THRESHOLDS, eager=st.booleans())
def test_widen_is_upper_bound(a, b, ts, eager):
    w = a.widen(b, ts, eager)
    assert a.leq(w) and b.leq(w)


def test_widen_before_widening_starts_meets_thresholds_only():
    """`eager=False` (a loop head's joins before widening): a grown bound moves to its
    threshold, but neither the growth trigger nor a width limit moves it."""
    old, new = SI.range(0, 1000), SI.range(0, 1001)  # < 20% growth
    assert old.widen(new, WIDTH_LIMITS, eager=False) == SI.range(0, 1001)
    assert old.widen(new, (2000, *WIDTH_LIMITS), eager=False) == SI.range(0, 2000)
    # past +-65535 the classic jump still applies
    far = SI.range(0, 70000)
    assert far.widen(SI.range(0, 70001), WIDTH_LIMITS, eager=False) == SI.range(0, 2**31 - 1)


def test_ratchet_terminates_quickly():
    """MLIR's int-range ratchet [0,0] -> [0,1] -> ...: must not take 2^31 steps."""
    x = SI.const(0)
    for steps in range(100):
        body = x.refine("lt", SI.const(2**31 - 1), 32, True)[0].add(SI.const(1), 32, True)
        nxt = x.widen(x.join(body))
        if nxt == x:
            break
        x = nxt
    assert steps < 50 and x.contains(2**31 - 1)


def test_short_loop_stays_exact_with_threshold():
    """for (i = 0; i < 16; i++): the exit bound 16 is the threshold."""
    x = SI.const(0)
    for _ in range(10):
        body = x.refine("lt", SI.const(16), 32, True)[0].add(SI.const(1), 32, True)
        x = x.widen(x.join(body), thresholds=[16])
    assert x == SI.range(0, 16)
    inside = x.refine("lt", SI.const(16), 32, True)
    assert inside == (SI.range(0, 15), SI.const(16))


def test_widen_jumps_only_the_side_that_moved():
    old, new = SI.range(0, 1000), SI.range(0, 1001)  # < 20% growth: trigger
    assert old.widen(new) == SI.range(0, None)
    # with the width limits offered, the next one instead of infinity
    assert old.widen(new, WIDTH_LIMITS) == SI.range(0, 2**31 - 1)
    top32 = SI.range(0, 2**32 - 1)
    assert top32.widen(SI.range(0, 2**32), WIDTH_LIMITS) == SI.range(0, 2**63 - 1)
    assert SI.range(0, 2**64 - 1).widen(SI.range(0, 2**64), WIDTH_LIMITS) == SI.range(0, None)
    assert old.widen(SI.range(0, 1001), (2000, *WIDTH_LIMITS)) == SI.range(0, 2000)
    assert old.widen(SI.range(-1, 1000), thresholds=[-64]) == SI.range(-64, 1000)
    assert SI.range(0, 4, 4).widen(SI.range(0, 8, 4)) == SI.range(0, 8, 4)  # small: kept


@given(a=intervals(), b=intervals())
def test_narrow_between(a, b):
    b = a.meet(b)  # narrowing expects other <= self
    n = a.narrow(b)
    assert b.leq(n) and n.leq(a)


# -------------------------------------------------------------------------- views


@pytest.mark.parametrize("w", [8, 16])
@given(data=st.data())
def test_wrap_is_sound(w, data):
    a, signed = data.draw(intervals(w)), data.draw(st.booleans())
    rnd = data.draw(RNG)
    r = a.wrap(w, signed)
    assert r.fits(w, signed)
    for x in members(a, rnd):
        assert r.contains(view(x, w, signed))
    if a.fits(w, signed):
        assert r == a
    if a.is_finite and not a.is_bottom and (a.hi - a.lo) < (1 << w) and r.size() != a.size():
        # two blocks: no element may be lost, and the gcd of a power of two survives
        assert r.stride == 0 or (1 << w) % r.stride == 0 or a.stride % r.stride == 0


def test_wrap_examples():
    assert SI.range(250, 260).wrap(8, True) == SI.range(-6, 4)
    assert SI.range(250, 260).wrap(8) == SI.range(0, 255)
    assert SI.range(256, 300, 4).wrap(8) == SI.range(0, 44, 4)  # same block: shifted
    assert SI.range(0, 4096, 4).wrap(8) == SI.range(0, 252, 4)  # envelope keeps 4 | 256
    assert SI.range(0, 4096, 12).wrap(8) == SI.range(0, 252, 4)
    assert SI.const(-1).as_unsigned(64) == SI.const(2**64 - 1)
    assert SI.range(2**31 - 1, 2**31).as_signed(32) == SI.hull([-(2**31), 2**31 - 1])


# -------------------------------------------------------------------------- comparisons

CMP = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
       "gt": operator.gt, "ge": operator.ge}


@pytest.mark.parametrize("op", sorted(CMP))
@pytest.mark.parametrize("w", [8, 16])
@given(data=st.data())
def test_cmp_and_refine_sound(op, w, data):
    a, b, signed = data.draw(intervals(w)), data.draw(intervals(w)), data.draw(st.booleans())
    rnd = data.draw(RNG)
    answer = a.cmp(op, b, w, signed)
    if_true, if_false = a.refine(op, b, w, signed)
    assert if_true.fits(w, signed) and if_false.fits(w, signed)
    ys = members(b, rnd, 24)
    for x in members(a, rnd, 24):
        for y in ys:
            vx, vy = view(x, w, signed), view(y, w, signed)
            holds = CMP[op](vx, vy)
            assert answer is not (Tri.FALSE if holds else Tri.TRUE), (x, y)
            assert (if_true if holds else if_false).contains(vx), (x, y)


@pytest.mark.parametrize("w", [8, 16])
@given(data=st.data())
def test_restrict_keeps_every_pattern_whose_reading_is_kept(w, data):
    a, b, signed = data.draw(intervals(w)), data.draw(intervals(w)), data.draw(st.booleans())
    op = data.draw(st.sampled_from(sorted(CMP)))
    rnd = data.draw(RNG)
    readings = a.refine(op, b, w, signed)[data.draw(st.booleans())]
    r = a.restrict(readings, w, signed)
    assert r.leq(a) or not a.fits(w, signed) and not a.fits(w, not signed)
    for x in members(a, rnd):
        if readings.contains(view(x, w, signed)):
            assert holds_bits(r, x, w), (x, readings)


def test_restrict_examples():
    signed_set = SI.range(-4, 4)
    # unsigned readings >= 100 are the patterns of -4..-1: not an empty meet
    assert signed_set.restrict(SI.range(100, 255), 8, False) == SI.range(-4, -1)
    assert signed_set.restrict(SI.range(0, 99), 8, False) == SI.range(0, 4)
    assert SI.range(250, 255).restrict(SI.range(-3, 0), 8, True) == SI.range(253, 255)
    assert SI.top().restrict(SI.range(0, 9), 8, False) == SI.range(0, 9)
    assert SI.range(-300, 300).restrict(SI.range(0, 9), 8, False) == SI.range(-300, 300)


def test_cmp_examples():
    a, b = SI.range(0, 10), SI.range(20, 30)
    assert a.cmp("lt", b, 32) is Tri.TRUE and a.cmp("ge", b, 32) is Tri.FALSE
    assert a.cmp("eq", SI.range(11, 19), 32) is Tri.FALSE
    assert SI.const(-1).cmp("lt", SI.const(0), 32, signed=True) is Tri.TRUE
    assert SI.const(-1).cmp("lt", SI.const(0), 32, signed=False) is Tri.FALSE  # 0xffffffff
    assert SI.const(-1).cmp("hi", SI.const(0), 32, signed=True) is Tri.TRUE  # unsigned alias
    assert SI.range(0, 8, 4).cmp("eq", SI.range(1, 7, 2), 32) is Tri.FALSE  # strides disjoint
    assert SI.range(0, 10).refine("ne", SI.const(0), 32) == (SI.range(1, 10), SI.const(0))
    assert SI.range(0, 10).refine("ge", SI.const(4), 32) == (SI.range(4, 10), SI.range(0, 3))
    with pytest.raises(TypeError):
        bool(Tri.MAYBE)


def test_domains_follow_the_lattice_protocol():
    from ptxlint.domains import Affine, Congruence, Lattice

    for value in (SI.top(), Congruence.top(), Affine.top()):
        assert isinstance(value, Lattice)
        assert value.is_top and type(value).top() == value and type(value).bottom().is_bottom
