"""No input makes the front end raise: random text and mutated real PTX."""
from __future__ import annotations

import io
import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptxlint.cli import main
from ptxlint.ir.build import parse_module
from ptxlint.ir.printer import print_module

from .conftest import sample_files

FRAGMENTS = [
    ".version 9.0\n", ".target sm_90\n", ".address_size 64\n", ".visible .entry k(", ")",
    "{", "}", ";", ",", ".reg .b32 %r<4>;", ".reg .pred %p;", "%r1", "%r2", "%tid.x", "@%p",
    "@!%p", "bra", "bra.uni", "$L1", ":", "ld.global.v4.f32", "st.shared.u32", "[", "]",
    "+", "-", "16", "0x10", "0f3F800000", "mov.u32", "add.s32", "ret;", "exit;", "\n", " ",
    ".shared .align 16 .b8 smem[1024];", "{%f1, _, %f3}", ".loc 1 2 3", ".file 1 \"a.cu\"",
    "call.uni (r), f, (a);", "=", "<", ">", "|", "!", "\"", "/*", "*/", "//", ".section",
    ".param .u64 p", ".func", "(", "%r<", "setp.lt.s32", "%p|%q", "brx.idx", ".branchtargets",
    "\t", "\x00", "é", "9999999999999999999999999", "0d", "0f", "((((((", "1<<",
]

SOURCES = [p.read_text() for p in sample_files()[:12]]


def _quiet_main(path: str) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--parse-only", "--format", "json", path])
    assert "Traceback" not in err.getvalue()
    return code


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join))
def test_random_fragments_never_raise(text: str):
    result = parse_module(text, "fuzz.ptx")
    for d in result.diagnostics:
        assert d.span is not None and d.line >= 1 and d.column >= 1
    print_module(result.module)  # whatever parsed can be printed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str):
    parse_module(text, "fuzz.ptx")


@st.composite
def mutated_sample(draw):
    text = draw(st.sampled_from(SOURCES)) if SOURCES else ".version 9.0\n"
    for _ in range(draw(st.integers(1, 6))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = min(len(text), i + draw(st.integers(0, 40)))
        op = draw(st.sampled_from(["delete", "insert", "duplicate", "swap"]))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(FRAGMENTS)) + text[i:]
        elif op == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            k = draw(st.integers(0, len(text) - 1))
            text = text[:i] + text[k:k + (j - i)] + text[j:]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_sample())
def test_mutated_real_ptx_never_raises(text: str):
    result = parse_module(text, "mutated.ptx")
    print_module(result.module)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_sample())
def test_cli_never_prints_a_traceback(tmp_path_factory, text: str):
    path = tmp_path_factory.mktemp("fuzz") / "m.ptx"
    path.write_text(text)
    assert _quiet_main(str(path)) in (0, 2)
