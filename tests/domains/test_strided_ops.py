"""Soundness of every StridedInterval transfer function against bit-exact PTX semantics.

For random abstract inputs at 8 and 16 bits (32 and 64 with fewer examples), every pair of
concrete inputs (all of them for small sets, samples otherwise) must land in the abstract
result. Each test runs twice: with small-set exact evaluation and without it, so the
envelope code is exercised on small sets too. The concrete side is written from the PTX
ISA pseudo-code, not from the implementation.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.domains import StridedInterval as SI
from ptxlint.domains import Tri, view_range

from .strategies import RNG, covers, exact_limit, intervals, members, s, tdiv, u, view

SMALL, WIDE = [8, 16], [32, 64]
SETTINGS = settings(max_examples=60, deadline=None)
#: 32 and 64 bits: the same checks on fewer examples and fewer concrete samples
WIDE_SETTINGS = settings(max_examples=12, deadline=None)
EXACT = [True, False]


def clamp(x: int, w: int, signed: bool) -> int:
    low, high = view_range(w, signed)
    return min(max(x, low), high)


def div_defined(x: int, y: int, w: int, signed: bool) -> bool:
    vx, vy = view(x, w, signed), view(y, w, signed)
    return vy != 0 and not (signed and vx == -(1 << (w - 1)) and vy == -1)


def _div(x, y, w, sg):
    return tdiv(view(x, w, sg), view(y, w, sg)) if div_defined(x, y, w, sg) else None


def _rem(x, y, w, sg):
    q = _div(x, y, w, sg)
    return None if q is None else view(x, w, sg) - q * view(y, w, sg)


BINARY = {
    "add": (lambda a, b, w, sg: a.add(b, w, sg), lambda x, y, w, sg: x + y),
    "add.sat": (lambda a, b, w, sg: a.add(b, w, sg, sat=True),
                lambda x, y, w, sg: clamp(view(x, w, sg) + view(y, w, sg), w, sg)),
    "sub": (lambda a, b, w, sg: a.sub(b, w, sg), lambda x, y, w, sg: x - y),
    "sub.sat": (lambda a, b, w, sg: a.sub(b, w, sg, sat=True),
                lambda x, y, w, sg: clamp(view(x, w, sg) - view(y, w, sg), w, sg)),
    "mul.lo": (lambda a, b, w, sg: a.mul(b, w, sg), lambda x, y, w, sg: x * y),
    "mul.hi": (lambda a, b, w, sg: a.mul_hi(b, w, sg),
               lambda x, y, w, sg: (view(x, w, sg) * view(y, w, sg)) >> w),
    "min": (lambda a, b, w, sg: a.min(b, w, sg),
            lambda x, y, w, sg: min(view(x, w, sg), view(y, w, sg))),
    "max": (lambda a, b, w, sg: a.max(b, w, sg),
            lambda x, y, w, sg: max(view(x, w, sg), view(y, w, sg))),
    "div": (lambda a, b, w, sg: a.div(b, w, sg), _div),
    "rem": (lambda a, b, w, sg: a.rem(b, w, sg), _rem),
    "and": (lambda a, b, w, sg: a.and_(b, w, sg), lambda x, y, w, sg: u(x, w) & u(y, w)),
    "or": (lambda a, b, w, sg: a.or_(b, w, sg), lambda x, y, w, sg: u(x, w) | u(y, w)),
    "xor": (lambda a, b, w, sg: a.xor(b, w, sg), lambda x, y, w, sg: u(x, w) ^ u(y, w)),
    "shl": (lambda a, b, w, sg: a.shl(b, w, sg),
            lambda x, y, w, sg: u(x, w) << min(u(y, 32), w)),
    "shr": (lambda a, b, w, sg: a.shr(b, w, sg),
            lambda x, y, w, sg: view(x, w, sg) >> min(u(y, 32), w)),
}
UNARY = {
    "neg": (lambda a, w, sg: a.neg(w, sg), lambda x, w: -x),
    "not": (lambda a, w, sg: a.not_(w, sg), lambda x, w: ~x),
    "abs": (lambda a, w, sg: a.abs(w), lambda x, w: abs(s(x, w))),
    "wrap": (lambda a, w, sg: a.wrap(w, sg), lambda x, w: x),
    "brev": (lambda a, w, sg: a.brev(w, sg),
             lambda x, w: sum(((u(x, w) >> i) & 1) << (w - 1 - i) for i in range(w))),
}
COUNTS = {
    "popc": (lambda a, w: a.popc(w), lambda x, w: bin(u(x, w)).count("1")),
    "clz": (lambda a, w: a.clz(w), lambda x, w: w - u(x, w).bit_length()),
}


def shift_amounts(w: int):
    small = st.builds(lambda lo, n: SI.range(lo, lo + n), st.integers(0, w + 2), st.integers(0, 5))
    return st.one_of(small, intervals(8))


def inputs(data, w, name=""):
    a = data.draw(intervals(w))
    b = data.draw(shift_amounts(w) if name in ("shl", "shr") else intervals(w))
    return a, b, data.draw(st.booleans()), data.draw(RNG)


def check_binary(w, name, exact, data, limit=32):
    a, b, signed, rnd = inputs(data, w, name)
    abstract, concrete = BINARY[name]
    with exact_limit(exact):
        r = abstract(a, b, w, signed)
    if a.is_bottom or b.is_bottom:
        assert r.is_bottom
    ys = members(b, rnd, limit)
    for x in members(a, rnd, limit):
        for y in ys:
            v = concrete(x, y, w, signed)
            if v is None:  # PTX leaves it unspecified: the whole view
                assert r == SI.full(w, signed)
            else:
                assert covers(r, v, w, signed), (str(a), str(b), x, y, v, str(r))


@pytest.mark.parametrize("exact", EXACT)
@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("w", SMALL)
@SETTINGS
@given(data=st.data())
def test_binary_sound(w, name, exact, data):
    check_binary(w, name, exact, data)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("w", WIDE)
@WIDE_SETTINGS
@given(data=st.data())
def test_binary_sound_wide(w, name, data):
    check_binary(w, name, False, data, limit=12)


@pytest.mark.parametrize("exact", EXACT)
@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("w", SMALL + WIDE)
@SETTINGS
@given(data=st.data())
def test_unary_sound(w, name, exact, data):
    a, _, signed, rnd = inputs(data, w)
    signed = signed or name == "abs"
    abstract, concrete = UNARY[name]
    with exact_limit(exact):
        r = abstract(a, w, signed)
    for x in members(a, rnd, 256):
        assert covers(r, concrete(x, w), w, signed), (str(a), x, str(r))


@pytest.mark.parametrize("exact", EXACT)
@pytest.mark.parametrize("name", sorted(COUNTS))
@pytest.mark.parametrize("w", SMALL + WIDE)
@SETTINGS
@given(data=st.data())
def test_counts_sound(w, name, exact, data):
    a, _, _, rnd = inputs(data, w)
    abstract, concrete = COUNTS[name]
    with exact_limit(exact):
        r = abstract(a, w)
    for x in members(a, rnd, 256):
        assert r.contains(concrete(x, w)), (str(a), x, str(r))


@pytest.mark.parametrize("exact", EXACT)
@pytest.mark.parametrize("w", [8, 16, 32])
@SETTINGS
@given(data=st.data())
def test_wide_and_mad_sound(w, exact, data):
    a, b, signed, rnd = inputs(data, w)
    mode = data.draw(st.sampled_from(["lo", "hi", "wide"]))
    cw = 2 * w if mode == "wide" else w
    c = data.draw(intervals(cw))
    with exact_limit(exact):
        wide, r = a.mul_wide(b, w, signed), a.mad(b, c, w, signed, mode)
    ys, zs = members(b, rnd, 16), members(c, rnd, 4)
    for x in members(a, rnd, 16):
        for y in ys:
            p = view(x, w, signed) * view(y, w, signed)
            assert covers(wide, p, 2 * w, signed)
            prod = {"lo": p, "hi": p >> w, "wide": p}[mode]
            for z in zs:
                assert covers(r, prod + z, cw, signed), (x, y, z)


@pytest.mark.parametrize("w", [8, 16, 64])
@SETTINGS
@given(data=st.data())
def test_carry_sound(w, data):
    a, b, signed, rnd = inputs(data, w)
    cin = data.draw(st.sampled_from([None, SI.const(0), SI.const(1), SI.range(0, 1)]))
    carry = a.add_carry(b, w, cin)
    total = a.addc(b, cin or SI.const(0), w, signed)
    assert carry.leq(SI.range(0, 1))
    ys = members(b, rnd, 24)
    for x in members(a, rnd, 24):
        for y in ys:
            for ci in sorted(cin.gamma()) if cin is not None else [0]:
                full = u(x, w) + u(y, w) + ci
                assert carry.contains(full >> w)
                assert covers(total, full, w, signed)


def ref_bfe(x: int, pos: int, ln: int, w: int, signed: bool) -> int:
    """PTX ISA pseudo-code of bfe, with msb = w - 1."""
    msb, pos, ln, a = w - 1, u(pos, 32) & 0xFF, u(ln, 32) & 0xFF, u(x, w)
    sbit = 0 if not signed or ln == 0 else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(msb + 1):
        d |= ((a >> (pos + i)) & 1 if i < ln and pos + i <= msb else sbit) << i
    return d


def ref_bfi(x: int, base: int, pos: int, ln: int, w: int) -> int:
    """PTX ISA pseudo-code of bfi."""
    msb, pos, ln, f = w - 1, u(pos, 32) & 0xFF, u(ln, 32) & 0xFF, u(base, w)
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((x >> i) & 1) << (pos + i))
        i += 1
    return f


def field_operands(w: int):
    small = st.builds(lambda lo, n: SI.range(lo, lo + n), st.integers(0, w + 2), st.integers(0, 3))
    return st.one_of(small, small, intervals(8))


@pytest.mark.parametrize("exact", EXACT)
@pytest.mark.parametrize("w", [8, 16, 32])
@SETTINGS
@given(data=st.data())
def test_bitfields_sound(w, exact, data):
    a, base, signed, rnd = inputs(data, w)
    pos, ln = data.draw(field_operands(w)), data.draw(field_operands(w))
    with exact_limit(exact):
        extracted = a.bfe(pos, ln, w, signed)
        inserted = a.bfi(base, pos, ln, w, signed)
    ps, ns, ys = members(pos, rnd, 6), members(ln, rnd, 6), members(base, rnd, 3)
    for x in members(a, rnd, 8):
        for p in ps:
            for n in ns:
                assert covers(extracted, ref_bfe(x, p, n, w, signed), w, signed), (x, p, n)
                for y in ys:
                    assert covers(inserted, ref_bfi(x, y, p, n, w), w, signed), (x, y, p, n)


@pytest.mark.parametrize("sat", [False, True])
@SETTINGS
@given(data=st.data())
def test_cvt_sound(sat, data):
    from_w, to_w = data.draw(st.sampled_from([8, 16, 32])), data.draw(st.sampled_from([8, 16, 32]))
    from_signed, to_signed = data.draw(st.booleans()), data.draw(st.booleans())
    a, rnd = data.draw(intervals(from_w)), data.draw(RNG)
    r = a.cvt(from_w, from_signed, to_w, to_signed, sat)
    for x in members(a, rnd, 256):
        v = view(x, from_w, from_signed)  # sign- or zero-extension of the source
        v = clamp(v, to_w, to_signed) if sat else v
        assert covers(r, v, to_w, to_signed), (str(a), x, str(r))


@SETTINGS
@given(data=st.data())
def test_selp_sound(data):
    a, b, signed, rnd = inputs(data, 8)
    pred = data.draw(st.sampled_from(list(Tri)))
    r = a.selp(b, 8, signed, pred)
    picks = [] if pred is Tri.FALSE else members(a, rnd)
    picks += [] if pred is Tri.TRUE else members(b, rnd)
    assert all(covers(r, x, 8, signed) for x in picks)


# -------------------------------------------------------------------------- spot checks


def test_spot_checks_32_and_64():
    c, r = SI.const, SI.range
    assert r(2**32 - 2, 2**32 - 1).add(c(1), 32) == SI.hull([0, 2**32 - 1])
    assert r(2**32 - 2, 2**32 - 1).add(c(1), 32, signed=True) == r(-1, 0)
    assert r(0, 1023).mul_wide(c(4), 32) == r(0, 4092, 4)
    assert c(-1).shr(c(63), 64, signed=True) == c(-1)
    assert c(-1).shr(c(100), 64) == c(0)  # clamped to 64: logical gives 0
    assert c(1).shl(c(40), 32) == c(0)
    assert c(0xABCD).bfe(c(4), c(8), 32) == c(0xBC)
    assert c(0xF0).bfe(c(4), c(4), 32, signed=True) == c(-1)
    assert c(0xF).bfi(c(0), c(8), c(4), 32) == c(0xF00)
    assert c(1).clz(64) == c(63) and c(2**64 - 1).popc(64) == c(64)
    assert c(1).brev(32) == c(2**31)
    assert c(-1).cvt(32, True, 64, False) == c(2**64 - 1)
    assert c(2**32 - 1).cvt(32, False, 64, True) == c(2**32 - 1)
    assert c(300).cvt(32, False, 8, False, sat=True) == c(255)
    assert c(-7).div(c(2), 32, True) == c(-3) and c(-7).rem(c(2), 32, True) == c(-1)
    assert c(2**63).mul_hi(c(4), 64) == c(2)
    assert c(2**64 - 1).add_carry(c(1), 64) == c(1)
    assert r(0, 2**32 - 1).div(r(0, 4), 32) == SI.full(32)  # may divide by zero
    assert c(-(2**31)).div(c(-1), 32, signed=True) == SI.full(32, True)


def test_stride_facts():
    c, r = SI.const, SI.range
    tid4 = r(0, 4092, 4)
    assert tid4.and_(c(0xFF), 32) == r(0, 252, 4)  # low mask: modulo keeps the stride
    assert r(0, 4095).and_(c(~15 & 0xFFFFFFFF), 32) == r(0, 4080, 16)  # high mask aligns
    assert r(0, 4092, 4).shl(c(2), 32) == r(0, 16368, 16)
    assert r(0, 4096, 16).shr(c(4), 32) == r(0, 256)
    assert r(0, 4092, 4).or_(c(1), 32) == r(1, 4093, 4)
    assert r(0, 4096, 16).div(c(4), 32) == r(0, 1024, 4)
    assert r(0, 4096, 8).rem(c(64), 32) == r(0, 56, 8)
    assert r(0, 1023).mul(c(128), 32) == r(0, 130944, 128)
