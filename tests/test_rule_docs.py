"""The rule pages `docs/rules/<id>.md` are generated (`docs/generate_rule_docs.py`) from
each rule's docstring and a real run of ptxlint on its samples: regenerated here in
memory, every checked-in page must be the same, byte for byte, and every page must
belong to a registered rule. Parametrised per rule id, so a failure names the page."""
from __future__ import annotations

import importlib.util

import pytest

from ptxlint.rules.base import load_rules

from .conftest import ROOT

FIX = "regenerate the pages with `python docs/generate_rule_docs.py`"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "generate_rule_docs", ROOT / "docs" / "generate_rule_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    """Page name -> text, as the generator would write it now (one run for all)."""
    return {path.name: text for path, text in GEN.pages().items()}


@pytest.mark.parametrize("rule_id", sorted(load_rules()))
def test_rule_page_is_up_to_date(rule_id: str, generated: dict[str, str]):
    page = ROOT / "docs" / "rules" / f"{rule_id}.md"
    assert page.is_file(), f"docs/rules/{rule_id}.md is missing: {FIX}"
    assert page.read_text(encoding="utf-8") == generated[f"{rule_id}.md"], \
        f"docs/rules/{rule_id}.md is stale (its docstring, samples or output changed): {FIX}"


def test_every_page_belongs_to_a_rule(generated: dict[str, str]):
    orphans = sorted(p.name for p in (ROOT / "docs" / "rules").glob("*.md")
                     if p.name not in generated)
    assert not orphans, f"pages of no registered rule: {orphans} (delete them, or {FIX})"


def test_pages_are_deterministic(generated: dict[str, str]):
    """No absolute path and no timing: the same tree gives the same pages anywhere."""
    for name, text in generated.items():
        assert str(ROOT) not in text, f"{name} holds an absolute path"
        assert not GEN.TIMING.search(text), f"{name} holds a timing"
