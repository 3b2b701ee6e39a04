"""A kernel's analysis does not outlive its lint: the analyses the rules build on its
facts are dropped when the kernel is done (`Facts.release`), and a module's kernels are
swept as the lint goes when the collector is paused (`gcpause.kernel_sweeps`)."""
from __future__ import annotations

import gc
import weakref

import ptxlint.lint
from ptxlint import gcpause
from ptxlint.gcpause import collector_paused
from ptxlint.lint import lint_text

from .conftest import ROOT

SAMPLE = ROOT / "ptx_samples" / "shared-memory-race" / "double_buffer.ok.ptx"


def _facts_made(monkeypatch) -> list[weakref.ref]:
    made: list[weakref.ref] = []
    real = ptxlint.lint.analyze

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        made.append(weakref.ref(result.facts))
        return result

    monkeypatch.setattr(ptxlint.lint, "analyze", spy)
    return made


def test_a_kernels_facts_go_at_the_next_collection(monkeypatch):
    made = _facts_made(monkeypatch)
    lint_text(SAMPLE.read_text(), str(SAMPLE))
    gc.collect()
    assert made and all(ref() is None for ref in made)


def test_kernels_are_swept_while_the_collector_is_paused(monkeypatch):
    made = _facts_made(monkeypatch)
    monkeypatch.setattr(gcpause, "SWEEP_AFTER_INSTRUCTIONS", 1)
    text = SAMPLE.read_text()
    with collector_paused():
        report = lint_text(text + text.replace(".entry ", ".entry again_"), str(SAMPLE))
        assert len(report.entries) == 2
        assert made[0]() is None  # swept after the first kernel, with the second to come
    assert gc.get_freeze_count() == 0  # what the sweeps froze is back with the collector
