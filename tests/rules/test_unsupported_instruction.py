"""`unsupported-instruction`: the samples, where the target comes from (`--arch` over
`.target`; none given: nothing judged), arch-specific targets, device functions, and the
docstring examples. The table itself is checked against ptxas in test_arch_features.py."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.unsupported_instruction import UnsupportedInstruction

from ..conftest import ROOT
from ..expectations import lint_sample

RULE = "unsupported-instruction"
SAMPLES = ROOT / "ptx_samples" / RULE


def module(body: str, target: str | None = "sm_80", extra: str = "") -> str:
    head = f".version 9.0\n{f'.target {target}' if target else ''}\n.address_size 64\n"
    return (head + extra + ".visible .entry k(.param .u64 p)\n{\n"
            "    .reg .b32 %r<8>;\n    .reg .pred %p<2>;\n    .reg .b64 %rd<4>;\n"
            "    mov.u32 %r1, %tid.x;\n" + body + "    ret;\n}\n")


def lint(text: str, arch: str | None = None):
    return [d for d in lint_text(text, "t.ptx", LintOptions(
        arch=arch, enable=frozenset({RULE}))).diagnostics if d.rule == RULE]


def test_redux_on_sm75():
    [d] = [d for d in lint_sample(SAMPLES / "redux_below_sm80.bad.ptx").diagnostics
           if d.rule == RULE]
    assert (d.line, d.severity, d.certainty) == (28, Severity.ERROR, Certainty.DEFINITE)
    assert d.message == ("`redux.sync.add.u32` needs sm_80 or higher; the target is sm_75 "
                         "(the module's .target)")
    assert d.details == {"opcode": "redux.sync.add.u32", "feature": "redux.sync",
                         "target": "sm_75", "minimum": "sm_80", "origin": ".target"}
    assert "__CUDA_ARCH__ >= 800" in d.help


def test_arch_option_overrides_the_target_and_is_named():
    text = module("    elect.sync %r2|%p1, -1;\n", target="sm_90")
    assert lint(text) == []
    [d] = lint(text, arch="sm_86")
    assert d.message.endswith("the target is sm_86 (the arch option: --arch, [tool.ptxlint] arch or the API's arch=)")
    assert lint(text.replace("sm_90", "sm_80"), arch="sm_90") == []


def test_no_target_is_not_judged_against_the_default():
    assert lint(module("    redux.sync.add.u32 %r2, %r1, -1;\n", target=None)) == []


def test_arch_specific_features_need_the_suffixed_target():
    text = module("    wgmma.fence.sync.aligned;\n", target="sm_90")
    [d] = lint(text)
    assert d.message == ("`wgmma.fence.sync.aligned` needs an arch-specific target (sm_90a); "
                         "the target is sm_90 (the module's .target)")
    assert d.notes == ("`wgmma` exists only on sm_90a",)
    assert lint(text.replace("sm_90", "sm_90a")) == []
    assert [x.details["minimum"] for x in lint(text.replace("sm_90", "sm_100a"))] == ["sm_90a"]


def test_the_most_demanding_form_is_reported():
    # add.bf16 is a .bf16 type (sm_80) and a bf16 add (sm_90)
    text = module("    .reg .b16 %h<3>;\n    mov.b16 %h1, 0;\n    add.rn.bf16 %h2, %h1, %h1;\n",
                  target="sm_75")
    assert [d.details["minimum"] for d in lint(text)] == ["sm_90"]


def test_device_functions_a_kernel_calls_are_checked():
    text = (".version 9.0\n.target sm_75\n.address_size 64\n"
            ".func (.reg .b32 r) f(.reg .b32 a)\n{\n    redux.sync.add.u32 r, a, -1;\n"
            "    ret;\n}\n"
            ".visible .entry k()\n{\n    .reg .b32 %r<3>;\n    mov.u32 %r1, %tid.x;\n"
            "    call (%r2), f, (%r1);\n    ret;\n}\n")
    assert [(d.line, d.details["feature"]) for d in lint(text)] == [(6, "redux.sync")]


# ---- the docstring's examples -------------------------------------------------------------
def _blocks(section: str) -> str:
    doc = UnsupportedInstruction.doc()
    body = doc.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


@pytest.mark.parametrize("section,found", [("Example", 1), ("Use instead", 0)])
def test_docstring_examples(section: str, found: int):
    block = _blocks(section)
    target = re.search(r"\.target (sm_\d+)", block).group(1)
    assert len(lint(module(block, target=target))) == found  # the block's `// .target`
