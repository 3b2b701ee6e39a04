"""The analyses behind `barrier-divergence` and `shared-memory-race`: block-level
uniformity, barrier intervals, per-thread evaluation of address expressions, the byte
overlap of two accesses."""
from __future__ import annotations

import numpy as np
import pytest

from ptxlint.analysis import analyze
from ptxlint.domains.strided import StridedInterval as SI
from ptxlint.threads.barrier_intervals import Intervals, control_closure, separator
from ptxlint.threads.block_uniform import block_variance
from ptxlint.threads.induction import loop_trips
from ptxlint.threads.thread_eval import Evaluator, ThreadSpace, Unevaluable
from ptxlint.threads.thread_exprs import Node, const, expr_builder
from ptxlint.threads.thread_pairs import Evaluated, Side, evaluate, first_overlap
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig

HEAD = """.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 r) f(.param .b32 x)
{
    .reg .b32 %q;
    ld.param.b32 %q, [x];
    st.param.b32 [r], %q;
    ret;
}
.visible .entry k(.param .u32 n)
{
    .reg .pred %p<8>;
    .reg .b32 %r<32>;
    .shared .align 4 .b8 s[1024];
"""


def facts_of(body: str, launch: str | None = "block=32,8"):
    module = parse_module(HEAD + body + "\n    ret;\n}\n", "t.ptx").module
    config = LaunchConfig.parse(launch) if launch else None
    return analyze(module.entries[0], config, module=module).facts


def insn_at(facts, text: str):
    return next(i for i in facts.function.instructions if str(i).startswith(text))


# ---- block-level uniformity --------------------------------------------------------------------
def test_tid_y_is_warp_uniform_but_block_varying():
    facts = facts_of("""    mov.u32 %r1, %tid.y;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra L;
    add.u32 %r2, %r1, 1;
L:""")
    v = block_variance(facts)
    branch = insn_at(facts, "@%p1 bra")
    assert facts.state_before(branch)["%p1"].is_uniform  # one value per warp: 32-wide rows
    assert v.is_varying("%p1", branch)
    assert v.divergent == {facts.cfg.block_of(branch)}
    assert not facts.branch_is_divergent(facts.cfg.block_of(branch))


def test_what_every_thread_of_a_block_agrees_on():
    facts = facts_of("""    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    setp.lt.u32 %p1, %r3, 8;
    bar.red.popc.u32 %r4, 0, %p1;
    atom.shared.add.u32 %r5, [s], 1;
    {
        .param .b32 a;
        .param .b32 b;
        st.param.b32 [a], %r1;
        call.uni (b), f, (a);
        ld.param.b32 %r6, [b];
    }
    add.u32 %r7, %r1, %r2;""")
    v = block_variance(facts)
    at = insn_at(facts, "add.u32 %r7")
    varying = {k for k in ("%r1", "%r2", "%r3", "%r4", "%r5", "%r6") if v.is_varying(k, at)}
    assert varying == {"%r3", "%r5", "%r6"}  # tid, an atomic's result, a call's result
    assert not v.varies_after(at, "%r7")


def test_values_assigned_on_the_arms_of_a_split_differ_where_they_meet():
    facts = facts_of("""    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bra A;
    mov.u32 %r2, 1;
    bra.uni J;
A:
    mov.u32 %r2, 2;
J:
    add.u32 %r3, %r2, 0;""", "block=64")
    v = block_variance(facts)
    assert v.is_varying("%r2", insn_at(facts, "add.u32 %r3"))
    assert not v.is_varying("%r2", insn_at(facts, "bra.uni J"))


# ---- barrier intervals ---------------------------------------------------------------------------
LOOP = """    mov.u32 %r1, 0;
L:
    ld.shared.u32 %r2, [s];
    bar.sync 0;
    st.shared.u32 [s+4], %r1;
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra L;"""


def test_intervals_follow_the_back_edge():
    facts = facts_of(LOOP)
    cta = Intervals(facts.cfg, separator(facts.function.module, warp=False))
    ld, st = insn_at(facts, "ld.shared"), insn_at(facts, "st.shared")
    assert cta.reaches(st, ld) and not cta.reaches(ld, st)
    assert cta.concurrent([ld, st], []) == [0b11, 0b11]


def test_warp_barriers_separate_only_threads_of_one_warp():
    facts = facts_of("""    st.shared.u32 [s], %r1;
    bar.warp.sync -1;
    ld.shared.u32 %r2, [s];""")
    module = facts.function.module
    points = [insn_at(facts, "st.shared"), insn_at(facts, "ld.shared")]
    assert Intervals(facts.cfg, separator(module, warp=False)).concurrent(points, []) == \
        [0b11, 0b11]
    assert Intervals(facts.cfg, separator(module, warp=True)).concurrent(points, []) == \
        [0b01, 0b10]


def test_control_closure_is_iterated_and_nearest_first():
    facts = facts_of("""    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bra OUT;
    setp.lt.u32 %p2, %r1, 4;
    @%p2 bra OUT;
    bar.sync 0;
OUT:""")
    cfg = facts.cfg
    inner = cfg.block_of(insn_at(facts, "bar.sync"))
    assert control_closure(cfg, inner) == [cfg.block_of(insn_at(facts, "@%p2 bra")),
                                           cfg.block_of(insn_at(facts, "@%p1 bra"))]


# ---- expressions and their values per thread -------------------------------------------------------
SPACE = ThreadSpace((64, 1, 1), True)
T = Node("thread", value="tx")


def values(node: Node) -> np.ndarray:
    v = Evaluator(SPACE, {}).eval(node)
    assert not v.sym
    return np.broadcast_to(np.asarray(v.conc), (1, SPACE.n))[0]


def test_division_by_a_magic_multiply():
    """nvcc's `t / 12`: `mul.wide.u32 t, -1431655765` (0xAAAAAAAB), `shr.u64 35`."""
    wide = Node("mul", (T, const(-1431655765)), bits=64, mode="wide32")
    q = Node("cvt", (Node("shr", (wide, const(35)), bits=64),), bits=32, mode="64")
    assert (values(q) == np.arange(64) // 12).all()


@pytest.mark.parametrize("node,expect", [
    (Node("rem", (T, const(12)), bits=32), np.arange(64) % 12),
    (Node("and", (T, const(31)), bits=32), np.arange(64) % 32),
    (Node("setp", (T, const(-1)), bits=32, mode="lo"), np.ones(64)),  # unsigned: < 2^32-1
    (Node("setp", (T, const(-1)), bits=32, signed=True, mode="lt"), np.zeros(64)),
    (Node("cvt", (Node("sub", (T, const(1)), bits=32),), bits=64, signed=True, mode="32"),
     np.arange(64) - 1),  # sign extension keeps -1
    (Node("selp", (const(7), T, Node("setp", (T, const(8)), bits=32, mode="lt")), bits=32),
     np.where(np.arange(64) < 8, 7, np.arange(64))),
])
def test_integer_operations(node, expect):
    assert (values(node) == expect).all()


def test_symbols_cancel_and_opaque_values_do_not_evaluate():
    leaf = Node("leaf", value="%r9", ident=("reg", "%r9"))
    a = Node("add", (leaf, Node("mul", (T, const(4)), bits=32)), bits=32)
    b = Node("add", (a, const(4)), bits=32)
    ev = Evaluator(SPACE, {})
    va, vb = ev.eval(a), ev.eval(b)
    assert va.sym == vb.sym and (np.asarray(vb.conc) - np.asarray(va.conc) == 4).all()
    with pytest.raises(Unevaluable):
        ev.eval(Node("add", (T, Node("opaque")), bits=32))


# ---- byte overlaps ---------------------------------------------------------------------------------
def entries(starts, width: int = 4) -> Evaluated:
    starts = np.asarray(starts, np.int64)
    return Evaluated(np.zeros(len(starts), np.int64), np.arange(len(starts)), starts, {},
                     (), None)


def test_a_thread_never_races_with_itself():
    a = entries(4 * np.arange(64))
    assert first_overlap(SPACE, a, 4, a, 4, True, frozenset()) is None
    hit = first_overlap(SPACE, a, 4, entries(4 * np.arange(64) + 4), 4, True, frozenset())
    assert (hit.t1, hit.t2, hit.byte, hit.exact) == (1, 0, 4, True)


def test_different_warps_only():
    a = entries(4 * (np.arange(64) % 32))  # the two warps write the same 128 bytes
    hit = first_overlap(SPACE, a, 4, a, 4, False, frozenset())
    assert hit is not None and hit.t1 // 32 != hit.t2 // 32


@pytest.mark.parametrize("step,meet", [(256, False), (128, True)])
def test_addresses_known_modulo_a_stride(step, meet):
    """`s + 4*tid` against `s + 4*tid + step*k`, k unknown: 64 threads cover 256 bytes, so
    a step of 256 only ever meets the same thread, a step of 128 meets thread t + 32."""
    a = entries(4 * np.arange(64))
    b = Evaluated(a.row, a.thread, a.start, {}, (("k", step, frozenset({("reg", "k")})),),
                  None)
    hit = first_overlap(SPACE, a, 4, b, 4, True, frozenset())
    assert (hit is not None) is meet and (hit is None or not hit.exact)


def test_constraints_select_the_threads():
    side = Side(Node("mul", (T, const(4)), bits=32), 4, "s",
                [(Node("setp", (T, const(8)), bits=32, mode="lt"), SI.const(1), 1)])
    e = evaluate(SPACE, side)
    assert list(e.thread) == list(range(8))


def test_loop_counter_bounded_by_a_sibling_counter():
    """`i` steps by 4 with no bound of its own; `c` counts 8 trips down to 0: 7 back
    edges, with `c` in 28, 24, ..., 4 on them."""
    facts = facts_of("""    mov.u32 %r1, 1;
    mov.u32 %r2, 32;
L:
    add.u32 %r1, %r1, 4;
    add.u32 %r2, %r2, -4;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra L;""", "block=32")
    block = facts.cfg.block_of(insn_at(facts, "add.u32 %r1"))
    assert loop_trips(expr_builder(facts), block) == 7
