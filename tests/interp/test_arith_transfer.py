"""Transfer functions of the compute families (ptxlint/interp/transfer/arith*.py).

The soundness property pairs each transfer with the reference semantics in `concrete.py`:
random abstract inputs (value sets at 8-64 bits, affine forms over tid.x and laneid,
congruences, pointers into a buffer) and a warp of 32 concrete lanes inside them
(tid.x = laneid = lane index); after the transfer every lane's concrete result must be
in the result's value set and congruence, match its affine form, and be the same in
every lane when the result claims to be uniform. Constant inputs must give the exact
constant. Unit tests pin the address computations nvcc emits.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptxlint.domains.affine import Affine, ThreadBounds
from ptxlint.domains.align import Congruence
from ptxlint.domains.relation import Link
from ptxlint.domains.space import Region
from ptxlint.domains.state import State
from ptxlint.domains.strided import StridedInterval as SI
from ptxlint.domains.strided import view_range
from ptxlint.domains.value import TOP, UNIFORM_TOP, Value
from ptxlint.interp.transfer import arith
from ptxlint.interp.context import Ctx
from ptxlint.interp.links import link_of
from ptxlint.interp.transfer.table import transfer_for
from ptxlint.ir.build import parse_module
from ptxlint.ir.operands import Immediate, Negated, PredicatePair, Register, Vector
from ptxlint.ir.registry import REGISTRY, all_opcodes, resolve
from tests.domains.strategies import intervals, member
from tests.interp import concrete as C

FAMILIES = ("integer", "floating", "compare", "logic", "convert", "move")
LANES = 32
BOUNDS = ThreadBounds.for_block(LANES)
BUF_BASE = 0x7F12_3400_0000  # the buffer's address: 256-byte aligned, as cudaMalloc's
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64
.shared .align 16 .b8 smem[1024];
.visible .entry k(.param .u64 buf)
{
    .reg .b32 %r<20>; .reg .b64 %rd<20>; .reg .pred %p<8>; .reg .f32 %f<8>;
"""
_MODULE = parse_module(PROLOGUE + "    ret;\n}\n").module
CTX = Ctx(_MODULE.functions[0], _MODULE, bounds=BOUNDS)
BUF = Region("global", "buf")


def run(text: str, state: State | None = None, ctx: Ctx | None = None) -> State:
    """Interpret straight-line PTX with the registered transfer functions."""
    module = parse_module(PROLOGUE + text + "\n    ret;\n}\n").module
    fn = module.functions[0]
    c = ctx or Ctx(fn, module, bounds=BOUNDS)
    s = state if state is not None else State()
    for insn in fn.instructions:
        if insn.opcode != "ret":
            transfer_for(type(insn))(insn, s, c)
    return s


def tid_x() -> Value:
    return Value.of_affine(Affine.var("tid.x"), BOUNDS)


# ---- every class has a transfer function -------------------------------------------------------
def test_every_compute_class_has_a_transfer_function():
    all_opcodes()
    classes = {cls for cls in REGISTRY.values()
               if cls.__module__.rsplit(".", 1)[-1] in FAMILIES}
    assert len(classes) > 50
    for cls in classes:
        fn = transfer_for(cls)
        assert fn is not None, cls.__name__
        assert fn.__module__.startswith("ptxlint.interp.transfer.arith"), \
            (cls.__name__, fn.__module__)


# ---- the forms under test ----------------------------------------------------------------------
@dataclass(frozen=True)
class Form:
    """One opcode spelling. `dest`: "d<w>" a register, "pq" a setp pair, "p" a predicate,
    "v<w>x<n>" a vector, "dp<w>" lop3's value|predicate pair. `srcs`: "r<w>" register,
    "i<w>" immediate, "p" predicate, "!p" negated predicate, "lut" 8-bit immediate,
    "v<w>x<n>" a vector of registers. `ref` maps the sources' bits (predicates as 0/1,
    vectors as tuples, then CC.CF when `cc_in`) to the destinations' bits, then CC.CF
    when `cc_out`; None is "unspecified"."""

    text: str
    dest: str
    srcs: tuple[str, ...]
    ref: Callable
    cc_in: bool = False
    cc_out: bool = False

    def __repr__(self) -> str:
        return f"Form({self.text} {self.dest} <- {', '.join(self.srcs)})"


INT = ("u16", "s16", "u32", "s32", "u64", "s64")
CMP = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")


def wid(t: str) -> int:
    return int(t.lstrip("usbf"))


def arith_forms() -> list[Form]:
    out = []
    for t in INT:
        w, sg = wid(t), t[0] == "s"
        r = f"r{w}"
        out += [
            Form(f"add.{t}", f"d{w}", (r, r), lambda a, b, w=w, sg=sg: C.add(a, b, w, sg)),
            Form(f"sub.{t}", f"d{w}", (r, f"i{w}"), lambda a, b, w=w, sg=sg: C.sub(a, b, w, sg)),
            Form(f"mul.lo.{t}", f"d{w}", (r, r), lambda a, b, w=w, sg=sg: C.mul(a, b, w, sg, "lo")),
            Form(f"mul.hi.{t}", f"d{w}", (r, r), lambda a, b, w=w, sg=sg: C.mul(a, b, w, sg, "hi")),
            Form(f"mad.lo.{t}", f"d{w}", (r, r, r),
                 lambda a, b, c, w=w, sg=sg: C.mad(a, b, c, w, sg, "lo")),
            Form(f"mad.hi.{t}", f"d{w}", (r, r, r),
                 lambda a, b, c, w=w, sg=sg: C.mad(a, b, c, w, sg, "hi")),
            Form(f"sad.{t}", f"d{w}", (r, r, r), lambda a, b, c, w=w, sg=sg: C.sad(a, b, c, w, sg)),
            Form(f"div.{t}", f"d{w}", (r, r), lambda a, b, w=w, sg=sg: C.div(a, b, w, sg)),
            Form(f"rem.{t}", f"d{w}", (r, r), lambda a, b, w=w, sg=sg: C.rem(a, b, w, sg)),
            Form(f"min.{t}", f"d{w}", (r, r), lambda a, b, w=w, sg=sg: C.min_(a, b, w, sg)),
            Form(f"max.{t}", f"d{w}", (r, r), lambda a, b, w=w, sg=sg: C.max_(a, b, w, sg)),
        ]
        if w < 64:
            out += [
                Form(f"mul.wide.{t}", f"d{2 * w}", (r, r),
                     lambda a, b, w=w, sg=sg: C.mul(a, b, w, sg, "wide")),
                Form(f"mad.wide.{t}", f"d{2 * w}", (r, r, f"r{2 * w}"),
                     lambda a, b, c, w=w, sg=sg: C.mad(a, b, c, w, sg, "wide")),
            ]
        if sg:
            out += [Form(f"abs.{t}", f"d{w}", (r,), lambda a, w=w: C.abs_(a, w)),
                    Form(f"neg.{t}", f"d{w}", (r,), lambda a, w=w: C.neg(a, w))]
    return out + modifier_forms()


def modifier_forms() -> list[Form]:
    """.sat, .relu and the 24-bit multiplies."""
    out = [
        Form("add.sat.s32", "d32", ("r32", "r32"), lambda a, b: C.add(a, b, 32, True, True)),
        Form("sub.sat.s32", "d32", ("r32", "r32"), lambda a, b: C.sub(a, b, 32, True, True)),
        Form("mad.hi.sat.s32", "d32", ("r32", "r32", "r32"),
             lambda a, b, c: C.mad(a, b, c, 32, True, "hi", True)),
        Form("min.relu.s32", "d32", ("r32", "r32"), lambda a, b: C.min_(a, b, 32, True, True)),
        Form("max.relu.s32", "d32", ("r32", "r32"), lambda a, b: C.max_(a, b, 32, True, True)),
    ]
    for t in ("u32", "s32"):
        sg = t == "s32"
        for mode in ("lo", "hi"):
            out += [Form(f"mul24.{mode}.{t}", "d32", ("r32", "r32"),
                         lambda a, b, sg=sg, m=mode: C.mul24(a, b, sg, m)),
                    Form(f"mad24.{mode}.{t}", "d32", ("r32", "r32", "r32"),
                         lambda a, b, c, sg=sg, m=mode: C.mad24(a, b, c, sg, m))]
    out.append(Form("mad24.hi.sat.s32", "d32", ("r32", "r32", "r32"),
                    lambda a, b, c: C.mad24(a, b, c, True, "hi", True)))
    return out


def carry_forms() -> list[Form]:
    out = []
    for t in ("u32", "s32", "u64"):
        w, sg = wid(t), t[0] == "s"
        r = f"r{w}"
        out += [
            Form(f"add.cc.{t}", f"d{w}", (r, r), lambda a, b, w=w: C.add_cc(a, b, w), cc_out=True),
            Form(f"sub.cc.{t}", f"d{w}", (r, r), lambda a, b, w=w: C.sub_cc(a, b, w), cc_out=True),
            Form(f"addc.{t}", f"d{w}", (r, r), lambda a, b, cf, w=w: C.add_cc(a, b, w, cf)[0],
                 cc_in=True),
            Form(f"addc.cc.{t}", f"d{w}", (r, r), lambda a, b, cf, w=w: C.add_cc(a, b, w, cf),
                 cc_in=True, cc_out=True),
            Form(f"subc.cc.{t}", f"d{w}", (r, r), lambda a, b, cf, w=w: C.sub_cc(a, b, w, cf),
                 cc_in=True, cc_out=True),
            Form(f"subc.{t}", f"d{w}", (r, r), lambda a, b, cf, w=w: C.sub_cc(a, b, w, cf)[0],
                 cc_in=True),
        ]
        for mode in ("lo", "hi"):
            out += [
                Form(f"mad.{mode}.cc.{t}", f"d{w}", (r, r, r),
                     lambda a, b, c, w=w, sg=sg, m=mode: C.mad_cc(a, b, c, w, sg, m),
                     cc_out=True),
                Form(f"madc.{mode}.cc.{t}", f"d{w}", (r, r, r),
                     lambda a, b, c, cf, w=w, sg=sg, m=mode: C.mad_cc(a, b, c, w, sg, m, cf),
                     cc_in=True, cc_out=True),
                Form(f"madc.{mode}.{t}", f"d{w}", (r, r, r),
                     lambda a, b, c, cf, w=w, sg=sg, m=mode: C.mad_cc(a, b, c, w, sg, m, cf)[0],
                     cc_in=True),
            ]
    return out


def bit_forms() -> list[Form]:
    out = []
    for w in (16, 32, 64):
        r, b = f"r{w}", f"b{w}"
        out += [
            Form(f"and.{b}", f"d{w}", (r, r), lambda x, y, w=w: C.and_(x, y, w)),
            Form(f"or.{b}", f"d{w}", (r, "i" + str(w)), lambda x, y, w=w: C.or_(x, y, w)),
            Form(f"xor.{b}", f"d{w}", (r, r), lambda x, y, w=w: C.xor(x, y, w)),
            Form(f"not.{b}", f"d{w}", (r,), lambda x, w=w: C.not_(x, w)),
            Form(f"cnot.{b}", f"d{w}", (r,), lambda x, w=w: C.cnot(x, w)),
            Form(f"shl.{b}", f"d{w}", (r, "r32"), lambda x, n, w=w: C.shl(x, n, w)),
            Form(f"shl.{b}", f"d{w}", (r, "i8"), lambda x, n, w=w: C.shl(x, n, w)),
            Form(f"shr.{b}", f"d{w}", (r, "r32"), lambda x, n, w=w: C.shr(x, n, w, False)),
            Form(f"shr.s{w}", f"d{w}", (r, "r32"), lambda x, n, w=w: C.shr(x, n, w, True)),
            Form(f"shr.u{w}", f"d{w}", (r, "i8"), lambda x, n, w=w: C.shr(x, n, w, False)),
        ]
    return out + field_forms() + packed_forms()


def field_forms() -> list[Form]:
    """Bit fields, counts, szext, bmsk and funnel shifts."""
    out = []
    for w in (32, 64):
        r = f"r{w}"
        for t in (f"u{w}", f"s{w}"):
            sg = t[0] == "s"
            out += [
                Form(f"bfe.{t}", f"d{w}", (r, "r32", "r32"),
                     lambda a, p, n, w=w, sg=sg: C.bfe(a, p, n, w, sg)),
                Form(f"bfind.{t}", "d32", (r,), lambda a, w=w, sg=sg: C.bfind(a, w, sg, False)),
                Form(f"bfind.shiftamt.{t}", "d32", (r,),
                     lambda a, w=w, sg=sg: C.bfind(a, w, sg, True)),
            ]
        out += [
            Form(f"bfi.b{w}", f"d{w}", (r, r, "r32", "r32"),
                 lambda a, b, p, n, w=w: C.bfi(a, b, p, n, w)),
            Form(f"popc.b{w}", "d32", (r,), lambda a, w=w: C.popc(a, w)),
            Form(f"clz.b{w}", "d32", (r,), lambda a, w=w: C.clz(a, w)),
            Form(f"brev.b{w}", f"d{w}", (r,), lambda a, w=w: C.brev(a, w)),
        ]
    for mode in ("clamp", "wrap"):
        cl = mode == "clamp"
        out += [
            Form(f"szext.{mode}.u32", "d32", ("r32", "r32"),
                 lambda a, b, cl=cl: C.szext(a, b, cl, False)),
            Form(f"szext.{mode}.s32", "d32", ("r32", "r32"),
                 lambda a, b, cl=cl: C.szext(a, b, cl, True)),
            Form(f"bmsk.{mode}.b32", "d32", ("r32", "r32"), lambda a, b, cl=cl: C.bmsk(a, b, cl)),
        ]
        for d in ("l", "r"):
            out.append(Form(f"shf.{d}.{mode}.b32", "d32", ("r32", "r32", "r32"),
                            lambda a, b, c, left=d == "l", cl=cl: C.shf(a, b, c, left, cl)))
    return out


def packed_forms() -> list[Form]:
    """Dot products, fns, lop3, clmad, prmt."""
    out = []
    for ta in ("u32", "s32"):
        for tb in ("u32", "s32"):
            sa, sb = ta[0] == "s", tb[0] == "s"
            out.append(Form(f"dp4a.{ta}.{tb}", "d32", ("r32", "r32", "r32"),
                            lambda a, b, c, sa=sa, sb=sb: C.dp4a(a, b, c, sa, sb)))
            for mode in ("lo", "hi"):
                out.append(Form(f"dp2a.{mode}.{ta}.{tb}", "d32", ("r32", "r32", "r32"),
                                lambda a, b, c, sa=sa, sb=sb, hi=mode == "hi":
                                C.dp2a(a, b, c, sa, sb, hi)))
    out += [
        Form("fns.b32", "d32", ("r32", "r32", "r32"), C.fns),
        Form("lop3.b32", "d32", ("r32", "r32", "r32", "lut"), C.lop3),
        Form("lop3.or.b32", "dp32", ("r32", "r32", "r32", "lut", "p"),
             lambda a, b, c, lut, q: (C.lop3(a, b, c, lut), int(C.lop3(a, b, c, lut) != 0) | q)),
        Form("lop3.and.b32", "dp32", ("r32", "r32", "r32", "lut", "!p"),
             lambda a, b, c, lut, q: (C.lop3(a, b, c, lut), int(C.lop3(a, b, c, lut) != 0) & q)),
        Form("clmad.lo.u64", "d64", ("r64", "r64", "r64"), lambda a, b, c: C.clmad(a, b, c, False)),
        Form("clmad.hi.u64", "d64", ("r64", "r64", "r64"), lambda a, b, c: C.clmad(a, b, c, True)),
        Form("prmt.b32", "d32", ("r32", "r32", "r32"), lambda a, b, c: C.prmt(a, b, c, None)),
    ]
    for mode in C.PRMT_TABLE:
        out.append(Form(f"prmt.b32.{mode}", "d32", ("r32", "r32", "r32"),
                        lambda a, b, c, m=mode: C.prmt(a, b, c, m)))
    return out


def compare_forms() -> list[Form]:
    out = []
    for t in INT + ("b32",):
        w, sg = wid(t), t[0] == "s"
        r = f"r{w}"
        for op in CMP if t[0] != "b" else ("eq", "ne"):
            out.append(Form(f"setp.{op}.{t}", "pq", (r, r),
                            lambda a, b, op=op, w=w, sg=sg: (C.compare(op, a, b, w, sg),
                                                             1 - C.compare(op, a, b, w, sg))))
        for bop in ("and", "or", "xor"):
            for neg in ("p", "!p"):
                out.append(Form(f"setp.lt.{bop}.{t}", "pq", (r, "i" + str(w), neg),
                                lambda a, b, c, bop=bop, w=w, sg=sg: (
                                    C.boolop(bop, C.compare("lt", a, b, w, sg), c),
                                    C.boolop(bop, 1 - C.compare("lt", a, b, w, sg), c))))
        out += [
            Form(f"set.ge.u32.{t}", "d32", (r, r),
                 lambda a, b, w=w, sg=sg: 0xFFFFFFFF if C.compare("ge", a, b, w, sg) else 0),
            Form(f"set.ne.or.s32.{t}", "d32", (r, r, "p"),
                 lambda a, b, c, w=w, sg=sg: 0xFFFFFFFF if C.compare("ne", a, b, w, sg) | c else 0),
            Form(f"set.lt.f32.{t}", "d32", (r, r),
                 lambda a, b, w=w, sg=sg: 0x3F800000 if C.compare("lt", a, b, w, sg) else 0),
            Form(f"selp.{t}", f"d{w}", (r, r, "p"), lambda a, b, c: a if c else b),
            Form(f"slct.{t}.s32", f"d{w}", (r, r, "r32"),
                 lambda a, b, c: a if C.sv(c, 32) >= 0 else b),
        ]
    out += [
        Form("and.pred", "p", ("p", "p"), lambda a, b: a & b),
        Form("or.pred", "p", ("p", "!p"), lambda a, b: a | b),
        Form("xor.pred", "p", ("p", "p"), lambda a, b: a ^ b),
        Form("not.pred", "p", ("p",), lambda a: 1 - a),
    ]
    return out


def convert_move_forms() -> list[Form]:
    out = []
    types = ("u8", "s8") + INT
    for to in types:
        for fr in types:
            fw, fs, tw, ts = wid(fr), fr[0] == "s", wid(to), to[0] == "s"
            for sat in ("", ".sat"):
                out.append(Form(f"cvt{sat}.{to}.{fr}", f"d{tw}", (f"r{max(fw, 16)}",),
                                lambda a, fw=fw, fs=fs, tw=tw, ts=ts, sat=bool(sat):
                                C.cvt(a, fw, fs, tw, ts, sat)))
    for ct in ("u16", "s16"):
        out.append(Form(f"cvt.pack.sat.{ct}.s32", "d32", ("r32", "r32"),
                        lambda a, b, ct=ct: C.cvt_pack(a, b, 0, 16, ct[0] == "s")))
    for ct in ("u8", "s8", "u4", "s4", "u2", "s2"):
        out.append(Form(f"cvt.pack.sat.{ct}.s32.b32", "d32", ("r32", "r32", "r32"),
                        lambda a, b, c, ct=ct: C.cvt_pack(a, b, c, wid(ct), ct[0] == "s")))
    out += [
        Form("mov.b32", "d32", ("r32",), lambda a: a),
        Form("mov.u64", "d64", ("r64",), lambda a: a),
        Form("mov.b64", "d64", ("v32x2",), lambda v: v[0] | v[1] << 32),
        Form("mov.b32", "d32", ("v16x2",), lambda v: v[0] | v[1] << 16),
        Form("mov.b64", "v32x2", ("r64",), lambda a: (C.u(a, 32), a >> 32)),
        Form("mov.b32", "v16x2", ("r32",), lambda a: (C.u(a, 16), a >> 16)),
        Form("mov.pred", "p", ("p",), lambda a: a),
    ]
    return out


# ---- abstract inputs and their concrete lanes --------------------------------------------------
@dataclass
class Input:
    value: Value
    lanes: list[int]  # one integer per lane; the register holds it modulo 2^w


@st.composite
def number_inputs(draw, w: int, pointer: bool = False, const_only: bool = False) -> Input:
    rnd = draw(st.randoms(use_true_random=False))
    kinds = ["const"] if const_only else \
        ["const", "uniform", "varying", "affine", "affine", "cong"] + ["pointer"] * pointer
    kind = draw(st.sampled_from(kinds))
    if kind == "const":
        x = draw(st.integers(*view_range(w, draw(st.booleans()))) | st.sampled_from([0, 1, -1]))
        return Input(Value.const(x), [x] * LANES)
    if kind in ("uniform", "varying"):
        si = draw(intervals(w, bottom=False))
        if kind == "uniform":
            x = member(si, rnd)
            return Input(Value.of_set(si, True), [x] * LANES)
        return Input(Value.of_set(si), [member(si, rnd) for _ in range(LANES)])
    if kind == "affine":
        base = draw(intervals(w, infinite=False, bottom=False))
        cx = draw(st.sampled_from([SI.const(c) for c in (-4, -1, 1, 2, 3, 4, 8, 16)]
                                  + [SI.range(1, 4), SI.range(0, 8, 4)]))
        cl = draw(st.integers(-2, 2))
        aff = Affine(base, (("tid.x", cx), ("laneid", SI.const(cl))))
        b0, c0 = member(base, rnd), member(cx, rnd)
        return Input(Value.of_affine(aff, BOUNDS), [b0 + (c0 + cl) * i for i in range(LANES)])
    if kind == "cong":
        k = draw(st.integers(1, min(w, 9)))
        r = draw(st.integers(0, (1 << k) - 1))
        v = Value(SI.top(), Affine.top(), Congruence(k, r)).reduce()
        return Input(v, [r + (rnd.randrange(-(1 << w), 1 << w) << k) for _ in range(LANES)])
    off = draw(number_inputs(64, const_only=False))
    v = Value(off.value.si, off.value.aff, off.value.cong, BUF)
    return Input(v, [BUF_BASE + o for o in off.lanes])


@st.composite
def pred_inputs(draw, const_only: bool = False) -> Input:
    rnd = draw(st.randoms(use_true_random=False))
    kind = draw(st.sampled_from(["0", "1"] if const_only else ["0", "1", "uniform", "varying"]))
    if kind in ("0", "1"):
        return Input(Value.const(int(kind)), [int(kind)] * LANES)
    if kind == "uniform":
        return Input(Value.of_set(SI.range(0, 1), True), [rnd.randrange(2)] * LANES)
    return Input(Value.of_set(SI.range(0, 1)), [rnd.randrange(2) for _ in range(LANES)])


# ---- building and running one form ------------------------------------------------------------
def reg(name: str) -> Register:
    return Register(name, name)


def _vec(spec: str) -> tuple[int, int]:
    w, n = spec[1:].split("x")
    return int(w), int(n)


def _dest(spec: str) -> tuple[object, list[tuple[str, int]]]:
    """The destination operand and its (key, width) parts."""
    if spec == "pq":
        return PredicatePair(reg("%p"), reg("%q")), [("%p", 1), ("%q", 1)]
    if spec == "p":
        return reg("%p"), [("%p", 1)]
    if spec.startswith("dp"):
        return PredicatePair(reg("%d"), reg("%p")), [("%d", int(spec[2:])), ("%p", 1)]
    if spec.startswith("v"):
        w, n = _vec(spec)
        keys = [f"%d{i}" for i in range(n)]
        return Vector(tuple(reg(k) for k in keys)), [(k, w) for k in keys]
    return reg("%d"), [("%d", int(spec[1:]))]


def _source(draw, spec: str, name: str, state: State, regs: dict, const_only: bool):
    """Draw one source: (operand, per-lane bits as the reference reads them)."""
    if spec in ("p", "!p"):
        x = draw(pred_inputs(const_only))
        state.assign(name, x.value)
        regs[name] = x.lanes
        if spec == "p":
            return reg(name), x.lanes
        return Negated(reg(name)), [1 - v for v in x.lanes]
    if spec == "lut":
        lut = draw(st.integers(0, 255) | st.sampled_from([0xF0, 0xCC, 0xAA, 0xC0, 0x3C, 0xFC,
                                                            0x0F, 0x30, 0xE8]))
        return Immediate(lut, hex(lut)), [lut] * LANES
    if spec[0] == "i":
        x = draw(number_inputs(int(spec[1:]), const_only=True)).lanes[0]
        return Immediate(x, str(x)), [x] * LANES
    if spec[0] == "v":
        w, n = _vec(spec)
        elems = []
        for i in range(n):
            x = draw(number_inputs(w, const_only=const_only))
            state.assign(f"{name}_{i}", x.value)
            elems.append(x.lanes)
        vec = Vector(tuple(reg(f"{name}_{i}") for i in range(n)))
        return vec, [tuple(C.u(e[j], w) for e in elems) for j in range(LANES)]
    w = int(spec[1:])
    x = draw(number_inputs(w, pointer=w == 64 and not const_only, const_only=const_only))
    state.assign(name, x.value)
    regs[name] = x.lanes
    return reg(name), [C.u(v, w) for v in x.lanes]


@st.composite
def scenarios(draw, forms: list[Form], const_only: bool = False):
    """A form, its instruction, the state before, the concrete sources per lane, the
    destination parts and the concrete lanes of each source register."""
    form = draw(st.sampled_from(forms))
    cls, opcode, mods = resolve(form.text)
    state, operands, per_source, regs = State(), [], [], {}
    for k, spec in enumerate(form.srcs):
        op, lanes = _source(draw, spec, f"%s{k}", state, regs, const_only)
        operands.append(op)
        per_source.append(lanes)
    if form.cc_in:
        x = draw(pred_inputs(const_only))
        state.assign(arith.CARRY, x.value)
        per_source.append(x.lanes)
    dest, parts = _dest(form.dest)
    insn = cls(opcode, mods, None, (dest, *operands))
    return form, insn, state, per_source, parts, regs


def expected(form: Form, per_source: list[list], parts) -> list[list[int | None]]:
    """Per destination part (and CC.CF), the concrete result of each lane."""
    n = len(parts) + form.cc_out
    out: list[list[int | None]] = [[] for _ in range(n)]
    for lane in range(LANES):
        r = form.ref(*(src[lane] for src in per_source))
        r = r if isinstance(r, tuple) else (r,)
        if len(r) == 1 and n > 1 and r[0] is None:
            r = (None,) * n
        for i in range(n):
            out[i].append(None if r[i] is None else int(r[i]))
    return out


def holds_bits(si: SI, x: int, w: int) -> bool:
    return not si.meet(SI.congruent(C.u(x, w), 1 << w)).is_bottom


def check_covers(v: Value, lanes: list[int | None], w: int, what: str) -> None:
    """Every concrete lane value is described by v (see the module docstring)."""
    assert not v.is_bottom, f"{what}: bottom result"
    if v.region is not None:
        assert v.region == BUF, f"{what}: unexpected region {v.region}"
        lanes = [None if x is None else x - BUF_BASE for x in lanes]
    k = min(v.cong.bits, w)
    residuals = set()
    coeffs = None if v.aff.is_top else [(n, c.singleton()) for n, c in v.aff.coeffs]
    for lane, x in enumerate(lanes):
        if x is None:
            continue
        assert holds_bits(v.si, x, w), f"{what}: lane {lane} = {C.u(x, w):#x} not in {v.si}"
        assert (x - v.cong.residue) % (1 << k) == 0, f"{what}: lane {lane} not in {v.cong}"
        if coeffs is None:
            continue
        if all(c is not None for _, c in coeffs):
            rest = x - sum(c * lane for _, c in coeffs)
            assert holds_bits(v.aff.base, rest, w), f"{what}: lane {lane} vs form {v.aff}"
            residuals.add(C.u(rest, w))
        else:
            assert holds_bits(v.aff.evaluate((lane, 0, 0), lane), x, w), \
                f"{what}: lane {lane} vs form {v.aff}"
    assert len(residuals) <= 1, f"{what}: form {v.aff} has a non-uniform base {residuals}"
    if v.is_uniform:
        seen = {C.u(x, w) for x in lanes if x is not None}
        assert len(seen) <= 1, f"{what}: claims uniform, lanes differ: {sorted(seen)[:4]}"


def check_link(s: State, key: str, link: Link, lanes: list[int | None], regs: dict) -> None:
    """The relation an instruction establishes (`links.link_of`, judged after it ran) must
    hold in every lane: R(d) - k*R(x) - kb*R(y) in off, reading the registers in the
    link's views (pointers: their offsets into the buffer)."""

    def reading(x: int, reg_key: str, w: int, signed: bool) -> int:
        if s[reg_key].region is not None:
            x -= BUF_BASE
        return C.rd(x, w, signed)

    xs = regs[link.a]
    bs = regs[link.b] if link.b is not None else None
    for lane, d in enumerate(lanes):
        if d is None:
            continue
        rest = reading(d, key, link.w, link.signed) - \
            link.k * reading(xs[lane], link.a, link.xw, link.xsigned)
        if bs is not None:
            rest -= link.kb * reading(bs[lane], link.b, link.w, link.bsigned)
        assert link.off.contains(rest), f"{key}: link {link} wrong in lane {lane}: {rest}"


def check_condition(s: State, key: str, lanes: list[int | None], regs: dict) -> None:
    """A recorded Condition must give the predicate's value in every lane."""
    cond = s.conds.get(key)
    if cond is None or isinstance(cond, Link) or cond.is_float:  # links: `check_link`
        return
    for lane in range(LANES):
        val = lambda x: x if isinstance(x, int) else regs[x][lane]  # noqa: E731
        if cond.op in ("and", "or"):  # a connective of two predicates
            t = C.boolop(cond.op, val(cond.a) & 1, val(cond.b) & 1)
            assert t ^ cond.negated == lanes[lane], f"{key}: {cond} wrong in lane {lane}"
            continue
        t = int(C.compare(cond.op, C.u(val(cond.a), cond.width), C.u(val(cond.b), cond.width),
                          cond.width, cond.signed))
        if cond.combine is not None:
            t = C.boolop(cond.combine, t, regs[cond.other][lane] ^ cond.other_negated)
        assert t ^ cond.negated == lanes[lane], f"{key}: {cond} wrong in lane {lane}"


def run_scenario(scenario) -> tuple[Form, State, list, list]:
    form, insn, state, per_source, parts, _ = scenario
    transfer_for(type(insn))(insn, state, CTX)
    want = expected(form, per_source, parts)
    keys = parts + ([(arith.CARRY, 1)] if form.cc_out else [])
    return form, state, want, keys


def _sound(scenario) -> None:
    form, state, want, keys = run_scenario(scenario)
    for (key, w), lanes in zip(keys, want):
        check_covers(state[key], lanes, w, f"{form!r} {key}")
    for (key, _), lanes in zip(keys, want):
        check_condition(state, key, lanes, scenario[5])
    link = link_of(scenario[1], state, CTX)
    if link is not None:
        check_link(state, keys[0][0], link, want[0], scenario[5])


FAST = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ARITH, CARRY, BITS = arith_forms(), carry_forms(), bit_forms()
COMPARE, CONVERT = compare_forms(), convert_move_forms()


@FAST
@given(scenarios(ARITH + CARRY))
def test_arith_transfer_is_sound(scenario):
    _sound(scenario)


@FAST
@given(scenarios(BITS))
def test_bit_transfer_is_sound(scenario):
    _sound(scenario)


@FAST
@given(scenarios(COMPARE))
def test_compare_transfer_is_sound(scenario):
    _sound(scenario)


@FAST
@given(scenarios(CONVERT))
def test_convert_and_move_transfer_is_sound(scenario):
    _sound(scenario)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(ARITH + CARRY + BITS + COMPARE + CONVERT, const_only=True))
def test_constant_inputs_give_the_exact_constant(scenario):
    form, state, want, keys = run_scenario(scenario)
    for (key, w), lanes in zip(keys, want):
        if lanes[0] is None:
            continue
        got = state[key]
        assert got.region is None and got.is_uniform, f"{form!r}: {got}"
        x = got.si.singleton()
        assert x is not None and C.u(x, w) == C.u(lanes[0], w), \
            f"{form!r} {key}: {got.si} != {C.u(lanes[0], w):#x}"


def _constant(rnd: random.Random, w: int) -> int:
    edges = [0, 1, 2, 3, 31, 32, 33, 255, -1, -2, 1 << (w - 1), (1 << (w - 1)) - 1]
    return rnd.choice(edges) if rnd.random() < 0.5 else rnd.getrandbits(w)


def constant_scenario(form: Form, rnd: random.Random):
    """`scenarios` with constant sources drawn from `rnd` (deterministic sweeps)."""
    cls, opcode, mods = resolve(form.text)
    state, operands, per_source = State(), [], []
    for k, spec in enumerate(form.srcs):
        name = f"%s{k}"
        if spec in ("p", "!p"):
            x = rnd.randrange(2)
            state.assign(name, Value.const(x))
            operands.append(reg(name) if spec == "p" else Negated(reg(name)))
            per_source.append([x if spec == "p" else 1 - x] * LANES)
        elif spec == "lut":
            x = rnd.randrange(256)
            operands.append(Immediate(x, hex(x)))
            per_source.append([x] * LANES)
        elif spec[0] == "v":
            w, n = _vec(spec)
            xs = tuple(C.u(_constant(rnd, w), w) for _ in range(n))
            for i, x in enumerate(xs):
                state.assign(f"{name}_{i}", Value.const(x))
            operands.append(Vector(tuple(reg(f"{name}_{i}") for i in range(n))))
            per_source.append([xs] * LANES)
        else:
            w = int(spec[1:])
            x = _constant(rnd, w)
            if spec[0] == "i":
                operands.append(Immediate(x, str(x)))
            else:
                state.assign(name, Value.const(x))
                operands.append(reg(name))
            per_source.append([C.u(x, w)] * LANES)
    if form.cc_in:
        x = rnd.randrange(2)
        state.assign(arith.CARRY, Value.const(x))
        per_source.append([x] * LANES)
    dest, parts = _dest(form.dest)
    return form, cls(opcode, mods, None, (dest, *operands)), state, per_source, parts, {}


ALL_FORMS = ARITH + CARRY + BITS + COMPARE + CONVERT


@pytest.mark.parametrize("form", ALL_FORMS, ids=repr)
def test_every_form_is_exact_on_constants(form):
    rnd = random.Random(form.text)
    for _ in range(6):
        test_constant_inputs_give_the_exact_constant.hypothesis.inner_test(
            constant_scenario(form, rnd))


# ---- addresses as nvcc computes them -----------------------------------------------------------
def test_mad_wide_with_a_pointer_addend_is_an_offset_into_the_buffer():
    s = State({"%rd3": Value.pointer(BUF)})
    s = run("mov.u32 %r1, %tid.x;\n mad.wide.s32 %rd4, %r1, 4, %rd3;", s)
    v = s["%rd4"]
    assert v.region == BUF
    assert v.aff == Affine(SI.const(0), (("tid.x", SI.const(4)),))
    assert v.si == SI.range(0, 4 * 31, 4) and v.cong.is_multiple_of(4)


def test_mad_wide_sign_extends_the_product():
    s = State({"%rd3": Value.pointer(BUF), "%r1": Value.const(-2)})
    assert run("mad.wide.s32 %rd4, %r1, 4, %rd3;", s)["%rd4"].si == SI.const(-8)
    s = State({"%rd3": Value.pointer(BUF), "%r1": Value.const(-2)})
    assert run("mad.wide.u32 %rd4, %r1, 4, %rd3;", s)["%rd4"].si == SI.const(4 * (2**32 - 2))


def test_mul_wide_then_add_keeps_the_form():
    s = State({"%rd1": Value.pointer(BUF)})
    s = run("mov.u32 %r1, %tid.x;\n add.s32 %r2, %r1, -1;\n mul.wide.s32 %rd2, %r2, 8;\n"
            " add.s64 %rd3, %rd1, %rd2;", s)
    v = s["%rd3"]
    assert v.region == BUF and v.aff.stride_of("tid.x") == 8 and v.si.lo == -8


def test_shl_by_a_constant_scales_the_form():
    s = run("mov.u32 %r1, %tid.x;\n shl.b32 %r2, %r1, 2;")
    assert s["%r2"].aff.stride_of("tid.x") == 4 and s["%r2"].si == SI.range(0, 124, 4)


def test_pointer_arithmetic_provenance():
    s = State({"%rd1": Value.pointer(BUF)})
    s = run("add.s64 %rd2, %rd1, 64;\n sub.s64 %rd3, %rd2, %rd1;\n add.s64 %rd4, %rd2, %rd1;\n"
            " sub.u64 %rd5, %rd2, 4;", s)
    assert s["%rd2"].region == BUF and s["%rd2"].si == SI.const(64)
    assert s["%rd3"].region is None and s["%rd3"].si == SI.const(64)
    assert s["%rd4"].region is None
    assert s["%rd5"].region == BUF and s["%rd5"].si == SI.const(60)


def test_shared_window_address_through_cvt():
    s = run("mov.u32 %r1, smem;\n mov.u32 %r2, %tid.x;\n shl.b32 %r3, %r2, 2;\n"
            " add.s32 %r4, %r1, %r3;\n cvt.u64.u32 %rd1, %r4;")
    for key in ("%r4", "%rd1"):
        v = s[key]
        assert v.region == Region("shared", "smem") and v.aff.stride_of("tid.x") == 4


# ---- uniformity ------------------------------------------------------------------------------
def test_uniformity_of_bit_operations_and_sums():
    s = State({"%r5": UNIFORM_TOP, "%r6": Value.of_set(SI.range(0, 9), True)})
    s = run("mov.u32 %r1, %tid.x;\n and.b32 %r2, %r1, 3;\n add.s32 %r3, %r5, %r6;\n"
            " and.b32 %r4, %r5, %r6;\n and.b32 %r7, %r1, 0;", s)
    assert not s["%r2"].is_uniform and s["%r2"].si == SI.range(0, 3)
    assert s["%r3"].is_uniform and s["%r4"].is_uniform
    assert s["%r7"].si == SI.const(0) and s["%r7"].is_uniform


def test_not_keeps_the_form_and_cvt_truncation_only_when_it_fits():
    s = run("mov.u32 %r1, %tid.x;\n not.b32 %r2, %r1;\n cvt.u16.u32 %r3, %r1;\n"
            " cvt.u8.u32 %r4, %r2;")
    assert s["%r2"].aff.stride_of("tid.x") == -1
    assert s["%r3"].aff.stride_of("tid.x") == 1
    assert s["%r4"].aff.stride_of("tid.x") == -1  # 255 - tid.x fits in a byte


def test_float_arithmetic_keeps_only_uniformity():
    s = State({"%f2": UNIFORM_TOP, "%f3": UNIFORM_TOP, "%f4": TOP})
    s = run("mov.f32 %f1, 0f3F800000;\n add.f32 %f5, %f2, %f3;\n fma.rn.f32 %f6, %f2, %f3, %f4;\n"
            " sqrt.rn.f32 %f7, %f1;\n cvt.rn.f32.s32 %f0, %r1;", s)
    assert s["%f1"].si == SI.const(0x3F800000)
    assert s["%f5"] == UNIFORM_TOP and s["%f6"].is_top and s["%f7"] == UNIFORM_TOP
    assert s["%f0"].is_top  # %r1 was never written: varying


# ---- predicates ----------------------------------------------------------------------------------
def test_setp_records_conditions():
    s = run("mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1|%p2, %r1, 5;\n"
            " setp.ge.and.s32 %p3|%p4, %r1, %r2, !%p1;\n not.pred %p5, %p1;")
    c = s.conds["%p1"]
    assert (c.op, c.a, c.b, c.width, c.signed, c.negated) == ("lt", "%r1", 5, 32, False, False)
    assert s.conds["%p2"] == c.inverted() and s.conds["%p5"] == c.inverted()
    c3 = s.conds["%p3"]
    assert (c3.combine, c3.other, c3.other_negated) == ("and", "%p1", True)
    assert "%p4" not in s.conds  # !(a >= b) and !p1 is no negation of p3
    assert not s["%p1"].is_uniform and s["%p1"].si == SI.range(0, 1)


def test_setp_of_known_values_is_decided_and_uniform():
    s = State({"%r2": Value.of_set(SI.range(0, 9), True)})
    s = run("mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 40;\n setp.hi.u32 %p2, %r2, 9;\n"
            " setp.lt.s32 %p3, %r2, 5;", s)
    assert s["%p1"].si == SI.const(1) and s["%p2"].si == SI.const(0)
    assert s["%p3"].is_uniform and s["%p3"].si == SI.range(0, 1)


def test_float_compare_of_constants():
    s = run("mov.f32 %f1, 0f3F800000;\n mov.f32 %f2, 0f7FC00000;\n"
            " setp.lt.f32 %p1, %f1, 0f40000000;\n setp.lt.f32 %p2, %f1, %f2;\n"
            " setp.ltu.f32 %p3, %f1, %f2;\n setp.nan.f32 %p4, %f1, %f2;\n"
            " setp.gt.f32 %p5, %f1, %f3;")
    assert [s[f"%p{i}"].si.singleton() for i in range(1, 5)] == [1, 0, 1, 1]
    assert s["%p5"].si == SI.range(0, 1)


def test_selp_with_a_varying_predicate_is_varying():
    s = State({"%r2": Value.const(4), "%r3": Value.const(8)})
    s = run("mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 5;\n selp.b32 %r4, %r2, %r3, %p1;\n"
            " selp.b32 %r5, %r2, %r2, %p1;\n setp.lt.u32 %p2, %r2, %r3;\n"
            " selp.b32 %r6, %r2, %r3, %p2;", s)
    assert not s["%r4"].is_uniform and s["%r4"].si == SI.range(4, 8, 4)
    assert s["%r5"] == Value.const(4) and s["%r6"] == Value.const(4)


# ---- carries, moves, shuffles -----------------------------------------------------------------
def test_carry_chain_adds_64_bit_numbers():
    a, b = 0x1_FFFF_FFFF, 0x2_0000_0001
    s = State({"%r1": Value.const(a & 0xFFFFFFFF), "%r2": Value.const(a >> 32),
               "%r3": Value.const(b & 0xFFFFFFFF), "%r4": Value.const(b >> 32)})
    s = run("add.cc.u32 %r5, %r1, %r3;\n addc.u32 %r6, %r2, %r4;\n mov.b64 %rd1, {%r5, %r6};", s)
    assert s["%rd1"].si == SI.const(a + b)


def test_borrow_chain_subtracts_64_bit_numbers():
    a, b = 0x3_0000_0000, 0x1_0000_0001
    s = State({"%r1": Value.const(a & 0xFFFFFFFF), "%r2": Value.const(a >> 32),
               "%r3": Value.const(b & 0xFFFFFFFF), "%r4": Value.const(b >> 32)})
    s = run("sub.cc.u32 %r5, %r1, %r3;\n subc.u32 %r6, %r2, %r4;\n mov.b64 %rd1, {%r5, %r6};", s)
    assert s["%rd1"].si == SI.const(a - b)


def test_pack_and_unpack_keep_the_low_form():
    s = run("mov.u32 %r1, %tid.x;\n mov.b64 %rd1, {%r1, %r2};\n mov.b64 {%r3, %r4}, %rd1;",
            State({"%r2": UNIFORM_TOP}))
    assert s["%rd1"].aff.stride_of("tid.x") == 1
    assert s["%r3"].aff.stride_of("tid.x") == 1 and not s["%r4"].is_uniform


def test_shfl_results_vary():
    """Another lane's value: unknown and varying (a lane that reads past the segment
    keeps its own, so even a constant source may not come through)."""
    s = State({"%r2": Value.const(3)})
    for text in ("shfl.sync.down.b32 %r1|%p1, %r2, 1, 31, -1;",
                 "shfl.sync.idx.b32 %r1|%p1, %r2, 0, 0x101f, -1;",  # width 16: per half
                 "shfl.sync.idx.b32 %r1|%p1, %r2, %laneid, 31, -1;"):
        out = run(text, s)
        assert out["%r1"].is_top and out["%p1"].is_top, text


def test_shfl_broadcast_is_uniform():
    """`__shfl_sync(mask, v, 0)`: every lane reads lane 0 (`warp_uniform.broadcast`)."""
    s = run("shfl.sync.idx.b32 %r1|%p1, %r2, 0, 31, -1;", State({"%r2": Value.top()}))
    assert s["%r1"].is_uniform and s["%p1"].singleton() == 1


@pytest.mark.parametrize("text, want", [
    ("bfe.u32 %r1, 0xABCD1234, 8, 8;", 0x12),
    ("bfe.s32 %r1, 0x0000F000, 12, 4;", -1),
    ("bfi.b32 %r1, 0xF, 0, 4, 4;", 0xF0),
    ("prmt.b32 %r1, 0x33221100, 0x77665544, 0x7531;", 0x77553311),
    ("prmt.b32 %r1, 0x000000F0, 0, 0x8880;", 0xFFFFFFF0),
    ("fns.b32 %r1, 0xaaaaaaaa, 2, -1;", 1),
    ("bmsk.wrap.b32 %r1, 1, 2;", 6),
    ("szext.wrap.u32 %r1, 0xffffffff, 0;", 0),
    ("bfind.shiftamt.u32 %r1, 1;", 31),
    ("lop3.b32 %r1, 0xF0, 0xCC, 0xAA, 0x96;", 0xF0 ^ 0xCC ^ 0xAA),
    ("dp4a.u32.s32 %r1, 0x01010101, 0xFFFFFFFF, 10;", 6),
    ("cvt.pack.sat.u8.s32.b32 %r1, 300, -5, 0xAB;", 0xABFF00),
    ("shf.l.wrap.b32 %r1, 0x80000000, 1, 1;", 3),
])
def test_isa_examples(text, want):
    v = run(text)["%r1"]
    assert v.si.singleton() is not None and C.u(v.si.singleton(), 32) == C.u(want, 32)
