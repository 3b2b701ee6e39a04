"""The soundness suite for `warp-sync-mask`: the emulator's `warp-sync` events (and
`warp-barrier` events at a `bar.warp.sync` with a computed mask) confirm the findings of
the samples, a dropped finding is a miss, the clean twins run without an event, and a
mask the rule cannot evaluate leaves the event unjudged."""
from __future__ import annotations

from pathlib import Path

import pytest

import differential.case as case_mod
from differential import run_case
from differential.corpus import sample_cases

SAMPLES = Path(__file__).parents[2] / "ptx_samples" / "warp-sync-mask"
RULE = "warp-sync-mask"
BAD = sorted(p.name for p in SAMPLES.glob("*.bad.ptx"))


def one(name: str):
    [case] = sample_cases(SAMPLES / name)
    return case


@pytest.mark.parametrize("name", BAD)
def test_an_observed_violation_confirms_its_finding(name):
    result = run_case(one(name))
    assert result.sound, result.problems()
    assert result.comparison.observed[RULE] > 0
    assert any(ok for (r, _site), ok in result.comparison.findings.items() if r == RULE)


@pytest.mark.parametrize("name", [n.replace(".bad.", ".ok.") for n in BAD])
def test_the_clean_twin_shows_no_violation(name):
    result = run_case(one(name))
    assert result.sound, result.problems()
    assert result.comparison.observed[RULE] == 0
    assert not any(r == RULE for r, _site in result.comparison.findings)


@pytest.mark.parametrize("name", ["half_warp_shuffle.bad.ptx", "ballot_syncwarp.bad.ptx",
                                  "segment_scan.bad.ptx"])
def test_a_dropped_finding_is_a_miss(name, monkeypatch):
    real = case_mod.lint_kernel

    def without(*args, **kw):
        side = real(*args, **kw)
        side.diagnostics = [d for d in side.diagnostics if d.rule != RULE]
        return side

    monkeypatch.setattr(case_mod, "lint_kernel", without)
    result = run_case(one(name))
    assert {b.kind for b in result.breaches()} == {"missed"}
    assert {b.subject.rule for b in result.breaches()} == {RULE}


def test_a_mask_from_loaded_data_is_unjudged(tmp_path):
    """The ballot's predicate is loaded data: the rule does not evaluate the mask, so
    the violation the run shows is unjudged, not missed."""
    text = (SAMPLES / "ballot_syncwarp.bad.ptx").read_text()
    text = text.replace("setp.lt.u32 \t%p2, %r2, 24;", "setp.lt.u32 \t%p2, %r2, 24;\n"
                        "\tld.global.u32 \t%r14, [%rd3];\n\tsetp.ne.s32 \t%p2, %r14, 0;")
    assert "ld.global.u32 \t%r14" in text
    path = tmp_path / "data_ballot.bad.ptx"
    path.write_text(text)
    [case] = sample_cases(path)
    result = run_case(case)
    assert result.sound, result.problems()
    assert [o.rule for o in result.comparison.unjudged] == [RULE]
