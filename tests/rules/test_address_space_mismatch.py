"""`address-space-mismatch`: findings on the samples (line, severity, message, details),
the other mismatches the rule knows, what it leaves alone, and the docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.address_space_mismatch import AddressSpaceMismatch

from ..conftest import ROOT
from ..expectations import lint_sample

RULE = "address-space-mismatch"
SAMPLES = ROOT / "ptx_samples" / RULE
PROLOGUE = """.version 8.0
.target sm_80
.address_size 64

.visible .entry example(.param .u64 buf)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .shared .align 4 .b8 tile[1024];
    .local .align 4 .b8 scratch[64];

    mov.u64 %rd10, tile;
    cvta.shared.u64 %rd11, %rd10;
"""


def lint(body: str):
    """This rule's findings on `body` inside the standard prologue (%rd10 = the `.shared`
    address of `tile`, %rd11 its generic address); lines count from the first line of
    `body`."""
    text = PROLOGUE + body + "    ret;\n}\n"
    shift = PROLOGUE.count("\n")
    return [(d.line - shift, d) for d in lint_text(text, "t.ptx", LintOptions(
        enable=frozenset({RULE}))).diagnostics if d.rule == RULE]


def sample(name: str):
    return [d for d in lint_sample(SAMPLES / name).diagnostics if d.rule == RULE]


# ---- the samples ------------------------------------------------------------------------------
def test_shared_load_through_a_global_pointer():
    [d] = sample("shared_via_global.bad.ptx")
    assert d.line == 25
    assert (d.severity, d.certainty) == (Severity.ERROR, Certainty.DEFINITE)
    assert d.message == "`.shared` load through a `.global` address (`shared_via_global_in`)"
    assert d.details == {"instruction_space": "shared", "address_space": "global",
                         "object": "shared_via_global_in"}
    assert d.help == "use a `.global` (or generic) access for this address"


def test_global_load_of_a_shared_variable_address():
    [d] = sample("global_of_shared.bad.ptx")
    assert d.line == 38
    assert d.message == "`.global` load through a `.shared` address (`tile`)"
    assert d.details == {"instruction_space": "global", "address_space": "shared",
                         "object": "tile"}


def test_global_load_through_a_generic_shared_address():
    [d] = sample("generic_shared_as_global.bad.ptx")
    assert d.line == 41
    assert d.message == "`.global` load through a generic address of shared memory (`tile`)"
    assert d.details["address_space"] == "shared"


def test_cvta_to_shared_of_a_global_pointer():
    [d] = sample("cvta_wrong_pointer.bad.ptx")
    assert d.line == 55
    assert d.message == "`cvta.to.shared` of a generic address of global memory (`stage_param_0`)"
    assert d.label == "`cvta.to.shared` expects a generic address of `.shared`"
    assert d.details == {"instruction_space": "shared", "address_space": "global",
                         "object": "stage_param_0"}


@pytest.mark.parametrize("name", ["shared_via_global.ok.ptx", "global_of_shared.ok.ptx",
                                  "generic_shared_as_global.ok.ptx",
                                  "cvta_wrong_pointer.ok.ptx"])
def test_twins_are_clean(name: str):
    assert sample(name) == []


# ---- the other mismatches ---------------------------------------------------------------------
def test_shared_access_through_an_unconverted_generic_address():
    [(line, d)] = lint("    ld.shared.f32 %f1, [%rd11];\n")
    assert d.message == "`.shared` load through a generic address of shared memory (`tile`)"
    assert d.details["address_space"] == "generic"
    assert d.help == "convert the address with `cvta.to.shared` first"


def test_generic_access_through_a_window_address():
    [(line, d)] = lint("    st.f32 [%rd10+8], %f1;\n")
    assert d.message == "generic store through a `.shared` address (`tile`)"
    assert d.details == {"instruction_space": "generic", "address_space": "shared",
                         "object": "tile"}


@pytest.mark.parametrize("insn,space", [("cvta.to.shared.u64 %rd12, %rd10;", "shared"),
                                        ("cvta.shared.u64 %rd12, %rd11;", "generic")])
def test_cvta_of_an_address_already_converted(insn: str, space: str):
    [(line, d)] = lint(f"    {insn}\n")
    assert line == 1 and d.details["address_space"] == space


def test_local_access_through_a_shared_address():
    [(_, d)] = lint("    ld.local.f32 %f1, [%rd10];\n")
    assert (d.details["instruction_space"], d.details["address_space"]) == ("local", "shared")


# ---- what it leaves alone ---------------------------------------------------------------------
@pytest.mark.parametrize("body", [
    "    ld.shared.f32 %f1, [%rd10];\n",                       # window address, window access
    "    ld.f32 %f1, [%rd11];\n",                              # generic address, generic access
    "    ld.f32 %f1, [tile];\n",                               # the assembler's generic address
    "    cvta.to.shared.u64 %rd12, %rd11;\n    ld.shared.f32 %f1, [%rd12];\n",
    "    ld.param.u64 %rd1, [buf];\n    ld.global.f32 %f1, [%rd1];\n",  # generic = global
    "    ld.param.u64 %rd1, [buf];\n    ld.global.u64 %rd2, [%rd1];\n"
    "    ld.shared.f32 %f1, [%rd2];\n",                        # loaded: origin unknown
    "    mov.u64 %rd3, scratch;\n    st.local.f32 [%rd3], %f1;\n",
])
def test_matching_or_unknown_spaces_are_clean(body: str):
    assert lint(body) == []


# ---- the docstring examples --------------------------------------------------------------------
def _doc_block(section: str) -> str:
    body = AddressSpaceMismatch.doc().split(section, 1)[1].split("\n## ", 1)[0]
    return re.search(r"```ptx\n(.+?)```", body, re.S).group(1)


def test_docstring_example_is_reported():
    [(line, d)] = lint(_doc_block("## Example"))
    assert line == 3 and d.details["address_space"] == "global"


def test_docstring_fix_is_clean():
    assert lint(_doc_block("## Use instead")) == []
