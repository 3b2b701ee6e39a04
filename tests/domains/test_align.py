"""Power-of-two congruences: lattice laws and soundness of every operation.

Congruences are periodic with period at most 512, so membership over a window of two
periods on each side of zero decides equality and inclusion.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxlint.domains import Congruence, StridedInterval
from ptxlint.domains.align import MAX_BITS

from .strategies import RNG, intervals, members, u

WINDOW = range(-1024, 1024)
WIDTHS = [8, 16, 32, 64]


def congruences():
    return st.builds(Congruence, st.integers(-1, MAX_BITS), st.integers(0, 1023))


def same_on_window(a, b):
    return all(a.contains(x) == b.contains(x) for x in WINDOW)


def member(c, rnd, w):
    """A representative integer of the class (the register's bits are it modulo 2^w)."""
    return c.residue + rnd.randrange(-(1 << (w + 1)), 1 << (w + 1)) * (1 << c.bits)


@given(a=congruences(), b=congruences())
def test_normal_form(a, b):
    assert (a == b) == same_on_window(a, b)
    assert Congruence(a.bits, a.residue + (1 << max(a.bits, 0)) * 7) == a


@given(a=congruences(), b=congruences(), c=congruences())
def test_lattice_laws(a, b, c):
    j, m = a.join(b), a.meet(b)
    assert j == b.join(a) and a.join(a) == a and j.join(c) == a.join(b.join(c))
    assert m == b.meet(a) and a.meet(a) == a and m.meet(c) == a.meet(b.meet(c))
    assert a.leq(j) and b.leq(j) and m.leq(a) and m.leq(b)
    assert not (a.leq(c) and b.leq(c)) or j.leq(c)
    assert not (c.leq(a) and c.leq(b)) or c.leq(m)
    assert a.leq(b) == (j == b) == all(b.contains(x) for x in WINDOW if a.contains(x))
    assert all(m.contains(x) == (a.contains(x) and b.contains(x)) for x in WINDOW)
    assert a.widen(b) == j and a.narrow(b) == m


@given(chain=st.lists(congruences(), min_size=2, max_size=100))
def test_widening_stabilises(chain):
    x, changes = chain[0], 0
    for y in chain[1:]:
        nxt = x.widen(x.join(y))
        changes, x = changes + (nxt != x), nxt
    assert changes <= MAX_BITS + 2  # bottom -> value, then bits only decrease


OPS = {
    "add": (lambda a, b, w: a.add(b, w), lambda x, y: x + y),
    "sub": (lambda a, b, w: a.sub(b, w), lambda x, y: x - y),
    "mul": (lambda a, b, w: a.mul(b, w), lambda x, y: x * y),
    "and": (lambda a, b, w: a.and_(b, w), lambda x, y: x & y),
    "or": (lambda a, b, w: a.or_(b, w), lambda x, y: x | y),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("w", WIDTHS)
@given(a=congruences(), b=congruences(), rnd=RNG)
def test_binary_sound(w, name, a, b, rnd):
    abstract, concrete = OPS[name]
    r = abstract(a, b, w)
    assert r.bits <= w
    if a.is_bottom or b.is_bottom:
        assert r.is_bottom
        return
    for _ in range(50):
        x, y = member(a.cap(w), rnd, w), member(b.cap(w), rnd, w)
        assert r.contains(u(concrete(u(x, w), u(y, w)), w)), (a, b, x, y, r)


@pytest.mark.parametrize("w", WIDTHS)
@given(a=congruences(), k=st.integers(-(2**64), 2**64), n=st.integers(0, 70),
       rnd=RNG)
def test_unary_sound(w, a, k, n, rnd):
    if a.is_bottom:
        return
    ops = [(a.neg(w), lambda x: -x), (a.mul(k, w), lambda x: x * k),
           (a.and_(k, w), lambda x: x & k), (a.or_(k, w), lambda x: x | k),
           (a.shl(n, w), lambda x: x << min(n, w)), (a.shl(None, w), lambda x: x << min(n, w))]
    for _ in range(30):
        x = u(member(a.cap(w), rnd, w), w)
        for r, f in ops:
            assert r.bits <= w and r.contains(u(f(x), w)), (a, k, n, x, r)


@given(si=intervals(16), rnd=RNG)
def test_of_interval_sound(si, rnd):
    c = Congruence.of_interval(si)
    assert all(c.contains(x) for x in members(si, rnd))
    assert si.meet(c.as_strided()) == si  # the congruence loses nothing of the interval


@given(a=congruences(), j=st.integers(0, 12))
def test_is_multiple_of(a, j):
    n = 1 << j
    if a.is_multiple_of(n):
        assert all(x % n == 0 for x in WINDOW if a.contains(x))
    elif not a.is_bottom and j <= MAX_BITS:
        assert any(x % n for x in WINDOW if a.contains(x)) or a.bits < j


def test_alignment_examples():
    base = Congruence.const(0)  # a cudaMalloc'd pointer: 256-aligned, at least mod 512 here
    tid16 = Congruence.of_interval(StridedInterval.range(0, 1023)).mul(16)
    addr = base.add(tid16, 64)
    assert addr.is_multiple_of(16) and not addr.is_multiple_of(32)
    assert Congruence.top().and_(~15).is_multiple_of(16)  # explicit masking aligns
    assert Congruence(4, 0).add(Congruence.const(4)).residue == 4
    assert Congruence(4, 4).shl(2).is_multiple_of(16)
    assert Congruence.const(3).cap(8).bits == 8
    assert Congruence.bottom().is_multiple_of(512)
    with pytest.raises(ValueError):
        Congruence.top().is_multiple_of(12)
