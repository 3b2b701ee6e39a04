"""Analyses of one function on one deadline share its prepass (`interp/prepass.py`: the
CFG, relations, sync dependence, loop counters, plans): a re-analysis under another
launch finds the same fixpoint, the same work and the same narrowing as one made with
nothing shared, whichever order the analyses run in."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ptxlint.analysis import analyze
from ptxlint.deadline import Deadline
from ptxlint.ir.build import parse_module
from ptxlint.launch import LaunchConfig
from ptxlint.lint import analysis_params

ROOT = Path(__file__).resolve().parents[2]
FILES = [*sorted(ROOT.glob("ptx_samples/out-of-bounds/*.ptx"))[:8],
         *sorted(ROOT.glob("ptx_samples/shared-memory-race/*.ptx"))[:4],
         ROOT / "benchmarks/outliers/sorting_network.ptx"]
LAUNCHES = [None, LaunchConfig(block=(1, 1, 1)), LaunchConfig(block=(1024, 1, 1)),
            LaunchConfig(block=(96, 2, 1))]


def _summary(result):
    facts = result.facts
    if facts is None:
        return None
    # narrowing by the shared relations, asked after every analysis ran
    narrowed = [n and n.address for n in map(facts.narrowed, facts.accesses)]
    return (facts.work, facts.in_states, sorted(facts.divergent),
            [(acc.insn.span, acc.address, acc.guard) for acc in facts.accesses], narrowed,
            [d.message for d in result.diagnostics])


def _analyses(module, fn, launches, deadline):
    params = analysis_params()
    out = []
    for launch in launches:
        try:
            out.append(analyze(fn, launch, module=module, params=params, deadline=deadline))
        except ValueError:  # a block that does not fit the kernel
            out.append(None)
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_shared_prepass_analyses_as_a_fresh_one(path):
    module = parse_module(path.read_text(), str(path)).module
    for fn in module.entries:
        shared = _analyses(module, fn, LAUNCHES, Deadline(None))  # one deadline: shared
        backwards = _analyses(module, fn, LAUNCHES[::-1], Deadline(None))[::-1]
        for launch, a, b in zip(LAUNCHES, shared, backwards):
            fresh = _analyses(module, fn, [launch], Deadline(None))[0]  # nothing shared
            if fresh is None:
                assert a is None and b is None
                continue
            assert _summary(a) == _summary(fresh) == _summary(b), (fn.name, launch)
        live = [r for r in shared if r is not None and r.facts is not None]
        assert len({id(r.facts.cfg) for r in live}) <= 1  # the CFG was built once


def test_prepass_is_per_deadline():
    path = ROOT / "benchmarks/outliers/sorting_network.ptx"
    module = parse_module(path.read_text(), str(path)).module
    fn = module.entries[0]
    deadline = Deadline(None)
    a = analyze(fn, module=module, deadline=deadline)
    b = analyze(fn, replace(LaunchConfig(), block=(64, 1, 1)), module=module,
                deadline=deadline)
    c = analyze(fn, module=module, deadline=Deadline(None))
    assert a.facts.cfg is b.facts.cfg
    assert a.facts.ctx.relations is b.facts.ctx.relations
    assert c.facts.cfg is not a.facts.cfg  # another lint: nothing shared
