"""`Intervals._branch_pairs` (points on different arms of a block-varying branch run side
by side) solved as one forward problem over the CFG, against its definition: every point
on one arm (in `start` of one successor) meets every point of the other arms."""
from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from ptxlint.deadline import Deadline
from ptxlint.threads.barrier_intervals import Intervals, _bits


def _rpo(succs: list[list[int]]) -> list[int]:
    seen, post = set(), []

    def visit(b: int) -> None:
        seen.add(b)
        for s in succs[b]:
            if s not in seen:
                visit(s)
        post.append(b)

    visit(0)
    return post[::-1]


def _intervals(succs: list[list[int]], clean: list[bool]) -> Intervals:
    preds: list[list[int]] = [[] for _ in succs]
    for b, ss in enumerate(succs):
        for s in ss:
            preds[s].append(b)
    order = _rpo(succs)
    blocks = [SimpleNamespace(succs=tuple(ss), preds=tuple(preds[b]))
              for b, ss in enumerate(succs)]
    cfg = SimpleNamespace(blocks=blocks, rpo=lambda: list(order), deadline=Deadline())
    iv = Intervals.__new__(Intervals)
    iv.cfg, iv.clean = cfg, clean
    return iv


def _by_definition(iv: Intervals, out: list[int], start: list[int], branches) -> None:
    for d in branches:
        arms = [start[s] for s in iv.cfg.blocks[d].succs]
        for a, arm in enumerate(arms):
            others = 0
            for o, other in enumerate(arms):
                if o != a:
                    others |= other
            for k in _bits(arm):
                out[k] |= others


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 8))
    succs = [draw(st.lists(st.integers(0, n - 1), max_size=3)) for _ in range(n)]
    clean = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    points = draw(st.integers(0, 12))
    first = [0] * n
    for k in range(points):  # each point in the first segment of some block, or in none
        b = draw(st.integers(-1, n - 1))
        if b >= 0:
            first[b] |= 1 << k
    branches = draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))
    return succs, clean, first, points, branches


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_branch_pairs_match_their_definition(g):
    succs, clean, first, points, branches = g
    iv = _intervals(succs, clean)
    start = iv._forward(first)
    want = [1 << k for k in range(points)]
    got = list(want)
    _by_definition(iv, want, start, branches)
    iv._branch_pairs(got, start, first, branches)
    assert got == want
