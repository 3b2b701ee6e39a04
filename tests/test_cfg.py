"""CFG construction, orders, loops, (post-)dominance and control dependence.

Functions are built by hand from small unregistered instruction classes, so these
tests do not depend on the opcode modules being written in parallel."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.cfg import CFGError, build_cfg
from ptxlint.ir.instruction import Guard, Instruction
from ptxlint.ir.module import Function, Label, ListDirective
from ptxlint.ir.operands import Register, Symbol
from ptxlint.ir.traits import Branch, Terminator
from ptxlint.source import Span


class Op(Instruction):
    __slots__ = ()


class Bra(Branch):
    __slots__ = ()


class Ret(Terminator):
    __slots__ = ()


class BrxPlain(Instruction):
    __slots__ = ()


class BrxBranch(Branch):
    __slots__ = ()


P = Register("%p1", "%p1")
R = Register("%r1", "%r1")


def guard(g: bool) -> Guard | None:
    return Guard(P) if g else None


def op(name: str = "add") -> Op:
    return Op(name, ("s32",), None, (R, R, R))


def bra(label: str, g: bool = False) -> Bra:
    return Bra("bra", (), guard(g), (Symbol(label),), Span(0, 1, 7, 5, 7, 6))


def ret(g: bool = False) -> Ret:
    return Ret("ret", (), guard(g), ())


def brx(table: str, g: bool = False, cls: type = BrxPlain) -> Instruction:
    return cls("brx.idx", (), guard(g), (R, Symbol(table)))


def table(name: str, *labels: str) -> Label:
    return Label(name, directive=ListDirective("branchtargets", labels, ""))


def fn(*body) -> Function:
    return Function("k", "entry", body=list(body))


def succs(cfg) -> list[tuple[int, ...]]:
    return [b.succs for b in cfg.blocks]


def test_straight_line():
    a, b, c = op(), op(), ret()
    cfg = build_cfg(fn(a, b, c))
    assert len(cfg.blocks) == 2 and cfg.exit == 1 and cfg.blocks[1].is_exit
    assert cfg.blocks[0].instructions == [a, b, c] and cfg.blocks[0].terminator is c
    assert succs(cfg) == [(1,), ()] and cfg.blocks[1].preds == (0,)
    assert cfg.rpo() == [0, 1] and cfg.idom == [None, 0] and cfg.ipdom == [1, None]
    assert cfg.position(b) == (0, 1) and cfg.block_of(c) == 0
    assert not cfg.loop_heads and not cfg.back_edges and not cfg.unreachable_blocks
    with pytest.raises(KeyError):
        cfg.position(op())


def test_falling_off_the_end_and_empty_body():
    assert succs(build_cfg(fn(op()))) == [(1,), ()]
    empty = build_cfg(Function("f", "func"))
    assert succs(empty) == [(1,), ()] and empty.ipdom == [1, None]


def diamond():
    return fn(bra("ELSE", g=True), op(), bra("JOIN"),
              Label("ELSE"), op(),
              Label("JOIN"), op(), ret())


def test_diamond():
    cfg = build_cfg(diamond())
    assert succs(cfg) == [(2, 1), (3,), (3,), (4,), ()]
    assert [b.labels for b in cfg.blocks] == [(), (), ("ELSE",), ("JOIN",), ()]
    assert cfg.by_label == {"ELSE": 2, "JOIN": 3}
    assert cfg.idom[3] == 0 and cfg.ipdom[0] == 3 and cfg.reconvergence_point(0) == 3
    assert cfg.dominates(0, 3) and not cfg.dominates(1, 3)
    assert cfg.post_dominates(3, 0) and not cfg.post_dominates(1, 0)
    assert cfg.dominance_frontier[1] == {3} and cfg.dominance_frontier[2] == {3}
    assert cfg.dominance_frontier[0] == frozenset()
    assert cfg.control_dependence() == {0: {1, 2}}
    assert cfg.dominators(3) == [3, 0] and cfg.post_dominators(1) == [1, 3, 4]


def test_block_span_and_dot():
    cfg = build_cfg(diamond())
    assert cfg.blocks[0].span == Span(0, 1, 7, 5, 7, 6) and cfg.blocks[3].span is None
    dot = cfg.to_dot()
    assert dot.startswith('digraph "k"') and "b0 -> b2;" in dot and "b3 -> b4;" in dot


def simple_loop():
    # b0 entry; b1 HEAD: @p bra DONE; b2: body, bra HEAD; b3 DONE: ret
    return fn(op(), Label("HEAD"), bra("DONE", g=True), op(), bra("HEAD"),
              Label("DONE"), ret())


def test_loop():
    cfg = build_cfg(simple_loop())
    assert succs(cfg) == [(1,), (3, 2), (1,), (4,), ()]
    assert cfg.back_edges == ((2, 1),) and cfg.loop_heads == {1}
    loop = cfg.natural_loops()[1]
    assert loop.body == {1, 2} and loop.latches == (2,) and loop.exits == ((1, 3),)
    assert loop.reducible
    assert cfg.idom == [None, 0, 1, 1, 3] and cfg.ipdom[1] == 3 and cfg.ipdom[2] == 1
    # the exit test decides whether the body and the next test run: lanes leaving
    # the loop early make both divergent
    assert cfg.control_dependence() == {1: {1, 2}}
    assert cfg.rpo().index(1) < cfg.rpo().index(2)


def test_loop_with_divergent_exit():
    # b1 H: @p bra OUT (exit in the middle); b2: @p bra H (guarded latch); b3 OUT
    cfg = build_cfg(fn(op(), Label("H"), bra("OUT", g=True), op(), bra("H", g=True),
                       Label("OUT"), ret()))
    assert succs(cfg) == [(1,), (3, 2), (1, 3), (4,), ()]
    assert cfg.natural_loops()[1].exits == ((1, 3), (2, 3))
    assert cfg.control_dependence() == {1: {2}, 2: {1}}
    assert cfg.reconvergence_point(1) == cfg.reconvergence_point(2) == 3


def test_nested_loops():
    # b1 OUTER; b2 INNER: @p bra IDONE; b3: bra INNER; b4 IDONE: @q bra OUTER; b5 ret
    cfg = build_cfg(fn(op(), Label("OUTER"), op(),
                       Label("INNER"), bra("IDONE", g=True), op(), bra("INNER"),
                       Label("IDONE"), bra("OUTER", g=True), ret()))
    assert succs(cfg) == [(1,), (2,), (4, 3), (2,), (1, 5), (6,), ()]
    assert cfg.back_edges == ((3, 2), (4, 1)) and cfg.loop_heads == {1, 2}
    loops = cfg.natural_loops()
    assert loops[1].body == {1, 2, 3, 4} and loops[1].exits == ((4, 5),)
    assert loops[2].body == {2, 3} and loops[2].exits == ((2, 4),)
    assert cfg.idom == [None, 0, 1, 2, 2, 4, 5]
    assert cfg.control_dependence() == {2: {3, 2}, 4: {1, 2, 4}}


def test_self_loop_nested_in_loop():
    cfg = build_cfg(fn(op(), Label("OUTER"), op(),
                       Label("INNER"), op(), bra("INNER", g=True),
                       bra("OUTER", g=True), ret()))
    assert succs(cfg) == [(1,), (2,), (2, 3), (1, 4), (5,), ()]
    assert cfg.back_edges == ((2, 2), (3, 1)) and cfg.loop_heads == {1, 2}
    loops = cfg.natural_loops()
    assert loops[1].body == {1, 2, 3} and loops[1].exits == ((3, 4),)
    assert loops[2].body == {2} and loops[2].exits == ((2, 3),) and loops[2].latches == (2,)
    assert cfg.idom == [None, 0, 1, 2, 3, 4]
    assert cfg.dominators(4) == [4, 3, 2, 1, 0]


def test_guarded_ret_is_an_early_exit():
    cfg = build_cfg(fn(op(), ret(g=True), op(), ret()))
    assert succs(cfg) == [(2, 1), (2,), ()]
    assert cfg.ipdom[0] == 2 and cfg.reconvergence_point(0) == cfg.exit
    assert cfg.control_dependence() == {0: {1}}


@pytest.mark.parametrize("cls", [BrxPlain, BrxBranch])
def test_brx_idx_three_targets(cls):
    cfg = build_cfg(fn(op(), brx("TS", cls=cls), table("TS", "A", "B", "C"),
                       ListDirective("branchtargets", ("A", "B", "C"), ""),
                       Label("A"), op(), bra("D"),
                       Label("B"), op(), bra("D"),
                       Label("C"), op(),
                       Label("D"), ret()))
    # the table label names data, not code: it opens no block
    assert [b.labels for b in cfg.blocks] == [(), ("A",), ("B",), ("C",), ("D",), ()]
    assert succs(cfg)[0] == (1, 2, 3)
    assert cfg.idom[4] == 0 and cfg.ipdom[0] == 4
    assert cfg.control_dependence() == {0: {1, 2, 3}}


def test_guarded_brx_keeps_fall_through():
    cfg = build_cfg(fn(brx("TS", g=True), table("TS", "A", "A"), op(), Label("A"), ret()))
    assert succs(cfg)[0] == (2, 1)


def test_undefined_targets_raise_with_span():
    with pytest.raises(CFGError) as err:
        build_cfg(fn(bra("NOWHERE")))
    assert err.value.span == Span(0, 1, 7, 5, 7, 6)
    with pytest.raises(CFGError):
        build_cfg(fn(brx("NOTABLE")))
    with pytest.raises(CFGError):
        build_cfg(fn(brx("X"), Label("X"), ret()))  # a code label, not a table


def test_unreachable_after_unguarded_bra():
    cfg = build_cfg(fn(bra("L"), op(), Label("L"), ret()))
    assert succs(cfg) == [(2,), (2,), (3,), ()]
    assert cfg.unreachable_blocks == (1,) and 1 not in cfg.rpo()
    assert cfg.blocks[2].preds == (0, 1) and cfg.idom[2] == 0 and cfg.idom[1] is None
    assert not cfg.dominates(0, 1) and cfg.dominates(1, 1) and cfg.dominators(1) == [1]
    assert cfg.ipdom[1] == 2 and cfg.dominance_frontier[1] == frozenset()


def test_irreducible_cycle():
    # entry jumps into both A and B; A <-> B: no block of the cycle dominates the other
    cfg = build_cfg(fn(bra("B", g=True),
                       Label("A"), bra("DONE", g=True),
                       Label("B"), bra("A", g=True),
                       Label("DONE"), ret()))
    assert succs(cfg) == [(2, 1), (3, 2), (1, 3), (4,), ()]
    assert cfg.idom == [None, 0, 0, 0, 3]
    assert not cfg.dominates(1, 2) and not cfg.dominates(2, 1)
    assert cfg.loop_heads == {2} and cfg.back_edges == ((1, 2),)
    loop = cfg.natural_loops()[2]
    assert loop.body == {1, 2} and not loop.reducible
    assert loop.exits == ((1, 3), (2, 3))


def test_infinite_loop_reconverges_only_at_exit():
    # one arm spins forever: code after the other arm is decided by the branch
    cfg = build_cfg(fn(bra("SPIN", g=True), op(), ret(),
                       Label("SPIN"), op(), bra("SPIN")))
    assert succs(cfg) == [(2, 1), (3,), (2,), ()]
    assert cfg.virtual_edges == ((2, 3),)
    assert cfg.ipdom == [3, 3, 3, None]
    assert not cfg.post_dominates(1, 0)
    assert cfg.control_dependence() == {0: {1, 2}}
    assert cfg.natural_loops()[2].exits == ()


def test_diamond_inside_infinite_loop_still_reconverges_at_join():
    cfg = build_cfg(fn(op(), Label("H"), bra("Y", g=True), op(), bra("J"),
                       Label("Y"), op(), Label("J"), bra("H")))
    assert succs(cfg) == [(1,), (3, 2), (4,), (4,), (1,), ()]
    assert cfg.exit not in cfg.rpo() and cfg.unreachable_blocks == ()
    assert cfg.virtual_edges == ((4, 5),)
    assert cfg.reconvergence_point(1) == 4 and cfg.ipdom[4] == 5
    assert cfg.control_dependence() == {1: {2, 3}}


@pytest.mark.slow
def test_chain_of_100k_blocks():
    n = 100_000
    body = []
    for i in range(n):
        body += [Label(f"L{i}"), op(), bra(f"L{i + 1}" if i + 1 < n else "L0", g=i + 1 == n)]
    cfg = build_cfg(fn(*body))
    assert len(cfg.rpo()) == n + 1 and cfg.idom[n - 1] == n - 2
    assert cfg.dominates(0, n - 1) and cfg.post_dominates(n - 1, 0)
    assert cfg.loop_heads == {0} and len(cfg.natural_loops()[0].body) == n
    assert len(cfg.control_dependence()[n - 1]) == n
    assert cfg.dominance_frontier[n - 1] == {0}
    assert cfg.block_of(body[-2]) == n - 1


def registered(opcode: str) -> type:
    try:
        from ptxlint.ir.registry import resolve
        found = resolve(opcode)
    except Exception as exc:  # colleagues' opcode modules may be mid-edit
        pytest.skip(f"instruction modules not importable: {exc}")
    if found is None or found[1] != opcode or not issubclass(found[0], Branch):
        pytest.skip(f"{opcode} is not registered as a Branch yet")
    return found[0]


def test_registered_bra_and_brx_if_available():
    b, x = registered("bra"), registered("brx.idx")
    cfg = build_cfg(fn(b("bra", (), Guard(P), (Symbol("L"),)), op(),
                       Label("L"), x("brx.idx", (), None, (R, Symbol("T"))),
                       table("T", "L", "M"), Label("M"), ret()))
    assert succs(cfg) == [(2, 1), (2,), (2, 3), (4,), ()]


# --- random graphs against the definitions -----------------------------------------
KINDS = ("ret", "cret", "bra", "cbra", "brx", "fall")


@st.composite
def random_functions(draw):
    """A body whose block i ends per a random kind; returns it with the intended
    successor lists (exit = n)."""
    n = draw(st.integers(1, 9))
    body, want = [], []
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        target = draw(st.integers(0, n - 1))
        body += [Label(f"B{i}"), op()]
        if kind in ("ret", "cret"):
            body.append(ret(g=kind == "cret"))
            want.append([n] + ([i + 1] if kind == "cret" else []))
        elif kind in ("bra", "cbra"):
            body.append(bra(f"B{target}", g=kind == "cbra"))
            want.append([target] + ([i + 1] if kind == "cbra" else []))
        elif kind == "brx":
            ts = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
            body += [brx(f"T{i}"), table(f"T{i}", *(f"B{t}" for t in ts))]
            want.append(ts)
        else:
            want.append([i + 1])
    return fn(*body), [tuple(dict.fromkeys(w)) for w in want] + [()]


def reachable(succ, start, removed=None):
    seen, stack = {start} - {removed}, [start] if start != removed else []
    while stack:
        for s in succ[stack.pop()]:
            if s != removed and s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def check_tree(n, root, succ, parent, relation):
    """`relation(a, b)` and `parent` against: a dominates b iff b cannot be reached
    from root once a is removed (checked for every b reachable from root)."""
    for b in reachable(succ, root):
        doms = doms_of(succ, root, b)
        assert {a for a in range(n) if relation(a, b)} == doms
        strict = doms - {b}
        if b == root:
            assert parent[b] is None
        else:  # the immediate one is the strict dominator all others dominate
            assert parent[b] in strict and all(a in doms_of(succ, root, parent[b]) for a in strict)


def doms_of(succ, root, b):
    n = len(succ)
    return {a for a in range(n) if a == b or b not in reachable(succ, root, removed=a)}


def pos_of(cfg):
    return set(cfg.rpo())


def reverse(succ):
    rev = [[] for _ in succ]
    for u, ss in enumerate(succ):
        for v in ss:
            rev[v].append(u)
    return rev


@settings(max_examples=300, deadline=None)
@given(random_functions())
def test_random_graphs_match_definitions(case):
    function, want = case
    cfg = build_cfg(function)
    assert succs(cfg) == want
    n, exit_ = len(want), cfg.exit
    check_tree(n, cfg.entry, want, cfg.idom, cfg.dominates)
    # post-dominators: the same definition on the reversed graph with virtual edges
    aug = [list(s) + ([exit_] if (u, exit_) in cfg.virtual_edges else [])
           for u, s in enumerate(want)]
    assert reachable(reverse(aug), exit_) == set(range(n))
    check_tree(n, exit_, reverse(aug), cfg.ipdom, cfg.post_dominates)
    real_exit = reachable(reverse(want), exit_)
    sources = [u for u, _ in cfg.virtual_edges]
    assert all(u not in real_exit for u in sources)
    for u in sources:  # one per sink component: all it reaches reaches it back
        assert all(u in reachable(want, v) for v in reachable(want, u))
        assert all(v not in reachable(want, u) for v in sources if v != u)
    for u in range(n):  # each post-dominance claim also holds on the real graph
        for a in range(n):
            if a != u and cfg.post_dominates(a, u):
                assert exit_ not in reachable(want, u, removed=a)
    # control dependence: b on a iff b post-dominates a successor of a
    # but does not strictly post-dominate a (Ferrante, Ottenstein, Warren)
    for a, deps in cfg.control_dependence().items():
        assert len(want[a]) > 1
        expect = {b for b in range(n) if any(cfg.post_dominates(b, s) for s in want[a])
                  and not (b != a and cfg.post_dominates(b, a))}
        assert deps == expect
    assert set(cfg.control_dependence()) == {a for a in range(n) if len(want[a]) > 1}
    # dominance frontier: a dominates a predecessor of b but not strictly b itself
    for a in pos_of(cfg):
        expect = {b for b in pos_of(cfg) for p in cfg.blocks[b].preds
                  if cfg.is_reachable(p) and cfg.dominates(a, p)
                  and not (a != b and cfg.dominates(a, b))}
        assert cfg.dominance_frontier[a] == expect
    for insn in function.instructions:
        b, i = cfg.position(insn)
        assert cfg.blocks[b].instructions[i] is insn
    # loops: every retreating edge is inside its loop, exits leave it
    for head, loop in cfg.natural_loops().items():
        assert head in loop.body and set(loop.latches) <= loop.body
        assert all(u in loop.body and v not in loop.body for u, v in loop.exits)
    # rpo: a topological order once retreating edges are dropped
    pos = {b: i for i, b in enumerate(cfg.rpo())}
    assert set(pos) == reachable(want, cfg.entry)
    for u in pos:
        for v in want[u]:
            assert pos[u] < pos[v] or (u, v) in cfg.back_edges
