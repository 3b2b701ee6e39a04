"""`IncrementalLinter` (the language server's re-analysis) gives what `lint_text`
gives on the same text, analysing only the kernels an edit touched."""
from __future__ import annotations

from ptxlint.incremental import IncrementalLinter
from ptxlint.lint import LintOptions, lint_text

from .conftest import ROOT

SAMPLE = ROOT / "ptx_samples" / "cuda" / "transpose.ptx"  # two kernels
CALLS = ROOT / "ptx_samples" / "cuda" / "device_call.ptx"  # kernels calling .func


def key(diagnostics):
    return [(d.rule, d.span, d.message, d.kernel, d.notes) for d in diagnostics]


def edit_after_brace(text: str, nth: int, insert: str) -> str:
    """`insert` as a new line after the opening brace of the nth entry."""
    lines = text.split("\n")
    entries = [i for i, line in enumerate(lines) if ".entry" in line]
    brace = next(i for i in range(entries[nth], len(lines)) if lines[i].strip() == "{")
    lines.insert(brace + 1, insert)
    return "\n".join(lines)


def check_same(linter: IncrementalLinter, text: str, options=None):
    options = options or LintOptions()
    got = linter.lint(text, options)
    assert key(got) == key(lint_text(text, linter.path, options).diagnostics)
    return got


def test_only_the_edited_kernel_is_analysed():
    text = SAMPLE.read_text()
    linter = IncrementalLinter(str(SAMPLE))
    check_same(linter, text)
    assert len(linter.analysed) == 2
    edited = edit_after_brace(text, 0, "\t// a comment line shifts everything below")
    check_same(linter, edited)
    assert linter.analysed == ["transpose_naive"]
    check_same(linter, edit_after_brace(edited, 1, "\t// and another"))
    assert linter.analysed == ["transpose_tiled"]


def test_callees_and_context_changes():
    text = CALLS.read_text()
    linter = IncrementalLinter(str(CALLS))
    check_same(linter, text)
    everything = list(linter.analysed)
    # a new line above every entry (in the context) re-analyses them all
    check_same(linter, text.replace(".address_size 64", ".address_size 64\n// moved", 1))
    assert linter.analysed == everything
    check_same(linter, edit_after_brace(text, 0, "\t// edit"))
    assert len(linter.analysed) == 1


def test_options_are_part_of_the_key():
    text = SAMPLE.read_text()
    linter = IncrementalLinter(str(SAMPLE))
    check_same(linter, text)
    check_same(linter, text, LintOptions(disable=frozenset({"uncoalesced-access"})))
    assert len(linter.analysed) == 2


def test_parse_errors_then_recovery():
    text = SAMPLE.read_text()
    linter = IncrementalLinter(str(SAMPLE))
    check_same(linter, text)
    broken = edit_after_brace(text, 1, "\tmov.u32 %r1, %nope;")
    got = check_same(linter, broken)
    assert [d.rule for d in got] == ["parse-error"]
    check_same(linter, text)


RACE = """.version 8.0
.target sm_80
.address_size 64
.visible .entry first()
{
	ret;
}
.visible .entry second()
{
	.reg .b32 %r<6>;
	.shared .align 4 .b8 s[1024];
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	mov.u32 %r3, s;
	add.u32 %r4, %r3, %r2;
	st.shared.u32 [%r4], %r1;
	ld.shared.u32 %r5, [%r4+4];
	ret;
}
"""


def test_secondary_locations_move_with_their_kernel():
    """A shared-memory race's other access (`related`) shifts like the finding when an
    edit above its kernel adds a line, and is not re-analysed."""
    from ptxlint.launch import LaunchConfig

    options = LintOptions(launch=LaunchConfig.parse("block=64"))
    linter = IncrementalLinter("race.ptx")
    linter.lint(RACE, options)
    edited = edit_after_brace(RACE, 0, "\t// one more line above the racing kernel")
    got = [d for d in linter.lint(edited, options) if d.rule == "shared-memory-race"]
    assert linter.analysed == ["first"]
    want = [d for d in lint_text(edited, "race.ptx", options).diagnostics
            if d.rule == "shared-memory-race"]
    assert [(d.span, d.related, d.message) for d in got] == \
        [(d.span, d.related, d.message) for d in want]
    assert got[0].related[0].line == 18
