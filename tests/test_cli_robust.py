"""No input hangs the command line, exhausts its memory or loses its report (issue 18):
bad numbers are usage errors, special files and broken configurations are diagnostics
on the file they concern, one file's failure never hides the others, any file name can
be reported, `--output` is replaced whole or not at all, and a signal ends the workers.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ptxlint.cli import build_parser, main
from ptxlint.cli import run as cli_run
from ptxlint.diagnostics import Diagnostic, Severity
from ptxlint.report import gcc, sarif
from ptxlint.report import json as json_report
from ptxlint.source import Span

from .conftest import ROOT

GOOD = ROOT / "ptx_samples" / "cuda" / "vector_add.ptx"  # exit 0 at -j 1
BAD = """.version 9.0
.target sm_90
.address_size 64
.visible .entry k()
{
\t.reg .b32 %r<2>;
\tmov.u32 %r1, %r5;
\tret;
}
"""
BAD_LINE = ":7:15: error: register '%r5' is not declared [parse-error]"


def run(*args) -> tuple[int, str, str]:
    """`main` in this process, its stdout and stderr. Standard output encodes strictly
    to UTF-8, as a real one does: a string it cannot encode fails here too."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([os.fspath(a) for a in args])
    out.flush()
    return code, out.buffer.getvalue().decode("utf-8"), err.getvalue()


def command(*args, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    """`python -m ptxlint` with a timeout: a regression that hangs fails instead."""
    return subprocess.run([sys.executable, "-m", "ptxlint", *map(os.fspath, args)],
                          capture_output=True, timeout=timeout, **kw)


@pytest.fixture
def bad_file(tmp_path) -> Path:
    path = tmp_path / "bad.ptx"
    path.write_text(BAD)
    return path


# ---------------------------------------------------------------- numbers on the command line
NON_FINITE = st.sampled_from(["nan", "NaN", "-nan", "inf", "+inf", "-inf", "Infinity",
                              "1e999", "-1e400"])
WORDS = st.text("abcdefghijklmnopqrstuvwyz_!?# ", min_size=1).filter(str.strip)
FRACTIONS = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: not f.is_integer()).map(repr)


def _refused(option: str, value: str) -> None:
    """A usage error naming the option and the value, before anything is linted
    (`--option=value`: a value may start with '-')."""
    code, out, err = run(f"{option}={value}", "--format", "gcc", GOOD)
    assert (code, out) == (2, ""), (option, value)
    assert f"argument {option}" in err or f"/{option}" in err, err
    assert value.split("=")[-1].strip() in err and "Traceback" not in err


@settings(max_examples=60, deadline=None)
@given(value=NON_FINITE | WORDS | st.sampled_from(["0", "-1", "0.0", "-0.5", "", "1,5"]))
def test_time_budget_must_be_finite_and_positive(value):
    _refused("--time-budget", value)


@settings(max_examples=60, deadline=None)
@given(option=st.sampled_from(["--dynamic-smem", "--jobs"]),
       value=NON_FINITE | WORDS | FRACTIONS | st.sampled_from(["-1", "0x", "1e3", "0x-1", "1_0"]))
def test_whole_number_options_refuse_anything_else(option, value):
    _refused(option, value)


@settings(max_examples=60, deadline=None)
@given(option=st.sampled_from(["--block", "--grid"]),
       value=NON_FINITE | WORDS | FRACTIONS
       | st.lists(st.integers(1, 8), min_size=4, max_size=6).map(lambda v: ",".join(map(str, v)))
       | st.tuples(st.integers(1, 64), st.integers(1, 8)).map(lambda t: f"0x{t[0]:x}x{t[1]}")
       | st.sampled_from(["0", "32,0", "1,,2", "32X8", "32x", "x8", "1x0x20", "-32"]))
def test_dimensions_refuse_anything_but_one_to_three_positive_numbers(option, value):
    _refused(option, value)


@settings(max_examples=60, deadline=None)
@given(option=st.sampled_from(["--param", "--extent"]), key=st.sampled_from(["0", "n"]),
       value=WORDS.filter(lambda w: w.strip().lower() not in ("nan", "inf", "infinity"))
       | st.sampled_from(["1.5e", "0x", "--1"]))
def test_param_and_extent_values_must_be_numbers(option, key, value):
    _refused(option, f"{key}={value}")


@settings(max_examples=30, deadline=None)
@given(value=NON_FINITE | FRACTIONS | st.sampled_from(["-1", "-0x10"]))
def test_extents_are_byte_counts(value):
    _refused("--extent", f"0={value}")


@given(x=st.integers(1, 1024), y=st.integers(1, 64))
def test_dimensions_may_be_hex_and_x_separates_decimals_only(x, y):
    parse = build_parser().parse_args
    want = (x, y, 1)
    assert parse(["--block", f"{x},{y}", "f"]).block == want
    assert parse(["--block", f"{hex(x)},{y}", "f"]).block == want
    assert parse(["--grid", f"{x}x{y}", "f"]).grid == want
    assert parse(["--block", hex(x), "f"]).block == (x, 1, 1)  # 0x8 is 8, never "0 by 8"


def test_hex_block_reaches_the_analysis():
    reports = [run("--format", "gcc", "--block", shape, GOOD) for shape in
               ("32,8", "0x20,8", "32x8", "0x20,0x8")]
    assert reports[0][0] == 0
    assert all(r == reports[0] for r in reports)


def test_numeric_help_says_what_is_accepted():
    text = " ".join(build_parser().format_help().split())  # unwrapped
    assert "0x20,8" in text and "32x8 is short for 32,8" in text
    assert "a finite" in text and "never more than one per CPU" in text


# ---------------------------------------------------------------- processes per CPU
def test_jobs_are_capped_at_the_cpu_count(tmp_path, monkeypatch):
    import ptxlint.lint

    seen_jobs, pools = [], []
    real_lint = ptxlint.lint.lint_text

    def lint_text(text, path, options, jobs=1):
        seen_jobs.append(jobs)
        return real_lint(text, path, options, 1)

    real_pool = cli_run.worker_pool

    def worker_pool(workers):
        pools.append(workers)
        return real_pool(workers)

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(ptxlint.lint, "lint_text", lint_text)
    monkeypatch.setattr(cli_run, "worker_pool", worker_pool)
    assert run("-j", "1000", GOOD)[0] == 0  # one file: its kernels shared out
    assert run("-j", "0", GOOD)[0] == 0
    assert seen_jobs == [2, 2]
    files = [tmp_path / f"{i}.ptx" for i in range(3)]
    for f in files:
        f.write_text(GOOD.read_text())
    assert run("-j", "1000", *files)[0] == 0
    assert pools == [2]


# ---------------------------------------------------------------- special files
@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                    reason="POSIX special files")
def test_special_files_are_refused_and_the_others_reported(tmp_path, bad_file):
    fifo = tmp_path / "fifo.ptx"
    os.mkfifo(fifo)
    walked = tmp_path / "tree"
    walked.mkdir()
    os.mkfifo(walked / "deep.ptx")
    proc = command("--format", "gcc", fifo, "/dev/zero", bad_file, walked, "-", input=BAD.encode())
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert sorted(proc.stdout.decode().splitlines()) == sorted([
        "/dev/zero: error: cannot read file: not a regular file (a character device) "
        "[parse-error]",
        "<stdin>" + BAD_LINE,
        f"{bad_file}{BAD_LINE}",
        f"{fifo}: error: cannot read file: not a regular file (a FIFO) [parse-error]",
        f"{walked / 'deep.ptx'}: error: cannot read file: not a regular file (a FIFO) "
        "[parse-error]",
    ])


# ---------------------------------------------------------------- one file's failure
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_out_of_memory_reading_one_file_loses_no_other_report(jobs, tmp_path, bad_file,
                                                              monkeypatch):
    huge = tmp_path / "huge.ptx"
    huge.write_text(BAD)
    real_read = cli_run._read

    def read(path):
        if path.endswith("huge.ptx"):
            raise MemoryError()
        return real_read(path)

    monkeypatch.setattr(cli_run, "_read", read)
    code, out, err = run("-j", jobs, "--format", "gcc", huge, bad_file)
    assert code == 2 and err == ""
    assert out.splitlines() == [f"{bad_file}{BAD_LINE}",
                                f"{huge}: error: cannot read file: out of memory [parse-error]"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_out_of_memory_linting_one_file_loses_no_other_report(jobs, tmp_path, bad_file,
                                                              monkeypatch):
    import ptxlint.lint

    real_lint = ptxlint.lint.lint_text

    def lint_text(text, path, options, jobs=1):
        if path.endswith("huge.ptx"):
            raise MemoryError("no room")
        return real_lint(text, path, options, jobs)

    monkeypatch.setattr(ptxlint.lint, "lint_text", lint_text)
    (tmp_path / "huge.ptx").write_text(BAD)
    code, out, _ = run("-j", jobs, "--format", "gcc", tmp_path / "huge.ptx", bad_file)
    assert code == 2
    assert out.splitlines() == [
        f"{bad_file}{BAD_LINE}",
        f"{tmp_path / 'huge.ptx'}: error: internal error: MemoryError: no room [internal-error]"]


# ---------------------------------------------------------------- configuration files
@pytest.mark.parametrize("content, line, message", [
    (b'arch = "sm_80"\n# caf\xe9\n', 2, "not UTF-8 text (byte 0xe9)"),
    (b"tool = 5\n", None, "unknown key 'tool'"),
    (b"[tool]\nptxlint = 5\n", None, "[tool.ptxlint] must be a table"),
    (b"[[launch]]\ndynamic-smem = inf\n", None, "'dynamic-smem' must be a whole number"),
    (b"[[launch]]\ndynamic-smem = 1.5\n", None, "'dynamic-smem' must be a whole number"),
    (b"[[launch]]\nextents = { in = nan }\n", None, "the value of 'in' must be a whole number"),
    (b"time-budget = inf\n", None, "time-budget must be positive and finite, not inf"),
    (b"time-budget = nan\n", None, "time-budget must be positive and finite, not nan"),
    (b"uncoalesced-ratio = -inf\n", None, "uncoalesced-ratio must be positive and finite"),
    (b'arch = "sm_80"\nenable = ["typo"]\n', 2, "enable: unknown rule 'typo' (see --list-rules)"),
    (b'disable = [\n  "bank-conflict",\n  "typo"]\n', 3, "disable: unknown rule 'typo'"),
])
def test_a_broken_configuration_is_a_config_error_on_its_files_only(tmp_path, content, line,
                                                                   message):
    project = tmp_path / "project"
    project.mkdir()
    (project / "ptxlint.toml").write_bytes(content)
    (project / "k.ptx").write_text(GOOD.read_text())
    elsewhere = tmp_path / "elsewhere.ptx"
    elsewhere.write_text(BAD)
    code, out, err = run("--format", "gcc", project / "k.ptx", elsewhere)
    assert code == 2 and "internal error" not in err
    where = f"{(project / 'ptxlint.toml').resolve()}" + (f":{line}:1" if line else "")
    config_line, other = sorted(out.splitlines(), key=lambda s: "[config-error]" not in s)
    assert config_line.startswith(f"{where}: error: ") and message in config_line
    assert config_line.endswith("[config-error]")
    assert other == f"{elsewhere}{BAD_LINE}"


def test_known_rule_names_in_the_configuration_still_apply(tmp_path):
    (tmp_path / "ptxlint.toml").write_text('enable = ["parse-error"]\n')
    (tmp_path / "k.ptx").write_text(GOOD.read_text())
    assert run("--format", "gcc", tmp_path / "k.ptx") == (0, "", "")


# ---------------------------------------------------------------- file names that are not UTF-8
NAMES = st.binary(min_size=1, max_size=12).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b".."))


@settings(max_examples=80, deadline=None)
@example(name=b"bad\xff.ptx")
@example(name=b"caf\xc3\xa9 %20.ptx")
@given(name=NAMES)
def test_every_reporter_copes_with_any_file_name(name):
    root = "/project"
    path = os.fsdecode(os.path.join(root.encode(), name))
    d = Diagnostic("parse-error", Severity.ERROR, "bad", path, Span(0, 1, 7, 15, 7, 18))
    shown = os.fsencode(path).decode("utf-8", "replace")
    assert gcc.render([d]).encode("utf-8") == f"{shown}:7:15: error: bad [parse-error]\n".encode()
    assert json.loads(json_report.render([d]))["diagnostics"][0]["file"] == shown
    [result] = sarif.document([d], [], root=root)["runs"][0]["results"]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert unquote_to_bytes(artifact["uri"]) == name and artifact["uriBaseId"] == "%SRCROOT%"
    json.dumps(artifact, ensure_ascii=False).encode("utf-8")  # no lone surrogate left


@pytest.mark.parametrize("fmt", ["text", "gcc", "json", "sarif"])
def test_a_file_name_that_is_not_utf8_reaches_every_format(fmt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"bad\xff.ptx")
    Path(name).write_text(BAD)
    report = tmp_path / f"report.{fmt}"
    code, out, err = run("--format", fmt, "--output", report, name)
    assert (code, out, err) == (2, "", "")
    text = report.read_bytes().decode("utf-8")
    printed = run("--format", fmt, name)[1]  # stdout: the same report, but the time
    assert text.splitlines()[:-1] == printed.splitlines()[:-1]
    if fmt == "sarif":
        [result] = json.loads(text)["runs"][0]["results"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
            "bad%FF.ptx"
    elif fmt == "json":
        assert json.loads(text)["diagnostics"][0]["file"] == "bad\ufffd.ptx"
    else:
        assert "bad\ufffd.ptx:7:15" in text


# ---------------------------------------------------------------- --output
def test_output_replaces_the_old_report_whole_or_not_at_all(tmp_path, bad_file, monkeypatch):
    report = tmp_path / "report.txt"
    report.write_text("old report\n")
    report.chmod(0o640)

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", fail)
        code, _, err = run("--format", "gcc", "--output", report, bad_file)
    assert code == 2 and f"cannot write {report}: No space left on device" in err
    assert report.read_text() == "old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.ptx", "report.txt"]
    assert run("--format", "gcc", "--output", report, bad_file)[0] == 2
    assert report.read_text() == f"{bad_file}{BAD_LINE}\n"
    assert stat.S_IMODE(report.stat().st_mode) == 0o640  # the old file's mode stays


def test_a_new_output_file_gets_the_usual_mode(tmp_path, bad_file):
    mask = os.umask(0o022)
    try:
        run("--output", tmp_path / "new.txt", bad_file)
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_output_through_a_symlink_and_to_a_device(tmp_path, bad_file):
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    (tmp_path / "link.txt").symlink_to(real)
    run("--format", "gcc", "--output", tmp_path / "link.txt", bad_file)
    assert (tmp_path / "link.txt").is_symlink() and real.read_text() == f"{bad_file}{BAD_LINE}\n"
    if os.path.exists("/dev/null"):
        assert run("--output", "/dev/null", bad_file)[0] == 2
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # written to, never replaced


def test_output_may_not_be_an_input(tmp_path, bad_file):
    (tmp_path / "alias.ptx").symlink_to(bad_file)
    for output in (bad_file, tmp_path / "alias.ptx"):
        code, out, err = run("--output", output, GOOD, tmp_path)
        assert (code, out) == (2, "")
        assert f"ptxlint: error: --output {output} is one of the input files" in err
    assert bad_file.read_text() == BAD


# ---------------------------------------------------------------- signals
# Each kernel takes 30 s here, so a run that waits for its workers fails the test,
# and one that leaves them behind does too; the sleep burns no CPU.
SLOW = textwrap.dedent("""\
    import os, sys, time
    import ptxlint.lint as lint
    real = lint.lint_entry
    def slow(*args, **kw):
        time.sleep(30)
        return real(*args, **kw)
    lint.lint_entry = slow
    os.cpu_count = lambda: 4  # two workers even on a one-CPU machine
    from ptxlint.cli import console_main
    sys.argv[0] = "ptxlint"
    console_main()
""")


def _big_file(path: Path) -> Path:
    """Two kernels of 1100 lines: more than `lint.PARALLEL_MIN_LINES`, so `-j 2` shares
    them with a forked child."""
    body = "\n".join("\tadd.u32 \t%r1, %r1, %r2;" for _ in range(1100))
    kernels = [f".visible .entry k{i}(.param .u32 n{i})\n{{\n\t.reg .b32 %r<3>;\n"
               f"\tld.param.u32 %r2, [n{i}];\n\tmov.u32 %r1, %tid.x;\n{body}\n\tret;\n}}\n"
               for i in range(2)]
    path.write_text(".version 8.0\n.target sm_80\n.address_size 64\n\n" + "\n".join(kernels))
    return path


def _descendants(pid: int) -> set[int]:
    out: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            continue
        for child in children:
            out |= {child} | _descendants(child)
    return out


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads /proc")
@pytest.mark.parametrize("files", ["four files", "one big file"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_parent_ends_its_workers_promptly(signum, files, tmp_path):
    script = tmp_path / "slow_ptxlint.py"
    script.write_text(SLOW)
    if files == "four files":
        inputs = [tmp_path / f"{i}.ptx" for i in range(4)]
        for f in inputs:
            f.write_text(GOOD.read_text())
        workers = 2
    else:
        inputs, workers = [_big_file(tmp_path / "big.ptx")], 1
    with open(tmp_path / "stderr", "wb") as stderr:  # a pipe would wait for orphans
        proc = subprocess.Popen([sys.executable, script, "-j", "2", *map(str, inputs)],
                                stdout=subprocess.DEVNULL, stderr=stderr,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(_descendants(proc.pid)) < workers and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # into their first kernel
        children = _descendants(proc.pid)
        assert len(children) >= workers, "the workers never started"
        proc.send_signal(signum)
        code = proc.wait(timeout=5)
        deadline = time.monotonic() + 3
        while any(map(_running, children)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [c for c in children if _running(c)] == []
        assert code == 128 + signum
        message = "terminated" if signum == signal.SIGTERM else "interrupted"
        stderr = (tmp_path / "stderr").read_text()
        assert f"ptxlint: {message}\n" in stderr and "Traceback" not in stderr
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever a failing run left
        proc.wait()


def test_sample_launch_lines_read_shapes_as_the_command_line_does():
    from ptxlint.launch import LaunchConfig

    config = LaunchConfig.parse("block=0x20,8 grid=32x4")
    assert (config.block, config.grid) == ((32, 8, 1), (32, 4, 1))
