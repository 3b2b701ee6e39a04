"""The hardware figures reach the rules through `RuleContext.arch` (`ptxlint/arch.py`, the
one place they live): every known target has the same warp, banks and sectors today, and
a target with other figures (built here by hand) changes what `bank-conflict` and
`uncoalesced-access` report, so no rule reads the constants behind the context's back."""
from __future__ import annotations

from dataclasses import replace

import pytest

from ptxlint import arch
from ptxlint.lint import LintOptions, lint_text

from ..conftest import ROOT
from ..expectations import options_for

SAMPLES = ROOT / "ptx_samples"


def _findings(path, rule: str, monkeypatch=None, **figures) -> list:
    """`rule`'s findings on a sample, on sm_90 changed by `figures` (`banks=16`)."""
    if figures:
        real = arch.get
        monkeypatch.setattr(arch, "get", lambda name=None, origin="default":
                            replace(real(name, origin), **figures))
    text = path.read_text()
    return [d for d in lint_text(text, str(path), options_for(text)).diagnostics
            if d.rule == rule]


@pytest.mark.parametrize("target", arch.known())
def test_every_known_target_has_the_same_geometry(target: str):
    a = arch.get(target)
    assert (a.warp_size, a.banks, a.bank_bytes, a.sector_bytes, a.line_bytes,
            a.static_shared_limit) == (32, 32, 4, 32, 128, 48 * 1024)
    assert [a.phase_lanes(n) for n in (1, 4, 8, 16)] == [32, 32, 16, 8]


def test_shared_memory_per_block_differs_by_target():
    sizes = {t: arch.get(t).max_shared_per_block // 1024 for t in ("sm_75", "sm_80", "sm_86",
                                                                    "sm_90", "sm_120")}
    assert sizes == {"sm_75": 64, "sm_80": 163, "sm_86": 99, "sm_90": 227, "sm_120": 99}


def test_the_suffix_and_the_origin_are_kept():
    a = arch.get("sm_90a", "--arch")
    assert (a.name, a.target, a.variant, a.origin) == ("sm_90", "sm_90a", "a", "--arch")
    assert arch.get(None).origin == "default" and arch.get(None) == arch.get("sm_90")


def test_bank_conflict_counts_the_targets_banks(monkeypatch):
    column = SAMPLES / "bank-conflict" / "generic.bad.ptx"
    [today] = _findings(column, "bank-conflict")
    assert today.details["ways"] == 32
    # 16 banks of 4 bytes: a pass serves 16 lanes, the column hits one bank per pass
    [narrow] = _findings(column, "bank-conflict", monkeypatch, banks=16)
    assert narrow.details["ways"] == 16


def test_uncoalesced_access_counts_the_targets_sectors(monkeypatch):
    path = SAMPLES / "uncoalesced-access" / "blocked.bad.ptx"
    [today] = _findings(path, "uncoalesced-access")
    assert (today.details["sectors_per_request"],
            today.details["ideal_sectors_per_request"]) == (32, 4)
    [wide] = _findings(path, "uncoalesced-access", monkeypatch, sector_bytes=64)
    assert wide.details["ideal_sectors_per_request"] == 2


@pytest.mark.parametrize("target", ["sm_75", "sm_80", "sm_120"])
def test_another_target_reports_the_same_conflicts(target: str):
    path = SAMPLES / "bank-conflict" / "column.bad.ptx"
    text = path.read_text()
    want = [(d.line, d.message) for d in lint_text(text, str(path), options_for(text))
            .diagnostics if d.rule == "bank-conflict"]
    options = options_for(text)
    options.arch = target
    got = [(d.line, d.message) for d in lint_text(text, str(path), options).diagnostics
           if d.rule == "bank-conflict"]
    assert got == want and want


def test_lint_options_arch_reaches_the_rules():
    text = (SAMPLES / "unsupported-instruction" / "redux_below_sm80.ok.ptx").read_text()
    [d] = [d for d in lint_text(text, "t.ptx", LintOptions(arch="sm_75")).diagnostics
           if d.rule == "unsupported-instruction"]
    assert d.details["origin"] == "--arch" and d.details["target"] == "sm_75"
