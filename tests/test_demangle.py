"""Kernel names as CUDA programmers wrote them (issue 20, item 2): messages name kernels
demangled, JSON keeps both names, `--kernel` accepts either; a name the demangler
refuses, or a machine without one, keeps the mangled name."""
from __future__ import annotations

import json

import pytest

from ptxlint import demangle
from ptxlint.cli import main
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text

from .quiet_kernels import LOCS, TEMPLATES, test_rules  # noqa: F401


def test_demangle_and_its_fallbacks(monkeypatch):
    assert demangle.demangle("_Z14transposeNaivePfS_ii") == \
        "transposeNaive(float*, float*, int, int)"
    assert demangle.demangle("_ZZ15transpose_tiledE4tile") == "transpose_tiled::tile"
    for name in ("debug_saxpy", "_Z14transposeNaivePfS_ii_param_0", "_Zbroken", ""):
        assert demangle.demangle(name) == name
    assert demangle.demangle_text("in `_Z4sumsPfi`, not _Z4sumsPfi_param_0") == \
        "in `sums(float*, int)`, not _Z4sumsPfi_param_0"
    # no C++ runtime library (cxxfilt cannot load one): the mangled name stays
    monkeypatch.setattr(demangle, "_backend", lambda: None)
    demangle.demangle.cache_clear()
    try:
        assert demangle.demangle("_Z14transposeNaivePfS_ii") == "_Z14transposeNaivePfS_ii"
    finally:
        demangle.demangle.cache_clear()


def test_kernel_names_select_by_either_name():
    name = "_Z10column_sumIfEvPT_PKS0_i"
    assert demangle.aliases(name) == (name, "void column_sum<float>(float*, float const*, int)",
                                      "column_sum<float>", "column_sum")
    for pattern in (name, "column_sum", "column_sum<float>", "column_*",
                    "void column_sum<float>(float*, float const*, int)", "*float const*"):
        assert demangle.matches(name, pattern), pattern
    for pattern in ("column_sum<int>", "sum", "_Z10column_sumIiEvPT_PKS0_i"):
        assert not demangle.matches(name, pattern), pattern
    assert demangle.aliases("plain_kernel") == ("plain_kernel",)


def test_messages_name_the_kernel_demangled_and_json_keeps_both(test_rules, tmp_path, capsys):
    path = tmp_path / "k.ptx"
    path.write_text(LOCS)
    found = lint_text(LOCS, str(path), LintOptions(enable=frozenset({"test-load"})))
    assert {d.message.split(" of ")[1] for d in found.diagnostics} == \
        {"'sums(float*, int)'", "'sums(double*, int)'"}
    assert main(["--enable", "test-load", "--format", "json", "--kernel", "sums(double*, int)",
                 str(path)]) == 1
    found = json.loads(capsys.readouterr().out)["diagnostics"]
    assert [(d["kernel"], d["kernel_demangled"], d["message"]) for d in found] == [
        ("_Z4sumsPdi", "sums(double*, int)", f"load {n} of 'sums(double*, int)'")
        for n in (1, 2)]


def test_launch_errors_name_the_kernel_demangled():
    found = lint_text(LOCS, "k.ptx", LintOptions(launch=LaunchConfig(params={"missing": 1})))
    messages = [d.message for d in found.diagnostics if d.rule == "launch-config"]
    assert messages == [
        "'sums(float*, int)' has no parameter named 'missing' (parameters: out, n)",
        "'sums(double*, int)' has no parameter named 'missing' (parameters: out2)"]


@pytest.mark.parametrize("pattern, count", [
    ("column_sum", 8), ("column_sum<int>", 4), ("_Z10column_sumIiEvPT_PKS0_i", 4),
    ("void column_sum<float>(float*, float const*, int)", 4), ("*<float>*", 4)])
def test_kernel_option_accepts_either_name(pattern, count, capsys):
    code = main(["--block", "32,8", "--grid", "1", "--param", "2=32", "--kernel", pattern,
                 "--format", "json", str(TEMPLATES)])
    assert code == 1
    [d] = json.loads(capsys.readouterr().out)["diagnostics"]
    assert d["count"] == count


def test_a_kernel_pattern_matching_nothing_is_an_error(capsys):
    assert main(["--kernel", "no_such_kernel", str(TEMPLATES)]) == 2
    assert "no kernel matches --kernel no_such_kernel" in capsys.readouterr().err
