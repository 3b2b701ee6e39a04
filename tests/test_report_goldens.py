"""Every reporter on one fixture list of diagnostics, and the command line on real
samples, compared with tests/goldens/ (version, paths and times redacted);
`pytest --update-goldens` rewrites them."""
from __future__ import annotations

import io
import json
import re

from rich.console import Console

from ptxlint import __version__, grouping
from ptxlint.cli import main
from ptxlint.diagnostics import Certainty, CudaLocation, Diagnostic, Related, Severity
from ptxlint.report import RuleInfo, gcc, github, sarif, text
from ptxlint.report import json as json_report
from ptxlint.source import SourceFile, Span

from .conftest import ROOT

PTX_PATH = "kernels/fixture.ptx"
PTX = """.version 9.0
.target sm_80
.address_size 64
.visible .entry transpose(.param .u64 out, .param .u64 in)
{
\t.reg .b32 %r<5>;
\t.reg .f32 %f<2>;
\t.shared .align 4 .b8 tile[4096];
\tmov.u32 %r1, %tid.x;
\tmad.lo.u32 %r4, %r1, 128, %r3;
\tld.shared.f32 %f1, [%r4];
        st.shared.f32 [%r4+4096], %f1;
\tmov.u32 %r2, %r9;
\tret;
}
"""
CUDA = str(ROOT / "ptx_samples" / "cuda" / "vector_add.cu")
SRC = SourceFile(PTX_PATH, PTX)


def span(line: int, col: int, length: int):
    start = SRC.line_starts[line - 1] + col - 1
    return SRC.span(start, start + length)


FIXTURE = [
    Diagnostic("parse-error", Severity.ERROR, "register '%r9' is not declared", PTX_PATH,
               span(13, 15, 3), kernel="transpose",
               details={"excerpt": "\tmov.u32 %r2, %r9;"}),
    Diagnostic("bank-conflict", Severity.WARNING, "32-way shared-memory bank conflict",
               PTX_PATH, span(11, 2, 25), kernel="transpose", certainty=Certainty.DEFINITE,
               label="lanes 0-31 all hit bank 0",
               notes=("address = tile + 128*%tid.x",),
               help="pad the row so consecutive lanes fall in different banks",
               details={"ways": 32, "bank": 0, "lanes": frozenset({1, 0})},
               cuda=CudaLocation(CUDA, 9, 9)),
    Diagnostic("out-of-bounds", Severity.ERROR, "shared access may pass the end of `tile`",
               PTX_PATH, span(12, 9, 30), kernel="transpose", certainty=Certainty.POSSIBLE,
               label="bytes 4096..8191 of a 4096-byte array",
               notes=("offset = 4096 + 128*%tid.x + %r3\n"
                      "%tid.x in 0..1023 (no launch configuration given)",
                      "`tile` is declared at line 8"),
               details={"space": "shared", "object": "tile", "overflow": [4096, 8191]}),
    Diagnostic("shared-memory-race", Severity.ERROR,
               "shared-memory race on `tile`: a write here and a read at line 11 with no "
               "barrier between", PTX_PATH, span(12, 9, 30), kernel="transpose",
               label="thread 0 writes bytes 4096-4099 of `tile`",
               related=(Related(span(11, 2, 25), "thread 32 reads them here"),),
               help="put `bar.sync 0` (`__syncthreads()`) between the two accesses",
               details={"object": "tile", "threads": [0, 32]}),
    Diagnostic("uniform-branch", Severity.NOTE, "this guard is the same in every lane",
               PTX_PATH, span(10, 2, 10), kernel="transpose", certainty=Certainty.POSSIBLE,
               help="use `bra.uni`", cuda=CudaLocation("/nowhere/missing.cu", 3, 0)),
    Diagnostic("internal-error", Severity.ERROR, "internal error: ValueError: boom",
               "kernels/other.ptx", None, details={"exception": "ValueError"}),
    Diagnostic("parse-error", Severity.ERROR, "expected ';'", "kernels/unseen.ptx",
               Span(40, 40, 2, 21, 2, 21), details={"excerpt": "\tadd.s32 %r1, %r2, 1"}),
    # one CUDA line on two instructions of two template instances: one finding, its
    # kernels named mangled and demangled (the demangler's lowest version runs it in CI)
    *grouping.group([
        Diagnostic("uncoalesced-access", Severity.WARNING,
                   "a warp's request touches 32 sectors, 4 would do", PTX_PATH,
                   span(11, 2, 25), kernel="_Z5scaleIfEvPT_i", cuda=CudaLocation(CUDA, 9, 9),
                   details={"sectors_per_request": 32}),
        Diagnostic("uncoalesced-access", Severity.WARNING,
                   "a warp's request touches 16 sectors, 4 would do", PTX_PATH,
                   span(12, 9, 30), kernel="_Z5scaleIdEvPT_i", cuda=CudaLocation(CUDA, 9, 9),
                   details={"sectors_per_request": 16})]),
]
SOURCES = {PTX_PATH: PTX, CUDA: (ROOT / "ptx_samples/cuda/vector_add.cu").read_text()}
RULES = [
    RuleInfo("bank-conflict", "BankConflict", Severity.WARNING, "stable",
             "Lanes of one warp hit the same shared-memory bank at different addresses.",
             "Lanes of one warp hit the same shared-memory bank at different addresses.\n\n"
             "## Why is this bad?\nAn n-way conflict replays the access n times."),
    RuleInfo("parse-error", "ParseError", Severity.ERROR, "built-in",
             "The file is not valid PTX.", "The file is not valid PTX."),
]


def redact(out: str) -> str:
    out = out.replace(str(ROOT), "<ROOT>")
    return re.sub(r"\b\d+\.\d\ds\b", "<TIME>", out)


def redact_version(doc: dict) -> dict:
    if "tool" in doc and "version" in doc["tool"]:
        doc["tool"]["version"] = "<VERSION>"
    for run in doc.get("runs", []):
        driver = run["tool"]["driver"]
        for key in ("version", "semanticVersion"):
            if driver.get(key) == __version__:
                driver[key] = "<VERSION>"
    return doc


def as_json(out: str) -> str:
    return redact(json.dumps(redact_version(json.loads(out)), indent=2) + "\n")


def test_text_golden(golden):
    console = Console(file=io.StringIO(), width=100, color_system=None)
    text.write(console, FIXTURE, SOURCES, text.Summary(files=3, seconds=1.25, hidden=2))
    golden("fixture.txt", redact(console.file.getvalue()))


def test_text_render_is_plain_and_equal_to_console_output():
    console = Console(file=io.StringIO(), width=100, color_system=None)
    text.write(console, FIXTURE, SOURCES)
    assert text.render(FIXTURE, SOURCES) == console.file.getvalue()
    assert "\x1b[" not in console.file.getvalue()


def test_text_colour_only_when_asked():
    console = Console(file=io.StringIO(), width=100, color_system="truecolor", force_terminal=True)
    text.write(console, FIXTURE[:1], SOURCES)
    coloured = console.file.getvalue()
    assert "\x1b[" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == text.render(FIXTURE[:1], SOURCES)


def test_gcc_golden(golden):
    golden("fixture.gcc", redact(gcc.render(FIXTURE)))


def test_json_golden(golden):
    golden("fixture.json", as_json(json_report.render(FIXTURE)))


def test_sarif_golden(golden):
    out = sarif.render(FIXTURE, RULES, root=str(ROOT), docs_base=None,
                       information_uri="https://example.invalid/ptxlint", sources=SOURCES)
    golden("fixture.sarif", as_json(out))


def test_github_golden(golden):
    golden("fixture.github", redact(github.render(FIXTURE, root=str(ROOT))))


def test_long_lines_are_not_wrapped_and_tabs_kept():
    long = "\t" + "x" * 300 + ";"
    d = Diagnostic("parse-error", Severity.ERROR, "m", "f.ptx",
                   SourceFile("f.ptx", long).span(1, 4))
    lines = text.render([d], {"f.ptx": long}).splitlines()
    assert f"1 | {long}" in lines
    assert "  | \t^^^" in lines


# ---------------------------------------------------------------- the command line
def run_cli(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_cli_parse_only_text_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "--parse-only", "ptx_samples/cuda/vector_add.ptx",
                        "ptx_samples/syntax/control_flow.ptx")
    assert code == 0
    golden("cli_parse_only.txt", redact(out))


def test_cli_parse_only_json_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "--parse-only", "--format", "json",
                        "ptx_samples/cuda/vector_add.ptx", "ptx_samples/syntax/control_flow.ptx")
    assert code == 0
    golden("cli_parse_only.json", as_json(out))


# The analysis runs, but only its own notes are enabled: no rule's wording is involved
# (`--severity note`: the text and gcc formats hide notes by default).
NOTES_ONLY = ("--severity", "note", "--enable", "unmodelled-instruction",
              "ptx_samples/cuda/device_call.ptx",
              "ptx_samples/syntax/module_directives.ptx")


def test_cli_unmodelled_notes_text_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, *NOTES_ONLY)
    assert code == 0
    golden("cli_unmodelled.txt", redact(out))


def test_cli_unmodelled_notes_gcc_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "--format", "gcc", *NOTES_ONLY)
    assert code == 0
    golden("cli_unmodelled.gcc", redact(out))


def test_underline_starts_at_the_first_non_blank_column_and_stops_at_line_end():
    src = "x\n    \tld.shared.f32 %f1, [%r4];\n  more\n"
    source = SourceFile("f.ptx", src)
    whole_line = Diagnostic("bank-conflict", Severity.WARNING, "m", "f.ptx",
                            source.span(2, src.index(";") + 1))
    lines = text.render([whole_line], {"f.ptx": src}).splitlines()
    assert lines[5] == "  |     \t" + "^" * len("ld.shared.f32 %f1, [%r4];")
    two_lines = Diagnostic("bank-conflict", Severity.WARNING, "m", "f.ptx",
                           source.span(src.index("ld"), src.index("more")))
    lines = text.render([two_lines], {"f.ptx": src}).splitlines()
    assert lines[5] == "  |     \t" + "^" * len("ld.shared.f32 %f1, [%r4];")


def test_summary_line_counts():
    d = FIXTURE[1]
    assert text.render([], None, text.Summary(files=1)) == "checked 1 file: no findings\n"
    assert text.render([d, d], None, text.Summary(files=2, seconds=0.5)).splitlines()[-1] == \
        "checked 2 files in 0.50s: 2 warnings (bank-conflict: 2)"



# A real defect sample through every format: four definite 32-way bank conflicts, all
# from the CUDA line their `.loc` names (column.bad.cu, found beside the PTX file): one
# finding on four instructions, the first one's position primary, the others listed.
BANK_CONFLICT_PTX = "ptx_samples/bank-conflict/column.bad.ptx"
BANK_CONFLICT = ("--block", "32,8", "--grid", "32,32", "--param", "2=1024", "--param", "3=1024",
                 BANK_CONFLICT_PTX)
BANK_CONFLICT_CUDA = "ptx_samples/bank-conflict/column.bad.cu"
BANK_CONFLICT_LINES = [101, 106, 111, 114]  # the four `ld.shared.f32` of the column read


def address_column(line: int) -> int:
    """The 1-based column of the address operand (`[%r23+32]`) on the sample's line."""
    return (ROOT / BANK_CONFLICT_PTX).read_text().splitlines()[line - 1].index("[") + 1


def test_cli_bank_conflict_text_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, *BANK_CONFLICT)
    assert code == 1
    assert out.count("warning[bank-conflict]: 32-way shared-memory bank conflict "
                     "(on 4 instructions)\n") == 1
    assert out.count("warning[") == 1
    first, *others = BANK_CONFLICT_LINES
    assert f"  --> {BANK_CONFLICT_PTX}:{first}:{address_column(first)}\n" in out
    assert "    = note: also at " + ", ".join(f"{n}:{address_column(n)}" for n in others) \
        + "\n" in out
    assert out.count(f"   ::: {BANK_CONFLICT_CUDA}:18:9\n") == 1
    cuda_line = "out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];"
    assert out.count(f" 18 |         {cuda_line}\n") == 1
    golden("cli_bank_conflict.txt", redact(out))


def test_cli_bank_conflict_gcc_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "--format", "gcc", *BANK_CONFLICT)
    assert code == 1
    n = BANK_CONFLICT_LINES[0]
    assert out.splitlines() == [
        f"{BANK_CONFLICT_PTX}:{n}:{address_column(n)}: warning: 32-way shared-memory bank "
        "conflict (on 4 instructions) [bank-conflict]"]
    golden("cli_bank_conflict.gcc", redact(out))


def test_cli_bank_conflict_json_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run_cli(capsys, "--format", "json", *BANK_CONFLICT)
    assert code == 1
    [d] = json.loads(out)["diagnostics"]  # one result for the CUDA line, every location
    first = BANK_CONFLICT_LINES[0]
    assert (d["rule"], d["severity"], d["certainty"], d["line"], d["column"], d["cuda_file"],
            d["cuda_line"], d["details"], d["count"]) == (
        "bank-conflict", "warning", "definite", first, address_column(first),
        BANK_CONFLICT_CUDA, 18, {"ways": 32, "bank": 0}, 4)
    assert [(o["line"], o["column"], o["kernel"], o["message"], o["details"])
            for o in d["occurrences"]] == [
        (n, address_column(n), "transpose_unpadded", "32-way shared-memory bank conflict",
         {"ways": 32, "bank": 0}) for n in BANK_CONFLICT_LINES]
    golden("cli_bank_conflict.json", as_json(out))


def only_used_rules(out: str) -> str:
    """SARIF with the descriptors of the rules no result names cut down to their id: the
    catalog carries every rule's documentation, which is not this golden's business
    (fixture.sarif pins a descriptor's shape). The ids and their order stay, so the
    results' `ruleIndex` is still checked."""
    doc = json.loads(out)
    for run in doc["runs"]:
        used = {r["ruleId"] for r in run["results"]}
        driver = run["tool"]["driver"]
        driver["rules"] = [r if r["id"] in used else {"id": r["id"]} for r in driver["rules"]]
    return json.dumps(doc)


def test_cli_bank_conflict_sarif_golden(golden, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("PTXLINT_DOCS_URL", raising=False)
    code, out = run_cli(capsys, "--format", "sarif", *BANK_CONFLICT)
    assert code == 1
    run = json.loads(out)["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    [r] = run["results"]  # one result for the CUDA line, the other loads related
    [where], [cuda, *others] = r["locations"], r["relatedLocations"]
    first, *rest = BANK_CONFLICT_LINES
    assert (r["ruleId"], rules[r["ruleIndex"]], r["level"], r["properties"]["count"]) == \
        ("bank-conflict", "bank-conflict", "warning", 4)
    assert (where["physicalLocation"]["artifactLocation"]["uri"],
            where["physicalLocation"]["region"]["startLine"],
            where["physicalLocation"]["region"]["startColumn"]) == \
        (BANK_CONFLICT_PTX, first, address_column(first))
    assert (cuda["physicalLocation"]["artifactLocation"]["uri"],
            cuda["physicalLocation"]["region"]["startLine"]) == (BANK_CONFLICT_CUDA, 18)
    assert [(o["physicalLocation"]["artifactLocation"]["uri"],
             o["physicalLocation"]["region"]["startLine"],
             o["physicalLocation"]["region"]["startColumn"], o["message"]["text"])
            for o in others] == [(BANK_CONFLICT_PTX, n, address_column(n), "the same finding")
                                 for n in rest]
    golden("cli_bank_conflict.sarif", as_json(only_used_rules(out)))
