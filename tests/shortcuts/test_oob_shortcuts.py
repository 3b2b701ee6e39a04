"""Shortcuts behind `out-of-bounds` answer as the code they replace: the memo of
`Relations._narrow_by` narrows a state as `links.narrow_by` does, `Facts.accesses` (walked
block by block, each only up to its last access) and `Facts.access_of` give the accesses
a walk over every instruction gives, `site_bounds` skips the thread bounds only where
the offsets do not read them, and a kernel's first threshold probe stopped past
`SEARCH_PROBE_WORK` reports what finishing it does."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ptxlint.interp import links
from ptxlint.interp.relations import _narrow
from ptxlint.ir.build import parse_module
from ptxlint.ir.operands import Address, Bracketed, registers_in
from ptxlint.ir.traits import MemoryAccess
from ptxlint.lint import LintOptions, lint_module
from ptxlint.rules import out_of_bounds as oob
from ptxlint.rules.base import RuleContext
from ptxlint.rules.memory_sites import memory_sites, path_bounds
from ptxlint.rules.out_of_bounds import offsets, site_bounds

from . import ROOT, linted_facts

FILES = sorted([*ROOT.glob("ptx_samples/out-of-bounds/*.ptx"),
                *ROOT.glob("ptx_samples/misaligned-access/*.ptx"),
                ROOT / "benchmarks/outliers/sorting_network.ptx"])


def _keys(insn) -> list[str]:
    return [r.key for op in insn.operands if isinstance(op, (Address, Bracketed))
            for r in registers_in(op)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_memoised_narrowing_narrows_as_links(path):
    for facts in linted_facts(path):
        relations = facts.ctx.relations
        if relations is None:
            continue
        for acc in facts.accesses:
            keys = _keys(acc.insn)
            avail = relations.before(acc.insn)
            plain = acc.state.copy()
            relations.narrow(acc.state.copy(), keys, avail, facts.ctx)  # builds, fills the memo
            by_reg, insns, names = relations.by_reg, relations.insns, relations.names

            def related(reg, avail=avail):
                return [(insns[r], names[r]) for r in by_reg.get(reg, ()) if avail >> r & 1]
            expected = _narrow(plain, keys, related, relations.compared, facts.ctx,
                               lambda insn, _shape, s, ctx: links.narrow_by(insn, s, ctx))
            for _ in range(2):  # the second from the memo
                memo = acc.state.copy()
                assert relations.narrow(memo, keys, avail, facts.ctx) == expected
                if expected is not None:
                    assert memo.regs == plain.regs


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_accesses_are_those_of_a_full_walk(path):
    for facts in linted_facts(path):
        walked = [(b, insn, state.copy()) for b, insn, state in facts.walk()
                  if isinstance(insn, MemoryAccess)]
        got = {id(a.insn): a for a in facts.accesses}
        assert list(got.values()) == [got[id(i)] for _, i, _ in walked if id(i) in got]
        for b, insn, before in walked:
            acc = got.get(id(insn))
            assert facts.access_of(insn) is acc
            if acc is not None:
                assert acc.block == b
                if insn.guard is None:
                    assert acc.state.regs == before.regs


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_site_bounds_change_no_offsets(path):
    for facts in linted_facts(path):
        for site in memory_sites(facts):
            full = path_bounds(site.access.state, facts.ctx.bounds)
            assert offsets(site, site_bounds(site, facts)) == offsets(site, full)


PROBED = [ROOT / "ptx_samples/out-of-bounds" / f"{name}.ptx"
          for name in ("phase_gain.bad", "phase_gain.ok", "guard_counter.bad",
                       "lane_shift.bad", "selp_address.bad")]


def _lint(path: Path):
    module = parse_module(path.read_text(), str(path)).module
    return lint_module(module, LintOptions(enable=frozenset({"out-of-bounds"})))


@pytest.mark.parametrize("limit", [20, 100, 3000])
def test_stopped_first_probe_changes_no_report(monkeypatch, limit):
    """With the probe limit below some first probes' work (phase_gain's costs 298),
    stopping them there reports what finishing them does."""
    monkeypatch.setattr(oob, "SEARCH_PROBE_WORK", limit)
    asked = []
    original = RuleContext.reanalyze

    def watched(rc, launch, params, phase):
        facts = original(rc, launch, params, phase)
        asked.append((params.max_work, facts is None))
        return facts
    monkeypatch.setattr(RuleContext, "reanalyze", watched)
    for path in PROBED:
        monkeypatch.setattr(oob, "FIRST_PROBE_PARAMS", oob.PROBE_PARAMS)
        full = _lint(path)
        monkeypatch.setattr(oob, "FIRST_PROBE_PARAMS",
                            replace(oob.PROBE_PARAMS, max_work=limit))
        assert _lint(path) == full
    if limit == 100:
        assert (100, True) in asked  # a first probe was stopped
