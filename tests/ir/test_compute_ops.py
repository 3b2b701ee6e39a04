"""The computational opcode families: integer, floating point, comparison, logic,
conversion and register movement (ptxlint/ir/instructions/{integer,floating,compare,
logic,convert,move}.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxlint.ir.instruction import Guard, Instruction
from ptxlint.ir.operands import (Expression, Immediate, Negated, PredicatePair, Register,
                                 Sink, Symbol, Vector)
from ptxlint.ir.registry import REGISTRY, all_opcodes, resolve

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ("integer", "floating", "compare", "logic", "convert", "move")
PACKAGE = "ptxlint.ir.instructions."

OURS = sorted({
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min",
    "max", "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "szext", "bmsk", "dp4a",
    "dp2a", "addc", "subc", "madc", "clmad",
    "fma", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "copysign", "testp",
    "set", "setp", "selp", "slct",
    "and", "or", "xor", "not", "cnot", "lop3", "shf", "shl", "shr",
    "cvt", "cvt.pack",
    "mov", "shfl", "shfl.sync", "prmt",
})


def r(name: str) -> Register:
    return Register(name, name)


def imm(value: int | float) -> Immediate:
    return Immediate(value, str(value))


def make(full_opcode: str, *operands, guard: Guard | None = None) -> Instruction:
    hit = resolve(full_opcode)
    assert hit is not None, full_opcode
    cls, opcode, mods = hit
    return cls(opcode, mods, guard, tuple(operands))


def names(regs) -> list[str]:
    return [x.name for x in regs]


# --- registry and class hygiene -------------------------------------------------------

def our_classes() -> dict[str, type[Instruction]]:
    all_opcodes()  # loads every instruction module
    return {op: cls for op, cls in REGISTRY.items()
            if cls.__module__.removeprefix(PACKAGE) in FAMILIES}


def test_registers_exactly_our_opcodes():
    assert sorted(our_classes()) == OURS


@pytest.mark.parametrize("opcode", OURS)
def test_class_hygiene(opcode):
    cls = our_classes()[opcode]
    doc = (cls.__doc__ or "").strip()
    assert doc and "\n" not in doc, f"{cls.__name__}: needs a one-line docstring"
    assert doc.split()[0].startswith(opcode), doc  # the summary starts with the syntax
    assert cls.allowed_mods is not None and cls.allowed_mods
    assert all("." not in m and m for m in cls.allowed_mods), cls.allowed_mods
    for klass in cls.__mro__[:-1]:
        if issubclass(klass, Instruction):
            assert vars(klass).get("__slots__") in ((), ("opcode", "mods", "guard",
                                                         "operands", "span", "loc",
                                                         "_keys")), klass
    lo, hi = cls.arity
    assert 1 <= lo <= (hi if hi is not None else lo)
    assert cls.n_dests == 1


def test_instances_have_no_dict():
    ins = make("add.s32", r("%r1"), r("%r2"), imm(1))
    assert not hasattr(ins, "__dict__")


# --- every modifier the ISA documents is accepted ----------------------------------------

# Forms from the PTX ISA 9.x syntax tables and examples (most also checked with ptxas).
ISA_FORMS = """
add.u16 add.s64 add.sat.s32 add.u16x2 add.s8x4.sat add.sat.u8x4 add.cc.u32 add.cc.s64
add.rz.ftz.f32 add.rp.ftz.f32x2 add.rn.f64 add.rn.sat.f16 add.ftz.f16x2 add.rn.bf16x2
add.rz.f32.bf16.sat add.rn.f32x2.f16x2.f32x2 add.rz.ftz.f16x2.f32x2.f32x2
add.rz.bf16x2.f32x2.f32x2 add.rn.e5m2x4.e4m3x4.satfinite add.rn.e4m3x4.e2m1p4x4
add.rn.e4m3x4.ue8m0x4
sub.s32 sub.u8x4 sub.sat.s8x4 sub.cc.u64 sub.rn.ftz.f32 sub.sat.f32 sub.rm.f64
sub.rn.bf16 sub.ftz.sat.f16x2 sub.rz.f32.f16.sat sub.rn.e5m2x4.e2m3x4.satfinite
mul.wide.s16 mul.lo.s16 mul.hi.u64 mul.wide.u32 mul.ftz.f32 mul.rn.sat.f32 mul.rz.f32x2
mul.rp.f64 mul.rn.bf16 mul.sat.f16x2 mul.ftz.rz.f16x2.f32x2.f32x2 mul.rz.bf16x2.f32x2.f32x2
mul.bf16x2.bf16x2.f16x2 mul.rn.e5m2x4.e3m2x4.e2m1x4.satfinite mul.rn.e4m3x4.ue8m0x4.e5m2x4
mad.lo.s32 mad.hi.sat.s32 mad.wide.u16 mad.lo.cc.u32 mad.hi.cc.s64 mad.rn.ftz.sat.f32
mad.f32 mad.rz.f64
mul24.lo.s32 mul24.hi.u32 mad24.lo.s32 mad24.hi.sat.s32 sad.s32 sad.u64
div.s32 div.u64 div.approx.ftz.f32 div.full.ftz.f32 div.rn.f64 div.rz.ftz.f32
rem.s32 rem.u16 abs.s32 abs.ftz.f32 abs.f64 abs.ftz.f16x2 abs.bf16
neg.s32 neg.s8x4 neg.ftz.f32 neg.f64 neg.ftz.f16 neg.bf16x2
min.s32 min.u16 min.s16x2.relu min.u8x4 min.relu.s8x4 min.ftz.f32 min.NaN.f32
min.xorsign.abs.f32 min.ftz.NaN.abs.f32 min.f64 min.ftz.NaN.xorsign.abs.f16x2
min.NaN.bf16x2 min.xorsign.abs.bf16
max.u32 max.relu.s16x2 max.u8x4 max.ftz.f32 max.NaN.f32 max.xorsign.abs.f32 max.f64
max.NaN.f16x2 max.bf16
popc.b32 popc.b64 clz.b32 clz.b64 bfind.u32 bfind.shiftamt.s64 fns.b32 brev.b32 brev.b64
bfe.u32 bfe.s64 bfi.b32 bfi.b64 szext.clamp.s32 szext.wrap.u32 bmsk.clamp.b32 bmsk.wrap.b32
dp4a.u32.u32 dp4a.u32.s32 dp2a.lo.u32.u32 dp2a.hi.u32.s32
addc.u32 addc.cc.u32 addc.cc.s64 subc.u32 subc.cc.s64 madc.hi.u32 madc.hi.cc.u32
madc.lo.cc.u64 clmad.lo.u64 clmad.hi.u64
fma.rn.ftz.f32 fma.rn.f64 fma.rp.ftz.f32x2 fma.rn.sat.f32 fma.rn.f16 fma.rn.relu.f16
fma.rn.oob.f16 fma.rn.oob.relu.f16 fma.rn.bf16 fma.rn.relu.bf16 fma.rn.oob.relu.bf16x2
fma.rn.ftz.sat.f16x2 fma.rz.sat.f32.f16.sat fma.rn.f32x2.f16x2.f32x2.f32x2
fma.rn.e5m2x4.ue8m0x4.e2m1p4x4.satfinite fma.rn.e4m3x4.e3m2x4.e2m1x4.satfinite
rcp.approx.ftz.f32 rcp.rn.ftz.f32 rcp.rn.f64 rcp.approx.ftz.f64 rcp.rz.f64
sqrt.approx.ftz.f32 sqrt.rn.ftz.f32 sqrt.rn.f64 sqrt.rm.f64
rsqrt.approx.ftz.f32 rsqrt.approx.f64 rsqrt.approx.ftz.f64
sin.approx.ftz.f32 cos.approx.ftz.f32 lg2.approx.ftz.f32 ex2.approx.ftz.f32
ex2.approx.f16 ex2.approx.f16x2 ex2.approx.ftz.bf16 ex2.approx.ftz.bf16x2
tanh.approx.f32 tanh.approx.f16 tanh.approx.f16x2 tanh.approx.bf16 tanh.approx.bf16x2
copysign.f32 copysign.f64 testp.notanumber.f32 testp.infinite.f64 testp.finite.f32
testp.number.f64 testp.normal.f32 testp.subnormal.f64
set.lt.and.f32.s32 set.eq.u32.u32 set.ge.s16x2 set.lo.u8x4 set.gtu.ftz.s32.f32
set.lt.and.f16.f16 set.eq.f16x2.f16x2 set.eq.u32.f16x2 set.lt.and.u16.f16
set.ltu.or.bf16.f16 set.equ.bf16x2.bf16x2 set.geu.s32.bf16x2 set.num.xor.s32.bf16
set.nan.ftz.f16.f32 set.nan.f16.f64
setp.lt.and.s32 setp.eq.u32 setp.hs.u64 setp.ne.b16 setp.gtu.ftz.f32 setp.num.f64
setp.lt.and.f16x2 setp.eq.f16 setp.gt.or.bf16x2 setp.eq.bf16 setp.leu.xor.ftz.f16
selp.s32 selp.f32 selp.b16 selp.u64 selp.f64
slct.u32.s32 slct.ftz.u64.f32 slct.b16.s32 slct.f64.f32
and.b32 and.pred and.b16 or.b64 or.pred xor.b32 xor.pred not.b32 not.pred cnot.b32 cnot.b16
lop3.b32 lop3.or.b32 lop3.and.b32 shf.l.clamp.b32 shf.r.wrap.b32 shl.b32 shl.b16 shl.b64
shr.u16 shr.s32 shr.b16 shr.u64
cvt.f32.f16 cvt.rn.f16.f32 cvt.rni.s32.f32 cvt.rzi.ftz.u32.f32 cvt.sat.f32.f32
cvt.ftz.sat.f32.f32 cvt.rmi.f32.f32 cvt.rn.f32.s64 cvt.s8.s32 cvt.sat.u8.s32 cvt.u64.u32
cvt.rn.relu.satfinite.f16x2.f32 cvt.rn.relu.satfinite.pzo.bf16.f32 cvt.rs.relu.satfinite.f16x2.f32
cvt.rna.satfinite.tf32.f32 cvt.rz.satfinite.relu.tf32.f32
cvt.rn.satfinite.e4m3x2.f32 cvt.rn.satfinite.relu.e5m2x2.f16x2
cvt.rn.satfinite.scaled::n1::ue8m0.e4m3x2.f32 cvt.rn.relu.f16x2.e4m3x2
cvt.rn.satfinite.scaled::n2::ue8m0.bf16x2.e5m2x2 cvt.rs.relu.satfinite.e4m3x4.f32
cvt.rn.satfinite.e2m1x2.f32 cvt.rn.f16x2.e2m1x2 cvt.rs.satfinite.e2m1x4.f32
cvt.rn.satfinite.e2m3x2.f32 cvt.rz.satfinite.e3m2x2.bf16x2 cvt.rs.satfinite.e2m3x4.f32
cvt.rz.satfinite.ue8m0x2.f32 cvt.rp.satfinite.ue8m0x2.bf16x2 cvt.rn.bf16x2.ue8m0x2
cvt.rn.satfinite.s2f6x2.f32 cvt.rn.satfinite.relu.bf16x2.s2f6x2
cvt.rp.satfinite.ue5m3x2.f32 cvt.rn.satfinite.scaled::n1::ue8m0.ue5m3x2.f16x2
cvt.rn.f16x2.ue5m3x2 cvt.rn.bf16x2.ue5m3x2
cvt.pack.sat.s16.s32 cvt.pack.sat.u16.s32 cvt.pack.sat.u8.s32.b32 cvt.pack.sat.u4.s32.b32
cvt.pack.sat.s2.s32.b32
mov.f32 mov.u16 mov.pred mov.b128 mov.u64 mov.s64 mov.f64 mov.v2.b64 mov.v4.f32
shfl.up.b32 shfl.bfly.b32 shfl.sync.up.b32 shfl.sync.down.b32 shfl.sync.bfly.b32
shfl.sync.idx.b32
prmt.b32 prmt.b32.f4e prmt.b32.b4e prmt.b32.rc8 prmt.b32.ecl prmt.b32.ecr prmt.b32.rc16
""".split()


def unknown_mods(full_opcode: str) -> list[str]:
    hit = resolve(full_opcode)
    assert hit is not None, full_opcode
    cls, _, mods = hit
    return [m for m in mods if m not in (cls.allowed_mods or ())]


@pytest.mark.parametrize("full_opcode", ISA_FORMS)
def test_isa_form_accepted(full_opcode):
    assert resolve(full_opcode)[1] in OURS
    assert unknown_mods(full_opcode) == []


@pytest.mark.parametrize("full_opcode", [
    "and.u32", "mov.f16", "selp.f16", "shl.u32", "popc.u32", "abs.u32", "sub.u16x2",
    "testp.normal.f16", "add.b32", "setp.eq.pred", "cvt.u32.b32", "shfl.sync.up.u32",
])
def test_forms_the_isa_rejects_are_flagged(full_opcode):
    # ptxas rejects each of these types for the opcode
    assert unknown_mods(full_opcode)


_OPCODE_RE = re.compile(r"^\s*(?:\{\s*)?(?:@!?%?\w+\s+)?([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_:]+)*)")


def _ours(full_opcode: str) -> bool:
    hit = resolve(full_opcode)
    return hit is not None and hit[1] in OURS


def test_opcodes_seen_are_accepted():
    seen = ROOT / "ptx_samples" / "opcodes_seen.txt"
    if not seen.exists():
        pytest.skip("ptx_samples/opcodes_seen.txt not generated yet")
    forms = set()
    for line in seen.read_text().splitlines():
        line = line.split("#", 1)[0]
        forms.update(tok for tok in line.split()
                     if re.fullmatch(r"[a-z][\w]*(\.[\w:]+)*", tok) and _ours(tok))
    bad = {f: unknown_mods(f) for f in sorted(forms) if unknown_mods(f)}
    assert not bad


def test_sample_ptx_opcodes_are_accepted():
    files = sorted((ROOT / "ptx_samples").rglob("*.ptx"))
    if not files:
        pytest.skip("no PTX samples")
    forms = set()
    for path in files:
        for line in path.read_text(errors="replace").splitlines():
            m = _OPCODE_RE.match(line.split("//", 1)[0])
            if m and _ours(m.group(1)):
                forms.add(m.group(1))
    bad = {f: unknown_mods(f) for f in sorted(forms) if unknown_mods(f)}
    assert not bad


# --- resolution ---------------------------------------------------------------------------

@pytest.mark.parametrize("full_opcode, cls_name, opcode, mods", [
    ("add.cc.u32", "Add", "add", ("cc", "u32")),
    ("addc.cc.u32", "Addc", "addc", ("cc", "u32")),
    ("mad.lo.cc.u32", "Mad", "mad", ("lo", "cc", "u32")),
    ("fma.rn.f32", "Fma", "fma", ("rn", "f32")),
    ("shfl.sync.bfly.b32", "ShflSync", "shfl.sync", ("bfly", "b32")),
    ("shfl.bfly.b32", "Shfl", "shfl", ("bfly", "b32")),
    ("cvt.pack.sat.s16.s32", "CvtPack", "cvt.pack", ("sat", "s16", "s32")),
    ("cvt.rn.f16x2.f32", "Cvt", "cvt", ("rn", "f16x2", "f32")),
    ("min.xorsign.abs.f32", "Min", "min", ("xorsign", "abs", "f32")),
    ("setp.lt.and.s32", "Setp", "setp", ("lt", "and", "s32")),
])
def test_resolve(full_opcode, cls_name, opcode, mods):
    cls, op, rest = resolve(full_opcode)
    assert (cls.__name__, op, rest) == (cls_name, opcode, mods)


# --- accessors ----------------------------------------------------------------------------

def test_add_integer():
    ins = make("add.s32", r("%r3"), r("%r1"), imm(4), guard=Guard(r("%p1"), negated=True))
    assert names(ins.defs) == ["%r3"]
    assert names(ins.uses) == ["%p1", "%r1"]
    assert ins.type.name == "s32" and not ins.is_float
    assert (ins.a, ins.b, ins.c) == (r("%r1"), imm(4), None)
    assert not ins.saturate and not ins.writes_carry and not ins.reads_carry
    assert ins.rounding is None
    assert str(ins) == "@!%p1 add.s32 %r3, %r1, 4;"


def test_add_float_and_mixed():
    ins = make("add.rz.ftz.sat.f32", r("%f1"), r("%f2"), r("%f3"))
    assert ins.is_float and ins.rounding == "rz" and ins.ftz and ins.saturate
    mixed = make("add.rz.f32.bf16.sat", r("%f1"), r("%h1"), r("%f2"))
    assert mixed.type.name == "f32" and mixed.source_type.name == "bf16"
    assert [t.name for t in mixed.types] == ["f32", "bf16"]


def test_carry_chain():
    lo = make("add.cc.u32", r("%r1"), r("%r2"), r("%r3"))
    hi = make("addc.u32", r("%r4"), r("%r5"), r("%r6"))
    both = make("madc.hi.cc.u32", r("%r7"), r("%r5"), r("%r6"), imm(0))
    assert lo.writes_carry and not lo.reads_carry
    assert hi.reads_carry and not hi.writes_carry
    assert both.reads_carry and both.writes_carry and both.mode == "hi"
    assert make("subc.cc.s64", r("%rd1"), r("%rd2"), r("%rd3")).writes_carry


@pytest.mark.parametrize("full_opcode, mode", [
    ("mul.wide.u32", "wide"), ("mul.lo.s32", "lo"), ("mul.f32", None), ("mad.hi.sat.s32", "hi"),
    ("mul24.hi.u32", "hi"), ("mad24.lo.s32", "lo"), ("dp2a.hi.u32.s32", "hi"),
    ("clmad.lo.u64", "lo"), ("szext.wrap.u32", "wrap"), ("bmsk.clamp.b32", "clamp"),
    ("shf.r.clamp.b32", "clamp"), ("prmt.b32", None), ("prmt.b32.rc16", "rc16"),
    ("shfl.sync.idx.b32", "idx"),
])
def test_mode(full_opcode, mode):
    assert make(full_opcode).mode == mode


def test_mad_sources():
    ins = make("mad.lo.s32", r("%r4"), r("%r1"), imm(128), r("%r3"))
    assert (ins.a, ins.b, ins.c) == (r("%r1"), imm(128), r("%r3"))
    assert names(ins.uses) == ["%r1", "%r3"]


def test_bfi_five_operands():
    ins = make("bfi.b32", r("%r1"), r("%r2"), r("%r3"), imm(8), imm(4))
    assert names(ins.defs) == ["%r1"] and len(ins.sources) == 4


def test_float_only_ops():
    assert make("rcp.approx.ftz.f64", r("%fd1"), r("%fd2")).is_approx
    sq = make("sqrt.rn.f32", r("%f1"), r("%f2"))
    assert not sq.is_approx and sq.rounding == "rn"
    assert make("div.full.ftz.f32", r("%f1"), r("%f2"), r("%f3")).is_approx
    assert not make("div.rn.f64", r("%fd1"), r("%fd2"), r("%fd3")).is_approx
    fma = make("fma.rn.oob.relu.bf16x2", r("%r1"), r("%r2"), r("%r3"), r("%r4"))
    assert fma.type.name == "bf16x2" and fma.rounding == "rn" and len(fma.sources) == 3
    ex2 = make("ex2.approx.ftz.bf16", r("%h1"), r("%h2"))
    assert ex2.ftz and ex2.type.name == "bf16"


def test_testp():
    ins = make("testp.notanumber.f32", r("%p1"), r("%f1"))
    assert ins.test == "notanumber" and names(ins.defs) == ["%p1"] and ins.type.name == "f32"


def test_min_three_inputs():
    ins = make("max.NaN.f32", r("%f1"), r("%f2"), r("%f3"), r("%f4"))
    assert names(ins.uses) == ["%f2", "%f3", "%f4"] and ins.c == r("%f4")


def test_setp_pair_and_combine():
    ins = make("setp.lt.and.s32", PredicatePair(r("%p1"), r("%p2")), r("%r1"), r("%r2"),
               Negated(r("%p3")))
    assert ins.compare == "lt" and ins.bool_op == "and"
    assert names(ins.defs) == ["%p1", "%p2"]
    assert names(ins.uses) == ["%r1", "%r2", "%p3"]
    assert ins.pred == r("%p1") and ins.pred_complement == r("%p2")
    assert ins.combine == Negated(r("%p3"))
    sink = make("setp.ne.s32", PredicatePair(Sink(), r("%p2")), r("%r1"), imm(0))
    assert names(sink.defs) == ["%p2"] and sink.pred is None
    plain = make("setp.gtu.ftz.f32", r("%p4"), r("%f1"), r("%f2"))
    assert plain.pred == r("%p4") and plain.pred_complement is None and plain.ftz
    assert plain.combine is None and plain.type.name == "f32"


def test_set_types():
    ins = make("set.lt.and.f32.s32", r("%f1"), r("%r1"), r("%r2"), r("%p1"))
    assert ins.type.name == "f32" and ins.source_type.name == "s32"
    assert ins.compare == "lt" and ins.bool_op == "and" and ins.combine == r("%p1")


def test_selp_and_slct():
    selp = make("selp.u32", r("%r1"), imm(1), imm(0), r("%p1"))
    assert selp.predicate == r("%p1") and names(selp.uses) == ["%p1"]
    slct = make("slct.ftz.u64.f32", r("%rd1"), r("%rd2"), r("%rd3"), r("%f1"))
    assert slct.type.name == "u64" and slct.source_type.name == "f32" and slct.ftz


def test_logic_on_predicates():
    ins = make("and.pred", r("%p1"), r("%p2"), Negated(r("%p3")))
    assert ins.type.name == "pred" and names(ins.uses) == ["%p2", "%p3"]
    assert make("not.b32", r("%r1"), r("%r2")).a == r("%r2")


def test_lop3_predicate_form():
    plain = make("lop3.b32", r("%r1"), r("%r2"), r("%r3"), r("%r4"), imm(0x96))
    assert plain.lut == 0x96 and plain.bool_op is None and plain.predicate_dest is None
    assert plain.value_dest == r("%r1")
    pred = make("lop3.or.b32", PredicatePair(Sink(), r("%p1")), r("%r2"), r("%r3"),
                r("%r4"), imm(0x3F), r("%p2"))
    assert pred.bool_op == "or" and pred.predicate_dest == r("%p1")
    assert pred.value_dest == Sink() and names(pred.defs) == ["%p1"]
    assert pred.predicate_source == r("%p2")
    assert names(pred.uses) == ["%r2", "%r3", "%r4", "%p2"]


def test_shifts():
    shf = make("shf.l.wrap.b32", r("%r1"), r("%r2"), r("%r3"), imm(8))
    assert shf.direction == "l" and shf.mode == "wrap"
    shr = make("shr.s32", r("%r1"), r("%r2"), imm(1))
    assert shr.type.is_signed and shr.b == imm(1)


@pytest.mark.parametrize("full_opcode, dest, source, rounding, int_round", [
    ("cvt.rni.s32.f32", "s32", "f32", "rni", True),
    ("cvt.rn.f32.s32", "f32", "s32", "rn", False),
    ("cvt.u64.u32", "u64", "u32", None, False),
    ("cvt.rna.satfinite.tf32.f32", "tf32", "f32", "rna", False),
    ("cvt.rs.relu.satfinite.f16x2.f32", "f16x2", "f32", "rs", False),
])
def test_cvt_types(full_opcode, dest, source, rounding, int_round):
    ins = make(full_opcode, r("%d"), r("%a"))
    assert ins.dest_type.name == dest and ins.source_type.name == source
    assert ins.rounding == rounding and ins.rounds_to_integer == int_round


def test_cvt_packed_and_scaled():
    ins = make("cvt.rn.satfinite.scaled::n1::ue8m0.e4m3x2.f32", r("%h1"), r("%f1"), r("%f2"),
               r("%c1"))
    assert ins.is_scaled and ins.saturate and names(ins.uses) == ["%f1", "%f2", "%c1"]
    assert not make("cvt.rn.f16.f32", r("%h1"), r("%f1")).is_scaled
    four = make("cvt.rs.relu.satfinite.e4m3x4.f32", r("%r1"),
                Vector((r("%f1"), r("%f2"), r("%f3"), r("%f4"))), r("%r2"))
    assert names(four.uses) == ["%f1", "%f2", "%f3", "%f4", "%r2"]


def test_cvt_pack():
    ins = make("cvt.pack.sat.u8.s32.b32", r("%r7"), r("%r8"), r("%r9"), r("%r4"))
    assert ins.convert_type.name == "u8" and ins.source_type.name == "b32"
    assert ins.fill == r("%r4") and ins.saturate


def test_mov_forms():
    copy = make("mov.u32", r("%r1"), r("%tid.x"))
    assert names(copy.uses) == ["%tid.x"] and copy.uses[0].is_special
    assert not (copy.is_pack or copy.is_unpack or copy.takes_address)
    addr = make("mov.u64", r("%rd1"), Symbol("smem"))
    assert addr.takes_address and addr.uses == []
    assert make("mov.u64", r("%rd1"), Expression("A+20")).takes_address
    pack = make("mov.b64", r("%rd1"), Vector((r("%r1"), r("%r2"))))
    assert pack.is_pack and names(pack.uses) == ["%r1", "%r2"]
    unpack = make("mov.b64", Vector((r("%r1"), Sink())), r("%rd1"))
    assert unpack.is_unpack and names(unpack.defs) == ["%r1"]
    vec = make("mov.v2.b64", r("vpair"), Vector((r("%rd6"), r("%rd7"))))
    assert vec.vector_width == 2 and not vec.is_pack and vec.type.name == "b64"


def test_shfl_sync():
    ins = make("shfl.sync.down.b32", PredicatePair(r("%r2"), r("%p1")), r("%r1"), imm(16),
               imm(0x1F), imm(-1))
    assert ins.mode == "down" and ins.value_dest == r("%r2") and ins.predicate_dest == r("%p1")
    assert names(ins.defs) == ["%r2", "%p1"] and names(ins.uses) == ["%r1"]
    assert (ins.lane, ins.clamp, ins.membermask) == (imm(16), imm(0x1F), imm(-1))
    plain = make("shfl.sync.bfly.b32", r("%r3"), r("%r1"), imm(1), imm(31), r("%r9"))
    assert plain.predicate_dest is None and names(plain.uses) == ["%r1", "%r9"]
    old = make("shfl.up.b32", r("%r3"), r("%r1"), imm(1), imm(0))
    assert old.mode == "up" and not hasattr(old, "membermask")


def test_prmt():
    ins = make("prmt.b32", r("%r1"), r("%r2"), r("%r3"), imm(0x3210))
    assert ins.mode is None and ins.selector == imm(0x3210)
