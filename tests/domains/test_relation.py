"""Links (`domains/relation.py`): d = k*a + kb*b + off, made only when it cannot wrap.

Soundness, at 8 bits so every case is small: for concrete a, b, off that the link
allows, d = k*a + kb*b + off; whatever sets later narrow d, a or b to (as long as they
still hold the concrete values), `forward` keeps d and `backward` keeps a and b."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ptxlint.domains.relation import Link
from ptxlint.domains.strided import StridedInterval as SI

from .strategies import RNG, intervals, members, view

W = 8
FACTORS = st.sampled_from([-4, -2, -1, 1, 2, 3, 4])


@st.composite
def links(draw):
    """A link built as a transfer function builds one: from the operands' sets."""
    k, xsigned, signed = draw(FACTORS), draw(st.booleans()), draw(st.booleans())
    xs = draw(intervals(W, infinite=False, bottom=False)).wrap(W, xsigned)
    off = draw(intervals(W, infinite=False, bottom=False))
    two = draw(st.booleans())
    if two:
        kb, bsigned = draw(FACTORS), draw(st.booleans())
        bs = draw(intervals(W, infinite=False, bottom=False)).wrap(W, bsigned)
        link = Link.make("x", k, xs, off, W, signed, W, xsigned, "y", kb, bs, bsigned)
    else:
        bs = None
        link = Link.make("x", k, xs, off, W, signed, W, xsigned)
    assume(link is not None)
    return link, xs, bs


def around(draw, value: int, w: int, signed: bool) -> SI:
    """A random set of w-bit readings that holds `value`'s reading (what refinement may
    have narrowed a register to)."""
    r = view(value, w, signed)
    low = draw(st.integers(0, 40))
    high = draw(st.integers(0, 40))
    return SI.range(r - low, r + high).wrap(w, signed)


@settings(max_examples=400)
@given(made=links(), data=st.data())
def test_forward_and_backward_keep_every_execution(made, data):
    link, xs, bs = made
    rnd = data.draw(RNG)
    for x in members(xs, rnd, 8):
        for y in ([0] if bs is None else members(bs, rnd, 6)):
            for o in members(link.off, rnd, 6):
                d = link.k * x + link.kb * y + o
                # the link fits d's view: the integer is the register's reading
                assert view(d, W, link.signed) == d
                dset = around(data.draw, d, W, link.signed)
                xset = around(data.draw, x, W, link.xsigned)
                yset = None if bs is None else around(data.draw, y, W, link.bsigned)
                assert link.forward(xset, yset).contains(d)
                assert link.backward(dset, yset).contains(view(x, W, link.xsigned))
                if bs is not None:
                    assert link.backward_b(dset, xset).contains(view(y, W, link.bsigned))


def test_make_refuses_a_definition_that_may_wrap():
    xs = SI.range(0, 200)
    assert Link.make("x", 1, xs, SI.const(100), W, False, W, False) is None  # 300 > 255
    # the other view of the same bits holds it: the link reads d signed
    link = Link.make("x", -1, xs, SI.const(100), W, False, W, False)  # -100..100
    assert link is not None and link.signed is True


@given(made=links(), data=st.data())
def test_join_covers_both_and_widen_covers_the_join(made, data):
    link = made[0]
    other = data.draw(intervals(W, infinite=False, bottom=False))
    second = replace(link, off=other)
    j = link.join(second)
    assert link.leq(j) and second.leq(j)
    w = link.widen(j)
    assert j.leq(w)
    assert link.join(replace(link, a="z")) is None  # another register: no common link
