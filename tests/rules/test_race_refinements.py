"""Issue #22, `shared-memory-race`: benign write-write races (every writer stores one
value), double buffers toggled by `p = 1 - p` (the joint values of the toggles), and
writes guarded by conditions on one word of memory the kernel never writes."""
from __future__ import annotations

import re

from ptxlint.diagnostics import Severity

from ..expectations import lint_sample
from .test_shared_memory_race import SAMPLES, lint


def _without_launch(name: str) -> str:
    return re.sub(r"^// ptxlint: launch.*$", "", (SAMPLES / name).read_text(), flags=re.M)


def _lint_text(text: str):
    from ptxlint.lint import LintOptions, lint_text  # noqa: PLC0415

    options = LintOptions(enable=frozenset({"shared-memory-race"}))
    return [d for d in lint_text(text, "t.ptx", options).diagnostics
            if d.severity >= Severity.WARNING]


# ---- benign write-write races -----------------------------------------------------------------
def test_every_writer_storing_one_constant_is_a_note():
    body = "    mov.u32 %r1, 1;\n    st.shared.u32 [tile], %r1;"
    assert lint(body) == []
    [(line, d)] = lint(body, notes=True)
    assert line == 2 and d.severity is Severity.NOTE
    assert d.details["benign"] == "1" and d.message.endswith("(benign: all writers store 1)")


def test_immediates_of_one_spelling_are_benign():
    [(_, d)] = lint("    st.shared.u32 [tile], 7;", notes=True)
    assert d.severity is Severity.NOTE and d.details["benign"] == "7"


def test_a_block_uniform_value_stored_by_every_thread_is_benign():
    body = "    ld.param.u32 %r1, [n];\n    st.shared.u32 [tile], %r1;"
    [(_, d)] = lint(body, notes=True)
    assert d.severity is Severity.NOTE and d.details["benign"] == "`%r1`"


def test_different_values_stay_a_race():
    body = "    mov.u32 %r1, %tid.x;\n    st.shared.u32 [tile], %r1;"
    [(_, d)] = lint(body)
    assert "benign" not in d.details and d.severity >= Severity.WARNING
    # two constants that differ
    found = lint("    st.shared.u32 [tile], 1;\n    st.shared.u32 [tile], 2;")
    assert found and all("benign" not in d.details for _, d in found)


def test_one_value_in_different_widths_is_not_benign():
    body = "    st.shared.u32 [tile], 0;\n    st.shared.u16 [tile], 0;"
    found = lint(body, notes=True)
    assert any(d.severity >= Severity.WARNING and d.details["kinds"] == "write-write"
               for _, d in found)


def test_a_race_with_a_read_is_reported_even_if_the_writes_agree():
    body = "    st.shared.u32 [tile], 1;\n    ld.shared.u32 %r2, [tile];"
    [(_, d)] = lint(body)
    assert d.details["kinds"] == "write-read" and "benign" not in d.details


def test_flag_sample():
    worst, moved = sorted((d for d in lint_sample(SAMPLES / "flag.bad.ptx").diagnostics
                           if d.rule == "shared-memory-race"), key=lambda d: d.line)
    assert "benign" not in worst.details
    assert moved.details == {**moved.details, "benign": "1"} and moved.severity is Severity.NOTE


# ---- toggled double buffers -------------------------------------------------------------------
TOGGLE = """    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, tile;
    ld.param.u32 %r10, [n];
    mov.u32 %r20, 0;
    mov.u32 %r21, {pout};
    mov.u32 %r11, 0;
LOOP:
    shl.b32 %r12, %r20, 10;
    add.u32 %r13, %r3, %r12;
    add.u32 %r14, %r13, %r2;
    ld.shared.f32 %f1, [%r14+4];
    shl.b32 %r15, %r21, 10;
    add.u32 %r16, %r3, %r15;
    add.u32 %r17, %r16, %r2;
    st.shared.f32 [%r17], %f1;
    bar.sync 0;
    sub.s32 %r20, 1, %r20;
    {step}
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p1, %r11, %r10;
    @%p1 bra LOOP;"""


def test_buffers_flipped_together_never_meet():
    """pin = 0, pout = 1, both `1 - p` after the barrier: pin + pout == 1 on every trip."""
    assert lint(TOGGLE.format(pout=1, step="sub.s32 %r21, 1, %r21;")) == []
    assert lint(TOGGLE.format(pout=1, step="xor.b32 %r21, %r21, 1;")) == []


def test_buffers_flipped_from_the_same_start_race():
    [(line, d)] = lint(TOGGLE.format(pout=0, step="sub.s32 %r21, 1, %r21;"))
    assert line == 16 and d.details["kinds"] == "write-read"


def test_a_buffer_flipped_alone_races():
    """pout flips, pin stays: they meet on every other trip."""
    [(line, _)] = lint(TOGGLE.format(pout=1, step="sub.s32 %r21, 1, %r21;").replace(
        "    sub.s32 %r20, 1, %r20;\n", ""))
    assert line == 16


def test_flips_in_different_blocks_are_not_one_parity():
    """pout flips on one arm of a branch only: the two no longer move together."""
    body = TOGGLE.format(pout=1, step="""setp.eq.u32 %p2, %r10, 7;
    @%p2 bra SKIP;
    sub.s32 %r21, 1, %r21;
SKIP:""")
    assert [line for line, _ in lint(body)] == [16]


def test_toggle_buffer_sample_without_a_launch_is_clean():
    assert _lint_text(_without_launch("toggle_buffer.ok.ptx")) == []
    assert len(_lint_text(_without_launch("toggle_buffer.bad.ptx"))) == 1


# ---- conditions on one loaded word ------------------------------------------------------------
def test_run_marks_sample_without_a_launch_is_clean():
    assert _lint_text(_without_launch("run_marks.ok.ptx")) == []


def test_a_kernel_writing_the_loaded_buffer_keeps_the_race():
    """If the kernel may store to `keys`, two loads of one word may see different values."""
    text = (SAMPLES / "run_marks.ok.ptx").read_text()
    store = "\tst.global.u32 \t[%rd11], %r15;"
    assert store in text
    text = text.replace(store, store + "\n\tst.global.u32 \t[%rd2], %r15;")
    found = _lint_text(text)
    assert [d.details["kinds"] for d in found] == ["write-write"]


def test_complementary_conditions_on_two_words_stay_a_race():
    """`row[t] > 0` against `row[t + 1] <= 0` (different words for the colliding
    threads): nothing rules the pair out."""
    text = (SAMPLES / "run_marks.ok.ptx").read_text()
    load = "ld.global.u32 \t%r17, [%rd2+-4];"
    assert load in text
    found = _lint_text(text.replace(load, "ld.global.u32 \t%r17, [%rd2+4];"))
    assert [d.details["kinds"] for d in found] == ["write-write"]

