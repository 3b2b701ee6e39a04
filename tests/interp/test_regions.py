"""The pre-passes made cheap for the time budget give the answers of their definitions:
divergence regions (`SyncDependence`, one search per branch asked for) and the loops of
irreducible graphs (`CFG._loop`, searched within the head's strongly connected
component), on random graphs against the straightforward computations."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.cfg import build_cfg
from ptxlint.deadline import Deadline, DeadlineExceeded
from ptxlint.interp.divergence import SyncDependence
from ptxlint.ir.instruction import Guard, Instruction
from ptxlint.ir.module import Function, Label
from ptxlint.ir.operands import Register, Symbol
from ptxlint.ir.traits import Branch, Terminator

# Unregistered instruction classes, as in tests/test_cfg.py: the graphs do not depend on
# the opcode modules.


class Op(Instruction):
    __slots__ = ()


class Bra(Branch):
    __slots__ = ()


class Ret(Terminator):
    __slots__ = ()


R = Register("%r0", "%r0")
P = Register("%p1", "%p1")


def define(i: int) -> Op:
    """An instruction writing register %d<i> (block i's own)."""
    return Op("add", ("s32",), None, (Register(f"%d{i}", f"%d{i}"), R, R))


def bra(label: str, g: bool = False) -> Bra:
    return Bra("bra", (), Guard(P) if g else None, (Symbol(label),))


def ret(g: bool = False) -> Ret:
    return Ret("ret", (), Guard(P) if g else None, ())


def fn(*body) -> Function:
    return Function("k", "entry", body=list(body))


@st.composite
def graphs(draw):
    """A function whose block i writes %d<i> and ends in a fall-through, a jump, a
    guarded jump or a (guarded) return: irreducible graphs and infinite loops included."""
    n = draw(st.integers(1, 12))
    body = []
    for i in range(n):
        kind = draw(st.sampled_from(["fall", "bra", "cbra", "cbra", "cret"]))
        target = draw(st.integers(0, n - 1))
        body += [Label(f"B{i}"), define(i)]
        if kind == "bra":
            body.append(bra(f"B{target}"))
        elif kind == "cbra":
            body.append(bra(f"B{target}", g=True))
        elif kind == "cret":
            body.append(ret(g=True))
    return fn(*body)


def reference_sync(cfg) -> dict[int, tuple[set[int], set[str]]]:
    """Per branch: (merge blocks, registers its region defines), as defined in
    `divergence.py`: arms searched one by one up to the immediate post-dominator."""
    out = {}
    for block in cfg.blocks:
        if len(block.succs) < 2:
            continue
        stop = cfg.ipdom[block.index]
        reached = []
        for s in block.succs:
            if s == stop:
                continue
            seen, todo = {stop}, [s]
            while todo:
                b = todo.pop()
                if b not in seen:
                    seen.add(b)
                    todo.extend(cfg.blocks[b].succs)
            reached.append(seen - {stop})
        region = set().union(*reached)
        defs = {k for b in region for i in cfg.blocks[b].instructions for k in i.def_keys}
        merges = {b for b in region if len(cfg.blocks[b].preds) > 1
                  and sum(b in r for r in reached) > 1}
        if stop is not None:
            merges.add(stop)
        out[block.index] = (merges, defs)
    return out


@settings(max_examples=300, deadline=None)
@given(graphs(), st.data())
def test_regions_match_the_definition(function, data):
    cfg = build_cfg(function)
    want = reference_sync(cfg)
    sync = SyncDependence(cfg)
    divergent = set(data.draw(st.sets(st.sampled_from(sorted(want)))) if want else set())
    if data.draw(st.booleans()):  # as the fixpoint does: asked for when it diverges
        for b in divergent:
            sync.merges_of(b)
    for m in range(len(cfg.blocks)):
        expect_branches = sorted(b for b in divergent if m in want[b][0])
        assert sorted(sync.branches_at(m, divergent)) == expect_branches
        assert sync.tainted(m, divergent) == set().union(
            *[want[b][1] for b in expect_branches])
    for b, (merges, defs) in want.items():
        assert set(sync.merges_of(b)) == merges
        assert sync.defined_by([b]) == defs
        assert all(sync.defines(b, k) for k in defs)
    assert sync.merges_of(cfg.exit) == ()  # no branch: nothing


def reference_loop_body(cfg, head: int, latches) -> set[int]:
    """Blocks reaching a latch without passing the head, searched over the whole graph,
    cut to those the head reaches within them."""
    def search(roots, step):
        seen, todo = set(roots), list(roots)
        while todo:
            for s in step(todo.pop()):
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return seen
    reach = search([t for t in latches if t != head],
                   lambda b: [p for p in cfg.blocks[b].preds if p != head and cfg.is_reachable(p)])
    return {head} | search([s for s in cfg.blocks[head].succs if s in reach],
                           lambda b: [s for s in cfg.blocks[b].succs if s in reach])


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_loops_match_the_whole_graph_search(function):
    cfg = build_cfg(function)
    for head, loop in cfg.natural_loops().items():
        assert loop.body == reference_loop_body(cfg, head, loop.latches)


def test_an_expired_deadline_stops_a_region_search():
    function = fn(*[x for i in range(4) for x in (Label(f"B{i}"), define(i),
                                                   bra("B0", g=True))])
    cfg = build_cfg(function, Deadline(0.0))
    with pytest.raises(DeadlineExceeded) as info:
        SyncDependence(cfg).merges_of(0)
    assert "divergence regions" in info.value.phase
