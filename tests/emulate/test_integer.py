"""Integer semantics, bit-exact against the reference semantics of `tests/interp/concrete.py`
(written from the ISA independently of the emulator) at 16, 32 and 64 bits (8-bit
values through `cvt`, `ld`/`st` and the byte instructions), with hypothesis."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.interp import concrete as C

from .helpers import elementwise

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def values(w: int):
    edges = [0, 1, 2, (1 << w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1,
             (1 << w) - 2, 24, 31, 32, 33, 63, 64]
    one = st.one_of(st.integers(0, (1 << w) - 1), st.sampled_from(edges))
    return st.lists(st.tuples(one, one, one), min_size=1, max_size=48)


def run(body, w, triples, n_in=2, out_bits=None, b_bits=None, c_bits=None):
    """Run `body` (on %a %b %c -> %d) over the triples; returns (got, a, b, c)."""
    a = [t[0] for t in triples]
    b = [t[1] % (1 << (b_bits or w)) for t in triples]
    c = [t[2] % (1 << (c_bits or w)) for t in triples]
    ins = {"a": f"b{w}", "b": f"b{b_bits or w}", "c": f"b{c_bits or w}"}
    ins = dict(list(ins.items())[:n_in])
    vals = {"a": a, "b": b, "c": c}
    got = elementwise(body, ins, {"d": f"b{out_bits or w}"}, {k: vals[k] for k in ins})["d"]
    return [int(x) for x in got], a, b, c


def check(got, want):
    bad = [(i, g, x) for i, (g, x) in enumerate(zip(got, want)) if x is not None and g != x]
    assert not bad, bad[:5]


BINARY = [
    ("add.{s}{w}", lambda a, b, w, s: C.add(a, b, w, s)),
    ("sub.{s}{w}", lambda a, b, w, s: C.sub(a, b, w, s)),
    ("mul.lo.{s}{w}", lambda a, b, w, s: C.mul(a, b, w, s, "lo")),
    ("mul.hi.{s}{w}", lambda a, b, w, s: C.mul(a, b, w, s, "hi")),
    ("min.{s}{w}", lambda a, b, w, s: C.min_(a, b, w, s)),
    ("max.{s}{w}", lambda a, b, w, s: C.max_(a, b, w, s)),
    ("div.{s}{w}", lambda a, b, w, s: C.div(a, b, w, s)),
    ("rem.{s}{w}", lambda a, b, w, s: C.rem(a, b, w, s)),
]


@pytest.mark.parametrize("w", [16, 32, 64])
@pytest.mark.parametrize("signed", [False, True], ids=["u", "s"])
@pytest.mark.parametrize("op,ref", BINARY, ids=[o for o, _ in BINARY])
@SETTINGS
@given(data=st.data())
def test_binary(op, ref, w, signed, data):
    triples = data.draw(values(w))
    insn = op.format(s="s" if signed else "u", w=w)
    got, a, b, _ = run(f"  {insn} %d, %a, %b;", w, triples)
    check(got, [ref(x, y, w, signed) for x, y in zip(a, b)])


@pytest.mark.parametrize("w", [16, 32])
@pytest.mark.parametrize("signed", [False, True], ids=["u", "s"])
@SETTINGS
@given(data=st.data())
def test_wide(w, signed, data):
    triples = data.draw(values(w))
    s = "s" if signed else "u"
    got, a, b, _ = run(f"  mul.wide.{s}{w} %d, %a, %b;", w, triples, out_bits=2 * w)
    check(got, [C.mul(x, y, w, signed, "wide") for x, y in zip(a, b)])
    got, a, b, c = run(f"  mad.wide.{s}{w} %d, %a, %b, %c;", w, triples, n_in=3,
                       out_bits=2 * w, c_bits=2 * w)
    check(got, [C.mad(x, y, z, w, signed, "wide") for x, y, z in zip(a, b, c)])


@pytest.mark.parametrize("w", [16, 32, 64])
@pytest.mark.parametrize("mode", ["lo", "hi"])
@SETTINGS
@given(data=st.data())
def test_mad(w, mode, data):
    triples = data.draw(values(w))
    for signed in (False, True):
        s = "s" if signed else "u"
        got, a, b, c = run(f"  mad.{mode}.{s}{w} %d, %a, %b, %c;", w, triples, n_in=3)
        check(got, [C.mad(x, y, z, w, signed, mode) for x, y, z in zip(a, b, c)])


@SETTINGS
@given(data=st.data())
def test_saturating_s32(data):
    triples = data.draw(values(32))
    got, a, b, _ = run("  add.sat.s32 %d, %a, %b;", 32, triples)
    check(got, [C.add(x, y, 32, True, sat=True) for x, y in zip(a, b)])
    got, a, b, _ = run("  sub.sat.s32 %d, %a, %b;", 32, triples)
    check(got, [C.sub(x, y, 32, True, sat=True) for x, y in zip(a, b)])
    got, a, b, c = run("  mad.hi.sat.s32 %d, %a, %b, %c;", 32, triples, n_in=3)
    check(got, [C.mad(x, y, z, 32, True, "hi", sat=True) for x, y, z in zip(a, b, c)])


@pytest.mark.parametrize("w", [32, 64])
@SETTINGS
@given(data=st.data())
def test_carry_chains(w, data):
    triples = data.draw(values(w))
    body = (f"  add.cc.u{w} %d, %a, %b;\n  addc.cc.u{w} %d, %d, %c;\n"
            f"  addc.u{w} %d, %d, 0;")  # d = a+b, += c with carry, += carry out
    got, a, b, c = run(body, w, triples, n_in=3)
    want = []
    for x, y, z in zip(a, b, c):
        d, cf = C.add_cc(x, y, w)
        d, cf = C.add_cc(d, z, w, cf)
        want.append(C.add_cc(d, 0, w, cf)[0])
    check(got, want)
    body = f"  sub.cc.u{w} %d, %a, %b;\n  subc.cc.u{w} %d, %d, %c;\n  subc.u{w} %d, %d, 0;"
    got, a, b, c = run(body, w, triples, n_in=3)
    want = []
    for x, y, z in zip(a, b, c):
        d, cf = C.sub_cc(x, y, w)
        d, cf = C.sub_cc(d, z, w, cf)
        want.append(C.sub_cc(d, 0, w, cf)[0])
    check(got, want)
    body = f"  mad.lo.cc.u{w} %d, %a, %b, %c;\n  madc.hi.u{w} %d, %a, %b, %d;"
    got, a, b, c = run(body, w, triples, n_in=3)
    want = []
    for x, y, z in zip(a, b, c):
        d, cf = C.mad_cc(x, y, z, w, False, "lo")
        want.append(C.mad_cc(x, y, d, w, False, "hi", cf)[0])
    check(got, want)


@SETTINGS
@given(data=st.data())
def test_24_bit_and_sad(data):
    triples = data.draw(values(32))
    for signed in (False, True):
        s = "s" if signed else "u"
        for mode in ("lo", "hi"):
            got, a, b, _ = run(f"  mul24.{mode}.{s}32 %d, %a, %b;", 32, triples)
            check(got, [C.mul24(x, y, signed, mode) for x, y in zip(a, b)])
            got, a, b, c = run(f"  mad24.{mode}.{s}32 %d, %a, %b, %c;", 32, triples, n_in=3)
            check(got, [C.mad24(x, y, z, signed, mode) for x, y, z in zip(a, b, c)])
        got, a, b, c = run(f"  sad.{s}32 %d, %a, %b, %c;", 32, triples, n_in=3)
        check(got, [C.sad(x, y, z, 32, signed) for x, y, z in zip(a, b, c)])


def test_division_by_zero_is_defined():
    got, *_ = run("  div.u32 %d, %a, %b;", 32, [(7, 0, 0), (0, 0, 0)])
    assert got == [0xFFFFFFFF, 0xFFFFFFFF]
    got, *_ = run("  rem.u32 %d, %a, %b;", 32, [(7, 0, 0)])
    assert got == [7]
    got, *_ = run("  div.s32 %d, %a, %b;", 32, [(0x80000000, 0xFFFFFFFF, 0)])
    assert got == [0x80000000]


@pytest.mark.parametrize("w", [16, 32, 64])
@SETTINGS
@given(data=st.data())
def test_logic_and_shifts(w, data):
    triples = data.draw(values(w))
    for op, fn in (("and", C.and_), ("or", C.or_), ("xor", C.xor)):
        got, a, b, _ = run(f"  {op}.b{w} %d, %a, %b;", w, triples)
        check(got, [fn(x, y, w) for x, y in zip(a, b)])
    got, a, *_ = run(f"  not.b{w} %d, %a;", w, triples, n_in=1)
    check(got, [C.not_(x, w) for x in a])
    got, a, *_ = run(f"  cnot.b{w} %d, %a;", w, triples, n_in=1)
    check(got, [C.cnot(x, w) for x in a])
    got, a, b, _ = run(f"  shl.b{w} %d, %a, %b;", w, triples, b_bits=32)
    check(got, [C.shl(x, y, w) for x, y in zip(a, b)])
    for signed in (False, True):
        got, a, b, _ = run(f"  shr.{'s' if signed else 'u'}{w} %d, %a, %b;", w, triples, b_bits=32)
        check(got, [C.shr(x, y, w, signed) for x, y in zip(a, b)])
    if w == 32:
        for left in (True, False):
            for mode in ("clamp", "wrap"):
                got, a, b, c = run(f"  shf.{'l' if left else 'r'}.{mode}.b32 %d, %a, %b, %c;",
                                   32, triples, n_in=3)
                check(got, [C.shf(x, y, z, left, mode == "clamp") for x, y, z in zip(a, b, c)])


@SETTINGS
@given(data=st.data(), lut=st.integers(0, 255))
def test_lop3(data, lut):
    triples = data.draw(values(32))
    got, a, b, c = run(f"  lop3.b32 %d, %a, %b, %c, {lut};", 32, triples, n_in=3)
    check(got, [C.lop3(x, y, z, lut) for x, y, z in zip(a, b, c)])


@pytest.mark.parametrize("w", [32, 64])
@SETTINGS
@given(data=st.data())
def test_bit_fields(w, data):
    triples = data.draw(values(w))
    for signed in (False, True):
        s = "s" if signed else "u"
        got, a, b, c = run(f"  bfe.{s}{w} %d, %a, %b, %c;", w, triples, n_in=3, b_bits=32, c_bits=32)
        check(got, [C.bfe(x, y, z, w, signed) for x, y, z in zip(a, b, c)])
        got, a, *_ = run(f"  bfind.{s}{w} %d, %a;", w, triples, n_in=1, out_bits=32)
        check(got, [C.bfind(x, w, signed, False) for x in a])
        got, a, *_ = run(f"  bfind.shiftamt.{s}{w} %d, %a;", w, triples, n_in=1, out_bits=32)
        check(got, [C.bfind(x, w, signed, True) for x in a])
    body = f"  bfi.b{w} %d, %a, %b, %c, %e;"
    es = data.draw(st.lists(st.integers(0, 300), min_size=len(triples), max_size=len(triples)))
    out = elementwise(body, {"a": f"b{w}", "b": f"b{w}", "c": "b32", "e": "b32"}, {"d": f"b{w}"},
                      {"a": [t[0] for t in triples], "b": [t[1] for t in triples],
                       "c": [t[2] % 2**32 for t in triples], "e": es})["d"]
    check([int(x) for x in out], [C.bfi(t[0], t[1], t[2] % 2**32, e, w) for t, e in zip(triples, es)])
    for op, fn in (("popc", C.popc), ("clz", C.clz)):
        got, a, *_ = run(f"  {op}.b{w} %d, %a;", w, triples, n_in=1, out_bits=32)
        check(got, [fn(x, w) for x in a])
    got, a, *_ = run(f"  brev.b{w} %d, %a;", w, triples, n_in=1)
    check(got, [C.brev(x, w) for x in a])


@SETTINGS
@given(data=st.data())
def test_masks_and_searches(data):
    triples = data.draw(values(32))
    got, a, b, c = run("  fns.b32 %d, %a, %b, %c;", 32, [(x, y % 32, z) for x, y, z in triples], n_in=3)
    check(got, [C.fns(x, y, z) for x, y, z in zip(a, b, c)])
    for mode in ("clamp", "wrap"):
        got, a, b, _ = run(f"  bmsk.{mode}.b32 %d, %a, %b;", 32, triples)
        check(got, [C.bmsk(x, y, mode == "clamp") for x, y in zip(a, b)])
        for s in ("u", "s"):
            got, a, b, _ = run(f"  szext.{mode}.{s}32 %d, %a, %b;", 32, triples)
            check(got, [C.szext(x, y, mode == "clamp", s == "s") for x, y in zip(a, b)])


@SETTINGS
@given(data=st.data())
def test_bytes_dot_products_permute(data):
    triples = data.draw(values(32))
    for sa in ("u32", "s32"):
        for sb in ("u32", "s32"):
            got, a, b, c = run(f"  dp4a.{sa}.{sb} %d, %a, %b, %c;", 32, triples, n_in=3)
            check(got, [C.dp4a(x, y, z, sa[0] == "s", sb[0] == "s") for x, y, z in zip(a, b, c)])
            for mode in ("lo", "hi"):
                got, a, b, c = run(f"  dp2a.{mode}.{sa}.{sb} %d, %a, %b, %c;", 32, triples, n_in=3)
                check(got, [C.dp2a(x, y, z, sa[0] == "s", sb[0] == "s", mode == "hi")
                            for x, y, z in zip(a, b, c)])
    for mode in (None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        suffix = f".{mode}" if mode else ""
        got, a, b, c = run(f"  prmt.b32{suffix} %d, %a, %b, %c;", 32, triples, n_in=3)
        check(got, [C.prmt(x, y, z, mode) for x, y, z in zip(a, b, c)])


@pytest.mark.parametrize("w", [16, 32, 64])
@SETTINGS
@given(data=st.data())
def test_compare(w, data):
    triples = data.draw(values(w))
    a = [t[0] for t in triples]
    b = [t[1] for t in triples]
    for op in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
        for signed in (False, True):
            if op in ("lo", "ls", "hi", "hs") and signed:
                continue
            t = f"{'s' if signed else 'u'}{w}"
            out = elementwise(f"  setp.{op}.{t} %p|%q, %a, %b;", {"a": f"b{w}", "b": f"b{w}"},
                              {"p": "pred", "q": "pred"}, {"a": a, "b": b})
            want = [C.compare(op, x, y, w, signed) for x, y in zip(a, b)]
            assert list(out["p"]) == want
            assert list(out["q"]) == [not v for v in want]


@SETTINGS
@given(data=st.data())
def test_setp_combine(data):
    triples = data.draw(values(32))
    a = [t[0] for t in triples]
    b = [t[1] for t in triples]
    r = [t[2] & 1 == 1 for t in triples]
    for bop in ("and", "or", "xor"):
        out = elementwise(f"  setp.lt.{bop}.s32 %p|%q, %a, %b, !%r;",
                          {"a": "b32", "b": "b32", "r": "pred"}, {"p": "pred", "q": "pred"},
                          {"a": a, "b": b, "r": r})
        t = [C.compare("lt", x, y, 32, True) for x, y in zip(a, b)]
        assert list(out["p"]) == [bool(C.boolop(bop, int(x), int(not z))) for x, z in zip(t, r)]
        assert list(out["q"]) == [bool(C.boolop(bop, int(not x), int(not z))) for x, z in zip(t, r)]


CVT_TYPES = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]


@pytest.mark.parametrize("dst", CVT_TYPES)
@SETTINGS
@given(data=st.data())
def test_cvt_integers(dst, data):
    triples = data.draw(values(64))
    a = [t[0] for t in triples]
    for src in CVT_TYPES:
        fw, tw = int(src[1:]), int(dst[1:])
        for sat in (False, True):
            body = f"  cvt{'.sat' if sat else ''}.{dst}.{src} %d, %a;"
            got = elementwise(body, {"a": src}, {"d": dst}, {"a": [C.u(x, fw) for x in a]})["d"]
            want = [C.cvt(x, fw, src[0] == "s", tw, dst[0] == "s", sat) for x in a]
            assert [C.u(int(g), tw) for g in got] == want, (src, dst, sat)


@SETTINGS
@given(data=st.data())
def test_cvt_pack(data):
    triples = data.draw(values(32))
    for size, t in ((16, "u16"), (16, "s16"), (8, "u8"), (8, "s8"), (4, "u4"), (4, "s4"),
                    (2, "u2"), (2, "s2")):
        if size == 16:
            got, a, b, _ = run(f"  cvt.pack.sat.{t}.s32 %d, %a, %b;", 32, triples)
            check(got, [C.cvt_pack(x, y, 0, 16, t[0] == "s") for x, y in zip(a, b)])
        else:
            got, a, b, c = run(f"  cvt.pack.sat.{t}.s32.b32 %d, %a, %b, %c;", 32, triples, n_in=3)
            check(got, [C.cvt_pack(x, y, z, size, t[0] == "s") for x, y, z in zip(a, b, c)])


def test_eight_bit_loads_extend_by_type():
    got = elementwise("  cvt.u32.u16 %d, %a;\n  cvt.s32.s16 %e, %a;", {"a": "s8"},
                      {"d": "u32", "e": "s32"}, {"a": [-1, 5, -128]})
    assert list(got["d"]) == [0xFFFF, 5, 0xFF80]  # ld.s8 sign-extended into the .b16 register
    assert list(got["e"]) == [-1, 5, -128]
