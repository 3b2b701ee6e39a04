"""Random small kernels for the soundness suite: a hypothesis strategy over a PTX subset.

A kernel is a tree of statements (`Assign`, `Access`, `If`, `Loop`, `Barrier`) over
32-bit registers, rendered to PTX by `render`. The subset: affine index arithmetic on
`%tid.x`, `%tid.y`, `%ctaid.x`, `%laneid`, `%ntid.x` and a scalar parameter `n`, plus
operations that leave the affine domain (`and`, `rem`, `min`, values loaded from
memory); guards as branches (sometimes `bra.uni`, sometimes on a lane-dependent
predicate: a deliberate defect; sometimes the previous guard's predicate read again
after the lanes reconverge) and as guarded stores, `selp`; loops with uniform and
lane-dependent trip counts (always bounded, at most 8 trips); global, shared and
generic loads, stores and `atom.add` of 1 to 16 bytes with strides and offsets that may break coalescing,
alignment and bounds on purpose; `bar.sync` at the top level and, rarely, under a guard;
calls of two device functions (arithmetic on the arguments; a load through a pointer).

`programs()` draws a `Program`: the text, the launch, the inputs and whether the lint
is told `n` (else the analysis must hold for every `n`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from differential.case import Case
from differential.corpus import fill
from ptxlint.launch import LaunchConfig

# prologue registers (see `render`): the index sources every expression starts from
TID_X, TID_Y, CTA_X, LANE, NTID_X, N = (f"%r{i}" for i in range(1, 7))
SOURCES = (TID_X, TID_Y, CTA_X, LANE, NTID_X, N)
BINARY = ("add.s32", "sub.s32", "min.s32", "mul.lo.s32")
WITH_IMM = ("add.s32", "mul.lo.s32", "shl.b32", "and.b32", "rem.u32", "mad.lo.s32",
            "selp.b32")
COMPARES = ("lt", "le", "gt", "ge", "eq", "ne")
# (PTX type, bytes, registers it moves)
WIDTHS = (("u8", 1, 1), ("u16", 2, 1), ("u32", 4, 1), ("u64", 8, 1), ("v2.u32", 8, 2),
          ("v4.u32", 16, 4))


@dataclass(frozen=True)
class Assign:
    dst: str
    op: str
    a: str
    b: str | int  # a register or an immediate
    c: str | None = None  # mad's addend
    cond: tuple | None = None  # selp's predicate (a, compare, b)


@dataclass(frozen=True)
class Access:
    store: bool
    space: str  # "global", "shared", "generic-global" or "generic-shared"
    index: str
    scale: int  # bytes per index step
    offset: int
    width: tuple  # one of WIDTHS
    value: str | None = None  # the register stored / the first register loaded
    guard: tuple | None = None  # (a, compare, b): a guarded store
    atomic: bool = False  # atom.add.u32 (a store of `value` that also loads)


@dataclass(frozen=True)
class If:
    cond: tuple | None  # (a, compare, b): the body is skipped when it holds; None: the
    uni: bool           # predicate of the previous guard again (after reconvergence)
    body: tuple
    negate: bool = False  # skip when the predicate is false (`@!%p bra`)


@dataclass(frozen=True)
class Loop:
    counter: str
    bound: str | int
    step: int
    uni: bool
    body: tuple
    bound_src: str | None = None  # bound = bound_src & 7 (lane-dependent trips)


@dataclass(frozen=True)
class Barrier:
    pass


@dataclass(frozen=True)
class Call:
    """`dst = mix(a, b)` (3a + b) or `dst = fetch(in, a)` (a load of in[a] in the callee)."""

    dst: str
    func: str  # "mix" or "fetch"
    a: str
    b: str | None = None


FUNCTIONS = """.func (.reg .b32 r) mix(.reg .b32 a, .reg .b32 b)
{
	.reg .b32 %t<2>;
	mul.lo.s32 %t1, a, 3;
	add.s32 r, %t1, b;
	ret;
}

.func (.reg .b32 r) fetch(.reg .b64 p, .reg .b32 i)
{
	.reg .b64 %t<3>;
	mul.wide.s32 %t1, i, 4;
	add.s64 %t2, p, %t1;
	ld.global.u32 r, [%t2];
	ret;
}
"""


@dataclass(frozen=True)
class Program:
    body: tuple
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    n: int
    tell_n: bool
    in_bytes: int
    out_bytes: int
    smem_bytes: int
    registers: int

    @property
    def text(self) -> str:
        return render(self)

    def case(self, name: str = "random") -> Case:
        params = {"n": self.n} if self.tell_n else {}
        launch = LaunchConfig(block=self.block, grid=self.grid, params=params,
                              extents={"in": self.in_bytes, "out": self.out_bytes})
        args = {0: fill(self.in_bytes), 1: np.zeros(self.out_bytes, np.uint8), 2: self.n}
        return Case(name, self.text, "rk", self.grid, self.block, args, launch,
                    max_steps=200_000)


# ---- rendering -----------------------------------------------------------------------------------
@dataclass
class _Out:
    lines: list[str] = field(default_factory=list)
    labels: int = 0
    preds: int = 0
    last_pred: str | None = None
    temps64: int = 2  # %rd1, %rd2: the buffers
    temps32: int = 0
    first32: int = 0

    def label(self) -> str:
        self.labels += 1
        return f"$L{self.labels}"

    def pred(self) -> str:
        self.preds += 1
        return f"%p{self.preds}"

    def rd(self) -> str:
        self.temps64 += 1
        return f"%rd{self.temps64}"

    def r(self) -> str:
        self.temps32 += 1
        return f"%r{self.first32 + self.temps32}"

    def emit(self, text: str) -> None:
        self.lines.append("\t" + text)


def _operand(x) -> str:
    return str(x)


def _setp(out: _Out, cond: tuple | None) -> str:
    if cond is None and out.last_pred is not None:
        return out.last_pred
    a, cmp, b = cond or (TID_X, "eq", 0)
    p = out.last_pred = out.pred()
    out.emit(f"setp.{cmp}.s32 {p}, {a}, {_operand(b)};")
    return p


def _address(out: _Out, acc: Access) -> str:
    if acc.space.endswith("global"):
        t, a = out.rd(), out.rd()
        out.emit(f"mul.wide.s32 {t}, {acc.index}, {acc.scale};")
        out.emit(f"add.s64 {a}, {'%rd2' if acc.store else '%rd1'}, {t};")
    else:
        t, a = out.r(), out.r()
        out.emit(f"mul.lo.s32 {t}, {acc.index}, {acc.scale};")
        out.emit(f"add.s32 {a}, %r7, {t};")  # %r7 = smem
        if acc.space == "generic-shared":
            wide, generic = out.rd(), out.rd()
            out.emit(f"cvt.u64.u32 {wide}, {a};")
            out.emit(f"cvta.shared.u64 {generic}, {wide};")
            a = generic
    return f"[{a}+{acc.offset}]" if acc.offset else f"[{a}]"  # PTX spells -1 as +-1


def _access(out: _Out, acc: Access) -> None:
    ptype, _bytes, count = acc.width
    addr = _address(out, acc)
    head = ""
    if acc.guard is not None:
        head = f"@{_setp(out, acc.guard)} "
    space = "" if acc.space.startswith("generic") else f".{acc.space}"
    if acc.atomic:
        out.emit(f"{head}atom{space}.add.u32 {out.r()}, {addr}, {acc.value};")
        return
    if ptype == "u64":
        wide = out.rd()
        if acc.store:
            out.emit(f"cvt.u64.u32 {wide}, {acc.value};")
            out.emit(f"{head}st{space}.u64 {addr}, {wide};")
        else:
            out.emit(f"ld{space}.u64 {wide}, {addr};")
            out.emit(f"cvt.u32.u64 {acc.value}, {wide};")
        return
    if count == 1:
        regs = acc.value
    elif acc.store:
        regs = "{" + ", ".join([acc.value] * count) + "}"
    else:
        regs = "{" + ", ".join([acc.value] + [out.r() for _ in range(count - 1)]) + "}"
    if acc.store:
        out.emit(f"{head}st{space}.{ptype} {addr}, {regs};")
    else:
        out.emit(f"ld{space}.{ptype} {regs}, {addr};")


def _statement(out: _Out, s) -> None:
    if isinstance(s, Assign):
        if s.op == "mad.lo.s32":
            out.emit(f"mad.lo.s32 {s.dst}, {s.a}, {s.b}, {s.c};")
        elif s.op == "selp.b32":
            out.emit(f"selp.b32 {s.dst}, {s.a}, {_operand(s.b)}, {_setp(out, s.cond)};")
        else:
            out.emit(f"{s.op} {s.dst}, {s.a}, {_operand(s.b)};")
    elif isinstance(s, Access):
        _access(out, s)
    elif isinstance(s, If):
        end = out.label()
        p = _setp(out, s.cond)
        out.emit(f"@{'!' if s.negate else ''}{p} bra{'.uni' if s.uni else ''} {end};")
        for t in s.body:
            _statement(out, t)
        out.lines.append(f"{end}:")
    elif isinstance(s, Loop):
        top, end = out.label(), out.label()
        bound = s.bound
        if s.bound_src is not None:
            out.emit(f"and.b32 {s.bound}, {s.bound_src}, 7;")
        out.emit(f"mov.u32 {s.counter}, 0;")
        out.lines.append(f"{top}:")
        p = out.pred()
        out.emit(f"setp.ge.s32 {p}, {s.counter}, {_operand(bound)};")
        out.emit(f"@{p} bra{'.uni' if s.uni else ''} {end};")
        for t in s.body:
            _statement(out, t)
        out.emit(f"add.s32 {s.counter}, {s.counter}, {s.step};")
        out.emit(f"bra.uni {top};")
        out.lines.append(f"{end}:")
    elif isinstance(s, Barrier):
        out.emit("bar.sync 0;")
    elif isinstance(s, Call):
        args = f"{s.a}, {s.b}" if s.func == "mix" else f"%rd1, {s.a}"
        out.emit(f"call.uni ({s.dst}), {s.func}, ({args});")


def render(prog: Program) -> str:
    out = _Out(first32=prog.registers)
    for s in prog.body:
        _statement(out, s)
    body = out.lines
    head = [
        ".version 8.0", ".target sm_80", ".address_size 64", "", FUNCTIONS,
        ".visible .entry rk(", "\t.param .u64 in,", "\t.param .u64 out,", "\t.param .u32 n", ")",
        "{",
        f"\t.reg .pred %p<{out.preds + 1}>;",
        f"\t.reg .b32 %r<{prog.registers + out.temps32 + 1}>;",
        f"\t.reg .b64 %rd<{out.temps64 + 1}>;",
        f"\t.shared .align 16 .b8 smem[{prog.smem_bytes}];",
        "\tld.param.u64 %rd1, [in];", "\tcvta.to.global.u64 %rd1, %rd1;",
        "\tld.param.u64 %rd2, [out];", "\tcvta.to.global.u64 %rd2, %rd2;",
        f"\tmov.u32 {TID_X}, %tid.x;", f"\tmov.u32 {TID_Y}, %tid.y;",
        f"\tmov.u32 {CTA_X}, %ctaid.x;", f"\tmov.u32 {LANE}, %laneid;",
        f"\tmov.u32 {NTID_X}, %ntid.x;", f"\tld.param.u32 {N}, [n];",
        "\tmov.u32 %r7, smem;",
    ]
    return "\n".join(head + body + ["\tret;", "}", ""])


# ---- strategies ----------------------------------------------------------------------------------
class _Regs:
    """Register numbering while drawing: %r1-%r7 are the prologue's."""

    def __init__(self) -> None:
        self.next = 8

    def new(self) -> str:
        self.next += 1
        return f"%r{self.next - 1}"


@st.composite
def _assign(draw, pool: list[str], regs: _Regs) -> Assign:
    a = draw(st.sampled_from(pool))
    dst = regs.new()
    if draw(st.booleans()):
        op = draw(st.sampled_from(BINARY))
        if op == "mul.lo.s32":  # keep products affine: one factor an index source
            return Assign(dst, op, a, draw(st.sampled_from(SOURCES[:5])))
        return Assign(dst, op, a, draw(st.sampled_from(pool)))
    op = draw(st.sampled_from(WITH_IMM))
    if op == "shl.b32":
        return Assign(dst, op, a, draw(st.integers(0, 5)))
    if op == "and.b32":
        return Assign(dst, op, a, draw(st.sampled_from([1, 3, 7, 31, 255])))
    if op == "rem.u32":
        return Assign(dst, op, a, draw(st.integers(1, 9)))
    if op == "mad.lo.s32":
        return Assign(dst, op, a, draw(st.integers(-4, 33)), draw(st.sampled_from(pool)))
    if op == "selp.b32":
        return Assign(dst, op, a, draw(st.integers(-8, 64)), cond=draw(_cond(pool)))
    if op == "mul.lo.s32":
        return Assign(dst, op, a, draw(st.sampled_from([-1, 2, 3, 4, 8, 32, 33])))
    return Assign(dst, op, a, draw(st.integers(-64, 64)))


@st.composite
def _cond(draw, pool: list[str]) -> tuple:
    b = draw(st.one_of(st.integers(-2, 70), st.sampled_from(pool)))
    return (draw(st.sampled_from(pool)), draw(st.sampled_from(COMPARES)), b)


@st.composite
def _memory(draw, pool: list[str], regs: _Regs) -> Access:
    width = draw(st.sampled_from(WIDTHS))
    store = draw(st.booleans())
    space = draw(st.sampled_from(["global", "global", "shared", "shared", "generic-global",
                                  "generic-shared"]))
    # natural scale mostly; sometimes a stride that breaks coalescing or alignment
    scale = draw(st.sampled_from([width[1]] * 4 + [1, 4, 12, 128, 132]))
    offset = draw(st.sampled_from([0] * 4 + [width[1], -width[1], 4, 2]))
    guard = draw(_cond(pool)) if store and draw(st.integers(0, 3)) == 0 else None
    value = draw(st.sampled_from(pool)) if store else regs.new()
    atomic = store and width[0] == "u32" and draw(st.integers(0, 3)) == 0
    return Access(store, space, draw(st.sampled_from(pool)), scale, offset, width, value, guard,
                  atomic)


def _statements(draw, pool: list[str], regs: _Regs, depth: int) -> tuple:
    pool = list(pool)
    out = []
    for _ in range(draw(st.integers(1, 5 if depth == 0 else 3))):
        kind = draw(st.sampled_from(["assign"] * 3 + ["memory"] * 3 + ["call"] +
                                    (["if", "loop"] if depth < 2 else []) +
                                    (["barrier"] if depth == 0 else [])))
        if kind == "assign":
            s = draw(_assign(pool, regs))
            out.append(s)
            pool.append(s.dst)
        elif kind == "memory":
            s = draw(_memory(pool, regs))
            out.append(s)
            if not s.store:
                pool.append(s.value)  # a data-dependent value
        elif kind == "if":
            # sometimes the previous guard's predicate again, read after reconvergence
            cond = None if draw(st.integers(0, 3)) == 0 else draw(_cond(pool))
            body = _statements(draw, pool, regs, depth + 1)
            if draw(st.integers(0, 9)) == 0:
                body += (Barrier(),)  # a barrier under a guard: divergent when lanes disagree
            out.append(If(cond, draw(st.booleans()), body, draw(st.booleans())))
        elif kind == "loop":
            counter = regs.new()
            if draw(st.booleans()):
                bound, src = draw(st.one_of(st.integers(0, 6), st.just(N))), None
            else:
                bound, src = regs.new(), draw(st.sampled_from(pool))
            body = _statements(draw, pool + [counter], regs, depth + 1)
            out.append(Loop(counter, bound, draw(st.integers(1, 2)), draw(st.booleans()),
                            body, src))
        elif kind == "call":
            func = draw(st.sampled_from(["mix", "fetch"]))
            s = Call(regs.new(), func, draw(st.sampled_from(pool)),
                     draw(st.sampled_from(pool)) if func == "mix" else None)
            out.append(s)
            pool.append(s.dst)
        else:
            out.append(Barrier())
    return tuple(out)


@st.composite
def programs(draw) -> Program:
    regs = _Regs()
    body = _statements(draw, list(SOURCES), regs, 0)
    block = (draw(st.sampled_from([16, 32, 48, 64, 96])), draw(st.integers(1, 2)), 1)
    return Program(body, block, (draw(st.integers(1, 2)), 1, 1), draw(st.integers(0, 8)),
                   draw(st.booleans()), draw(st.sampled_from([256, 1000, 1024, 4096])),
                   draw(st.sampled_from([256, 1024, 4096])),
                   draw(st.sampled_from([256, 1024])), regs.next)


__all__ = ["programs", "Program", "render", "Assign", "Access", "If", "Loop", "Barrier", "Call"]
