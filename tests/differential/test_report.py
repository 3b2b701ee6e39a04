"""The report generator: the table's shape, splicing into the document, and the
document's generated block in place."""
from __future__ import annotations

from pathlib import Path

from differential import run_case
from differential.corpus import sample_cases
from differential.report import BEGIN, END, render, splice, tally

ROOT = Path(__file__).parents[2]


def test_render_counts_findings_and_confirmations():
    results = [run_case(c) for rel in ("out-of-bounds/missing_guard.bad.ptx",
                                       "out-of-bounds/missing_guard.ok.ptx")
               for c in sample_cases(ROOT / "ptx_samples" / rel)]
    t = tally(results)["out-of-bounds"]
    assert (t.findings, t.confirmed, t.missed) == (2, 2, 0)
    text = render(results, [("x", "not supported")])
    assert text.startswith(BEGIN) and text.rstrip().endswith(END)
    row = next(line for line in text.splitlines() if line.startswith("| `out-of-bounds`"))
    assert row.split("|")[2:5] == [" 2 (0) ", " 2 ", " 0 "]
    assert "- x: not supported" in text and "none" in text


def test_splice_replaces_only_the_generated_block():
    doc = f"# T\n\nprose\n\n{BEGIN}\nold\n{END}\n\nafter\n"
    new = splice(doc, f"{BEGIN}\nnew\n{END}\n")
    assert new == f"# T\n\nprose\n\n{BEGIN}\nnew\n{END}\n\nafter\n"
    assert splice("# T\n", "G\n") == "# T\n\nG\n"


def test_the_document_carries_a_generated_table():
    doc = (ROOT / "docs" / "soundness.md").read_text()
    block = doc.split(BEGIN, 1)[1].split(END, 1)[0]
    assert "| `out-of-bounds` |" in block and "python -m differential" in doc
