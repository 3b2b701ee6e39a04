"""Every sample under ptx_samples/<rule-id>/ produces exactly its annotated findings;
every `.ok.ptx` twin produces none at warning or above."""
from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ROOT
from .expectations import expectations, mismatches

RULE_SAMPLES = sorted(p for p in (ROOT / "ptx_samples").glob("*/*.ptx")
                      if p.parent.name not in ("cuda", "syntax", "cccl"))


@pytest.mark.parametrize("path", RULE_SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sample_matches_annotations(path: Path):
    problems = mismatches(path)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("path", [p for p in RULE_SAMPLES if p.name.endswith(".bad.ptx")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_defect_sample_has_expectations_and_a_clean_twin(path: Path):
    assert expectations(path.read_text()), "a .bad sample must annotate its findings"
    twin = path.with_name(path.name.replace(".bad.ptx", ".ok.ptx"))
    assert twin.exists(), f"missing clean twin {twin.name}"
    assert not expectations(twin.read_text()), "a clean twin expects nothing"
