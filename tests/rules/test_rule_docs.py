"""Every registered rule documents itself: a docstring with the five sections, in
order (what `ptxlint --explain ID` prints), and a page `docs/rules/<id>.md` that says
how to suppress it. Parametrised per rule id, so a failure names the rule."""
from __future__ import annotations

import re

import pytest

from ptxlint.rules.base import load_rules

from ..conftest import ROOT

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead",
            "## Suppress")
RULES = load_rules()


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_docstring_has_the_five_sections_in_order(rule_id: str):
    doc = RULES[rule_id].doc()
    assert doc.splitlines() and doc.splitlines()[0].strip(), f"{rule_id}: no summary line"
    where = [doc.find(s) for s in SECTIONS]
    missing = [s for s, at in zip(SECTIONS, where) if at < 0]
    assert not missing, f"{rule_id}: docstring lacks {missing}"
    assert where == sorted(where), f"{rule_id}: sections out of order"


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_examples_are_ptx_blocks(rule_id: str):
    doc = RULES[rule_id].doc()
    for section in ("## Example", "## Use instead"):
        body = doc.split(section, 1)[1].split("\n## ", 1)[0]
        assert re.search(r"```ptx\n.+?```", body, re.S), \
            f"{rule_id}: '{section}' has no ```ptx block"


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_has_a_docs_page(rule_id: str):
    page = ROOT / "docs" / "rules" / f"{rule_id}.md"
    assert page.is_file(), f"{rule_id}: docs/rules/{rule_id}.md is missing"
    text = page.read_text()
    assert rule_id in text, f"{rule_id}: its page never names it"
    assert f"--disable {rule_id}" in text, f"{rule_id}: its page does not say how to suppress it"
