"""Shortcuts in the lane-by-lane machinery answer as the definitions they replace:
`active_lanes` shares a `block_lanes` answer between accesses of one basic block only
where computing it again gives the same, and `warp.unique_rows` on few rows goes
through a dict instead of `np.unique`, in the same order."""
from __future__ import annotations

import numpy as np
import pytest

from ptxlint.analysis import analyze
from ptxlint.domains.lattice import Tri
from ptxlint.domains.value import Value
from ptxlint.interp.facts import Access
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig
from ptxlint.lint import analysis_params
from ptxlint.threads.active_lanes import CELLS, _compute, block_lanes
from ptxlint.threads.member_masks import sync_sites
from ptxlint.threads.thread_eval import ThreadSpace
from ptxlint.threads.thread_exprs import expr_builder
from ptxlint.threads.warp import _mix, unique_rows

from . import ROOT, linted_facts

FILES = sorted([*ROOT.glob("ptx_samples/bank-conflict/*.ptx"),
                *ROOT.glob("ptx_samples/uncoalesced-access/*.ptx"),
                *ROOT.glob("ptx_samples/warp-sync-mask/*.ptx"),
                ROOT / "benchmarks/outliers/sorting_network.ptx"])


def _sync_access(facts, insn) -> Access | None:
    """The question `member_masks` asks of a warp-synchronous instruction."""
    state = expr_builder(facts).state(insn)
    if state is None or insn.guard is not None:
        return None
    return Access(insn, facts.cfg.block_of(insn), Value.top(), state.copy(), Tri.TRUE, True)


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return (np.array_equal(a.mask, b.mask) and a.exact == b.exact
            and a.sym_gcd == b.sym_gcd and list(a.values) == list(b.values)
            and all(np.array_equal(a.values[k], b.values[k]) for k in a.values)
            and a.names == b.names and (a.start is None) == (b.start is None)
            and (a.start is None or np.array_equal(a.start, b.start)))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_shared_answers_are_those_computed_again(path):
    for facts in linted_facts(path):
        asked = [(a, True) for a in facts.accesses] + [(a, False) for a in facts.accesses]
        asked += [(a, False) for insn in sync_sites(facts)
                  if (a := _sync_access(facts, insn)) is not None]
        space = ThreadSpace.of(facts)
        for acc, address in asked:
            shared = block_lanes(facts, acc, address)
            if not space.exact and (address or shared is None):
                continue
            view = expr_builder(facts).at(acc.insn, acc.state)
            again, _ = _compute(facts, acc, view, space, address, CELLS)
            assert _same(shared, again), (path.name, acc.insn, address)


# `n` is written (with its own value) between the two loads of one block: the branch
# deciding the block reads it, so each load names it differently (its value at the load,
# or at the `setp`)
WRITTEN_BETWEEN = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u32 n)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .f32 %f<4>;
    .shared .align 16 .b8 s[1024];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, s;
    ld.param.u32 %r9, [n];
    setp.ge.u32 %p1, %r1, %r9;
    @%p1 bra DONE;
    shl.b32 %r3, %r1, 2;
    add.u32 %r4, %r2, %r3;
    ld.shared.f32 %f1, [%r4];
    mov.u32 %r9, %r9;
    ld.shared.f32 %f2, [%r4+4];
DONE:
    ret;
}
"""


def test_no_answer_is_shared_across_a_write_it_follows():
    module = parse_module(WRITTEN_BETWEEN, "t.ptx").module
    facts = analyze(module.entries[0], LaunchConfig.parse("block=64"),
                    module=module, params=analysis_params()).facts
    first, second = (block_lanes(facts, a, False) for a in facts.accesses
                     if a.space == "shared")
    assert first is not None and second is not None
    assert first.names != second.names


def _unique_rows_by_np_unique(a: np.ndarray):
    """`unique_rows` as it was: `np.unique` of the row hashes."""
    n, k = a.shape
    if n <= 1:
        uniq, inverse = np.unique(a, axis=0, return_inverse=True)
        return uniq, inverse.reshape(-1)
    with np.errstate(over="ignore"):
        h = (a * _mix()[:k]).sum(axis=1)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    uniq = a[first]
    if not (a == uniq[inverse]).all():
        uniq, inverse = np.unique(a, axis=0, return_inverse=True)
        return uniq, inverse.reshape(-1)
    return uniq, inverse


@pytest.mark.parametrize("seed", range(40))
def test_unique_rows_on_few_rows_is_np_unique_of_the_hashes(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 80)), int(rng.integers(1, 40))
    distinct = rng.integers(-3, 3, size=(int(rng.integers(1, 6)), k), dtype=np.int64)
    a = distinct[rng.integers(0, len(distinct), size=n)]
    if seed % 3 == 0:
        a[:, 0] = np.iinfo(np.int64).min  # the "no lane" marker of `lane_patterns`
    got, want = unique_rows(a), _unique_rows_by_np_unique(a)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
