"""`--format github` against the workflow-command grammar as the GitHub Actions runner
reads it (actions/runner `ActionCommand.TryParseV2`): `::` then the command and its
properties up to the next `::`, properties split at `,` and each at its first `=`,
then the data; unescaped in the runner's order (`%0D`, `%0A`, for properties `%3A` and
`%2C`, then `%25`). Every line must parse back to the diagnostic it came from."""
from __future__ import annotations

import re

from ptxlint.diagnostics import CudaLocation, Diagnostic, Related, Severity
from ptxlint.report import github
from ptxlint.source import SourceFile

from .test_report_goldens import FIXTURE

COMMANDS = {"error", "warning", "notice"}
PROPERTIES = {"file", "line", "endLine", "col", "endColumn", "title"}
DATA_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
PROPERTY_ESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))


def unescape(text: str, mappings) -> str:
    for escaped, token in mappings:
        text = text.replace(escaped, token)
    return text


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """(command, properties, data) as the runner reads one line, else AssertionError."""
    assert "\n" not in line and "\r" not in line, "a command is one line"
    message = line.lstrip()
    assert message.startswith("::"), line
    end = message.index("::", 2)
    info = message[2:end]
    name, _, props = info.partition(" ")
    assert name in COMMANDS, name
    properties = {}
    for item in (p for p in props.strip().split(",") if p):
        key, eq, value = item.partition("=")
        assert eq and key in PROPERTIES, f"not a known key=value property: {item!r}"
        assert key not in properties, f"{key} given twice"
        properties[key] = unescape(value, PROPERTY_ESCAPES)
    return name, properties, unescape(message[end + 2:], DATA_ESCAPES)


ESCAPED = re.compile(r"%(?:25|0D|0A|3A|2C)")


def assert_escaped(line: str) -> None:
    """No `%` but as an escape; no raw `:` or `,` inside a property value."""
    header, _, data = line[2:].partition("::")
    assert "%" not in ESCAPED.sub("", line), line
    for item in header.partition(" ")[2].split(","):
        assert ":" not in item.partition("=")[2], item


def test_every_fixture_line_parses_back():
    lines = github.render(FIXTURE).splitlines()
    assert len(lines) == len(FIXTURE)
    for line, d in zip(lines, sorted(FIXTURE, key=Diagnostic.sort_key)):
        assert_escaped(line)
        command, props, data = parse(line)
        assert command == github.COMMAND[d.severity]
        assert props["file"] == d.file and props["title"] == f"ptxlint ({d.rule})"
        assert data.split("\n")[0] == d.message
        if d.span is not None:
            assert props["line"] == str(d.line) and props["endLine"] == str(d.span.end_line)
            assert props["col"] == str(d.column)
        else:
            assert "line" not in props and "col" not in props


def test_levels_are_the_three_the_runner_knows():
    assert github.COMMAND == {Severity.ERROR: "error", Severity.WARNING: "warning",
                              Severity.NOTE: "notice"}
    notes = [line for line in github.render(FIXTURE).splitlines() if "uniform-branch" in line]
    assert notes and all(line.startswith("::notice ") for line in notes)


def test_hostile_text_is_escaped_and_round_trips():
    """A path with `,`, `:`, `=`, `%` and `::` cannot forge a property or end the
    header early; a message's `%`, CR and LF come back as they were."""
    path = "k,line=1,title=forged::x%41=:.ptx"
    text = ".version 9.0\n    ld.shared.f32 %f1, [%r4];\n"
    src = SourceFile(path, text)
    d = Diagnostic("bank-conflict", Severity.WARNING, "100% of lanes\r\nhit bank 0: 32-way",
                   path, src.span(text.index("["), text.index(";")), label="lanes 0-31",
                   notes=("%tid.x, then %tid.y",), help="pad: 33 floats",
                   related=(Related(src.span(0, 3), "the other access, here"),),
                   cuda=CudaLocation("dir,with:odd/k.cu", 4))
    [line] = github.render([d]).splitlines()
    assert_escaped(line)
    command, props, data = parse(line)
    assert command == "warning" and props["file"] == path
    assert props["title"] == "ptxlint (bank-conflict)"
    assert (props["line"], props["endLine"], props["col"], props["endColumn"]) == \
        ("2", "2", "24", "28")  # `[%r4]`: columns 24..28, the end inclusive
    assert data == ("100% of lanes\r\nhit bank 0: 32-way\nlanes 0-31\n"
                    "line 1: the other access, here\nnote: %tid.x, then %tid.y\n"
                    "help: pad: 33 floats\nCUDA source: dir,with:odd/k.cu:4")


def test_a_span_over_lines_gives_no_columns():
    text = "a\nbb\nccc\n"
    src = SourceFile("f.ptx", text)
    d = Diagnostic("out-of-bounds", Severity.ERROR, "m", "f.ptx", src.span(2, 7))
    _, props, _ = parse(github.line(d))
    assert (props["line"], props["endLine"]) == ("2", "3")
    assert "col" not in props and "endColumn" not in props


def test_paths_under_the_root_are_relative(tmp_path):
    inside = str(tmp_path / "kernels" / "k.ptx")
    outside = "/elsewhere/k.ptx"
    lines = github.render([Diagnostic("parse-error", Severity.ERROR, "m", p, None)
                           for p in (inside, outside)], root=str(tmp_path)).splitlines()
    assert [parse(line)[1]["file"] for line in lines] == [outside, "kernels/k.ptx"]
