"""The library API: `ptxlint.check`, `ptxlint.check_before_launch`, `PreLaunchError`."""
from __future__ import annotations

import json
import logging
import pickle
import subprocess
import sys

import pytest

import ptxlint
import ptxlint.hook
from ptxlint.diagnostics import Diagnostic, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.rules.base import RULES

from .conftest import ROOT
from .test_cli import BAD, KERNEL, _Note, _Warn

DIVERGENT = ROOT / "ptx_samples" / "divergent-bra-uni" / "tid_guard.bad.ptx"


@pytest.fixture
def fake_rules(monkeypatch):
    monkeypatch.setitem(RULES, "test-warn", _Warn)
    monkeypatch.setitem(RULES, "test-note", _Note)
    ptxlint.hook._CACHE.clear()
    yield
    ptxlint.hook._CACHE.clear()


def test_import_is_cheap_and_lazy():
    code = ("import sys, ptxlint; assert 'ptxlint.lint' not in sys.modules; "
            "assert 'rich' not in sys.modules; ptxlint.check; "
            "assert 'ptxlint.lint' in sys.modules or 'ptxlint.hook' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    # the rules load without numpy (the emulator's, imported only for a run)
    code = ("import sys; from ptxlint.rules.base import load_rules; load_rules(); "
            "assert 'numpy' not in sys.modules, 'numpy imported by a rule'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    assert set(ptxlint.__all__) >= {"check", "check_before_launch", "PreLaunchError",
                                    "__version__"}
    with pytest.raises(AttributeError):
        ptxlint.no_such_name  # noqa: B018


def test_check_returns_diagnostics(fake_rules):
    found = ptxlint.check(KERNEL, enable=["test-warn", "test-note"])
    assert [(d.rule, d.line, d.kernel) for d in found] == [("test-note", 7, "k"),
                                                             ("test-warn", 7, "k")]
    assert all(isinstance(d, Diagnostic) for d in found)
    assert ptxlint.check(KERNEL, kernel="other", enable=["test-warn"]) == []
    assert ptxlint.check(KERNEL, enable="test-warn", disable=["test-warn"]) == []


def test_check_accepts_launch_in_three_spellings(fake_rules):
    for launch in (LaunchConfig(block=(64, 1, 1), params={"n": 3}),
                   {"block": 64, "params": {"n": 3}}, "block=64 param.n=3"):
        [d] = ptxlint.check(KERNEL, launch=launch, enable=["test-warn"], arch="sm_90")
        assert d.rule == "test-warn"
    [d] = ptxlint.check(KERNEL, launch={"params": {"missing": 3}})
    assert d.rule == "launch-config" and d.severity is Severity.ERROR
    with pytest.raises(TypeError):
        ptxlint.check(KERNEL, colour=True)
    with pytest.raises(TypeError):
        ptxlint.check(KERNEL, launch=42)


def test_parse_errors_are_diagnostics():
    [d] = ptxlint.check(BAD)
    assert (d.rule, d.line, d.column) == ("parse-error", 7, 15)


def test_check_before_launch_returns_and_logs_warnings(fake_rules, caplog):
    with caplog.at_level(logging.DEBUG, logger="ptxlint"):
        found = ptxlint.check_before_launch(KERNEL, "k", block=128, grid=(4, 2), params={"n": 7})
    assert {d.rule for d in found} >= {"test-warn", "test-note"}
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("[test-warn]" in r.getMessage() for r in warnings)
    assert not any("[test-note]" in r.getMessage() for r in warnings)


def test_check_before_launch_raises_on_errors():
    with pytest.raises(ptxlint.PreLaunchError) as info:
        ptxlint.check_before_launch(BAD, "k", block=32, grid=1)
    err = info.value
    assert [d.rule for d in err.errors] == ["parse-error"]
    text = str(err)
    assert text.startswith("ptxlint refused the launch: 1 error\n")
    assert "error[parse-error]: register '%r5' is not declared" in text
    assert "7 | \tmov.u32 %r1, %r5;" in text and "  | \t             ^^^" in text


@pytest.mark.parametrize("kwargs, message", [
    ({"kernel": "nope"}, "the module has no kernel 'nope' (kernels: k)"),
    ({"params": {"m": 1}}, "no parameter named 'm'"),
    ({"block": (64, 64)}, "more than 1024 threads"),
])
def test_check_before_launch_refuses_a_launch_that_cannot_fit(kwargs, message):
    args = {"kernel": "k", "block": 32, "grid": 1, **kwargs}
    kernel = args.pop("kernel")
    with pytest.raises(ptxlint.PreLaunchError) as info:
        ptxlint.check_before_launch(KERNEL, kernel, **args)
    assert message in str(info.value)
    assert info.value.diagnostics[0].rule == "launch-config"


def test_check_before_launch_rule_errors():
    if "divergent-bra-uni" not in RULES:
        pytest.skip("the divergent-bra-uni rule is not registered")
    with pytest.raises(ptxlint.PreLaunchError) as info:
        ptxlint.check_before_launch(DIVERGENT.read_text(), "half_warp", block=32, grid=1)
    assert "divergent-bra-uni" in {d.rule for d in info.value.errors}


def test_results_are_cached(fake_rules, monkeypatch):
    import ptxlint.lint

    calls = []
    real = ptxlint.lint.lint_text
    monkeypatch.setattr(ptxlint.lint, "lint_text", lambda *a: calls.append(1) or real(*a))
    for _ in range(3):
        ptxlint.check_before_launch(KERNEL, "k", block="32,2", grid=1, params={"n": 1})
    assert len(calls) == 1


def test_results_are_kept_on_disk_with_cache_dir(tmp_path, monkeypatch):
    def launch():
        return ptxlint.check_before_launch(DIVERGENT.read_text(), "half_warp", block=32,
                                           grid=1, cache_dir=tmp_path)

    ptxlint.hook._CACHE.clear()
    with pytest.raises(ptxlint.PreLaunchError) as first:
        launch()
    [stored] = list(tmp_path.glob("*.lint"))
    # another process: nothing in memory, and analysing again would fail the test
    ptxlint.hook._CACHE.clear()
    monkeypatch.setattr(ptxlint.hook, "_launch_findings", lambda *a: pytest.fail("analysed"))
    with pytest.raises(ptxlint.PreLaunchError) as again:
        launch()
    assert [d.to_json() for d in again.value.diagnostics] == \
        [d.to_json() for d in first.value.diagnostics]
    # a damaged file, or other ptxlint code, is not trusted: the launch is analysed again
    monkeypatch.undo()
    real = ptxlint.hook._launch_findings
    for damage in (lambda: stored.write_bytes(b"not a pickle"),
                   lambda: monkeypatch.setattr(ptxlint.hook, "_code_fingerprint",
                                               lambda: "other code")):
        damage()
        ptxlint.hook._CACHE.clear()
        calls = []
        monkeypatch.setattr(ptxlint.hook, "_launch_findings",
                            lambda *a: calls.append(1) or real(*a))
        with pytest.raises(ptxlint.PreLaunchError):
            launch()
        assert calls == [1]
    ptxlint.hook._CACHE.clear()


def test_unwritable_cache_dir_only_loses_the_cache(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    ptxlint.hook._CACHE.clear()
    found = ptxlint.check_before_launch(KERNEL, "k", block=32, grid=1, params={"n": 1},
                                        cache_dir=blocker / "lint")
    assert all(d.severity < Severity.ERROR for d in found)
    ptxlint.hook._CACHE.clear()


def test_disk_cache_keeps_the_newest_files(tmp_path, monkeypatch):
    monkeypatch.setattr(ptxlint.hook, "_DISK_CACHE_FILES", 2)
    ptxlint.hook._CACHE.clear()
    for n in range(4):
        ptxlint.check_before_launch(KERNEL, "k", block=32, grid=1, params={"n": n},
                                    cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.lint"))) == 2
    ptxlint.hook._CACHE.clear()


# ---------------------------------------------------------------- the disk cache is JSON
WARP_SUM = ROOT / "ptx_samples" / "shared-memory-race" / "warp_sum.bad.ptx"


def _warp_sum(cache_dir) -> list[Diagnostic]:
    """Findings with related locations, CUDA columns and list details, errors among
    them (so the launch is refused and the findings come with the exception)."""
    with pytest.raises(ptxlint.PreLaunchError) as info:
        ptxlint.check_before_launch(WARP_SUM.read_text(), "block_sum64", block=64, grid=16,
                                    cache_dir=cache_dir)
    return info.value.diagnostics


def test_disk_cache_gives_back_what_a_fresh_lint_finds(tmp_path, monkeypatch):
    ptxlint.hook._CACHE.clear()
    fresh = _warp_sum(None)
    assert any(d.related for d in fresh) and any(d.cuda and d.cuda.column for d in fresh)
    ptxlint.hook._CACHE.clear()
    _warp_sum(tmp_path)
    [stored] = list(tmp_path.glob("*.lint"))
    json.loads(stored.read_text())  # plain data, readable by anything
    ptxlint.hook._CACHE.clear()
    monkeypatch.setattr(ptxlint.hook, "_launch_findings", lambda *a: pytest.fail("analysed"))
    assert _warp_sum(tmp_path) == fresh  # equal values: spans, details, related, cuda
    ptxlint.hook._CACHE.clear()


class _Plant:
    """Unpickling this creates `path`: the code a planted cache file would run."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_planted_pickle_is_never_unpickled(tmp_path):
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    ptxlint.hook._CACHE.clear()
    fresh = _warp_sum(cache)
    [stored] = list(cache.glob("*.lint"))
    stored.write_bytes(pickle.dumps(_Plant(marker)))
    pickle.loads(stored.read_bytes()).close()  # the payload works when unpickled...
    marker.unlink()
    ptxlint.hook._CACHE.clear()
    assert _warp_sum(cache) == fresh  # ...and the hook analyses again instead
    assert not marker.exists()
    ptxlint.hook._CACHE.clear()


@pytest.mark.parametrize("damage", [
    lambda doc: b"\x80\x04not json",
    lambda doc: json.dumps(doc)[: len(json.dumps(doc)) // 2].encode(),   # truncated
    lambda doc: json.dumps([doc]).encode(),
    lambda doc: json.dumps({**doc, "version": 1}).encode(),             # an older format
    lambda doc: json.dumps({**doc, "code": "other ptxlint"}).encode(),
    lambda doc: json.dumps({**doc, "diagnostics": [{**doc["diagnostics"][0],
                                                    "severity": "fatal"}]}).encode(),
    lambda doc: json.dumps({**doc, "diagnostics": [{**doc["diagnostics"][0],
                                                    "line": 10 ** 6}]}).encode(),
    lambda doc: json.dumps({**doc, "diagnostics": [{**doc["diagnostics"][0],
                                                    "message": ["x"]}]}).encode(),
    lambda doc: json.dumps({**doc, "diagnostics": None}).encode(),
], ids=["binary", "truncated", "list", "old-version", "other-code", "bad-severity",
        "bad-line", "bad-message", "no-diagnostics"])
def test_a_damaged_or_foreign_cache_file_is_analysed_again(tmp_path, monkeypatch, damage):
    ptxlint.hook._CACHE.clear()
    fresh = _warp_sum(tmp_path)
    [stored] = list(tmp_path.glob("*.lint"))
    stored.write_bytes(damage(json.loads(stored.read_text())))
    ptxlint.hook._CACHE.clear()
    real, calls = ptxlint.hook._launch_findings, []
    monkeypatch.setattr(ptxlint.hook, "_launch_findings", lambda *a: calls.append(1) or real(*a))
    assert _warp_sum(tmp_path) == fresh
    assert calls == [1]
    ptxlint.hook._CACHE.clear()


def test_a_file_copied_under_another_launchs_name_is_not_used(tmp_path):
    ptxlint.hook._CACHE.clear()
    # one thread alone reads the tree's upper words, which nothing wrote
    # (uninitialized-read): not what this test is about
    text = WARP_SUM.read_text() + "\n// ptxlint: disable-file=uninitialized-read\n"
    with pytest.raises(ptxlint.PreLaunchError):
        ptxlint.check_before_launch(text, "block_sum64", block=64, grid=16, cache_dir=tmp_path)
    [refused] = list(tmp_path.glob("*.lint"))
    # one thread cannot race with itself: this launch is accepted
    ok = ptxlint.check_before_launch(text, "block_sum64", block=1, grid=1, cache_dir=tmp_path)
    [accepted] = [p for p in tmp_path.glob("*.lint") if p != refused]
    accepted.write_bytes(refused.read_bytes())  # the refused launch's findings
    ptxlint.hook._CACHE.clear()
    assert ptxlint.check_before_launch(text, "block_sum64", block=1, grid=1,
                                       cache_dir=tmp_path) == ok
    ptxlint.hook._CACHE.clear()


def test_details_json_cannot_give_back_are_not_stored(tmp_path, monkeypatch):
    tupled = Diagnostic("test-warn", Severity.WARNING, "m", "<ptx>", None,
                        details={"lanes": (0, 31)})
    monkeypatch.setattr(ptxlint.hook, "_launch_findings", lambda *a: [tupled])
    ptxlint.hook._CACHE.clear()
    assert ptxlint.check_before_launch(KERNEL, "k", block=32, grid=1,
                                       cache_dir=tmp_path) == [tupled]
    assert not list(tmp_path.glob("*.lint"))  # a list would come back, not the tuple
    ptxlint.hook._CACHE.clear()


# ---------------------------------------------------------------- the text argument
def test_bytes_are_decoded_as_the_command_line_reads_a_file(tmp_path, capsys):
    from ptxlint.cli import main

    data = BAD.replace("\n", "\r\n").encode() + b"// \xff not UTF-8\r\n"
    path = tmp_path / "bad.ptx"
    path.write_bytes(data)
    main(["--format", "json", str(path)])
    cli = json.loads(capsys.readouterr().out)["diagnostics"]
    found = ptxlint.check(data, path=str(path))
    assert [d.to_json() for d in found] == [{k: d[k] for k in found[0].to_json()} for d in cli]
    assert (found[0].line, found[0].column) == (7, 15)
    assert ptxlint.check(bytearray(data), path=str(path)) == found
    with pytest.raises(ptxlint.PreLaunchError) as info:
        ptxlint.check_before_launch(data, "k", block=32, grid=1)
    assert [d.rule for d in info.value.errors] == ["parse-error"]


@pytest.mark.parametrize("value, name", [(None, "NoneType"), (123, "int"),
                                         (["mov.u32 %r1, 1;"], "list")])
def test_text_of_another_type_is_refused_clearly(value, name):
    with pytest.raises(TypeError) as info:
        ptxlint.check(value)
    assert str(info.value) == f"check() expects PTX text as str or bytes, got {name}"
    with pytest.raises(TypeError) as info:
        ptxlint.check_before_launch(value, "k", block=32, grid=1)
    assert str(info.value) == \
        f"check_before_launch() expects PTX text as str or bytes, got {name}"


# ---------------------------------------------------------------- rule ids
@pytest.mark.parametrize("option", ["enable", "disable"])
def test_an_unknown_rule_id_is_refused(fake_rules, option):
    with pytest.raises(ValueError) as info:
        ptxlint.check(KERNEL, **{option: ["test-warn", "nope"]})
    message = str(info.value)
    assert message.startswith(f"{option}: unknown rule id 'nope' (known: ")
    assert "test-warn" in message and "bank-conflict" in message and "parse-error" in message
    with pytest.raises(ValueError, match="'nope'"):
        ptxlint.check(KERNEL, **{option: "nope"})


def test_old_rule_names_and_tool_ids_are_accepted(fake_rules, monkeypatch):
    from ptxlint.rules.base import ALIASES

    monkeypatch.setitem(ALIASES, "test-old-warn", "test-warn")
    [d] = ptxlint.check(KERNEL, enable=["test-old-warn"])
    assert d.rule == "test-warn"
    assert ptxlint.check(KERNEL, enable=["parse-error"]) == []
    assert ptxlint.check(KERNEL, enable=[]) == []
