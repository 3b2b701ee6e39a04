"""Configuration files: discovery, checking, and the command line on top."""
from __future__ import annotations

from pathlib import Path

import pytest

from ptxlint import config
from ptxlint.diagnostics import Severity
from ptxlint.launch import LaunchConfig


def parse(table: dict) -> config.Config:
    return config.parse(table, Path("ptxlint.toml"))


def test_every_key():
    cfg = parse({"arch": "sm_80", "enable": ["a"], "disable": "b", "severity": "warning",
                 "format": "sarif", "time-budget": 2, "uncoalesced-ratio": 1.5,
                 "launch": [{"kernel": "t*", "block": [32, 8], "grid": "64x2",
                             "dynamic-smem": 1024, "params": {"n": 4, "2": 8},
                             "extents": {"in": 4096}},
                            {"block": 256}]})
    assert (cfg.arch, cfg.enable, cfg.disable, cfg.severity, cfg.format, cfg.time_budget) == \
        ("sm_80", ("a",), ("b",), Severity.WARNING, "sarif", 2)
    assert cfg.rule_options == {"uncoalesced_ratio": 1.5}
    (p1, l1), (p2, l2) = cfg.launches
    assert (p1, l1.block, l1.grid, l1.dynamic_smem, l1.params, l1.extents) == \
        ("t*", (32, 8, 1), (64, 2, 1), 1024, {"n": 4, 2: 8}, {"in": 4096})
    assert (p2, l2.block) == ("*", (256, 1, 1))


@pytest.mark.parametrize("table, message", [
    ({"colour": True}, "unknown key 'colour'"),
    ({"arch": 80}, "'arch' must be a string"),
    ({"enable": [1]}, "'enable' must be a list of rule ids"),
    ({"format": "xml"}, "'format' must be one of text, gcc, json, sarif"),
    ({"time-budget": 0}, "time-budget must be positive"),
    ({"time-budget": "5"}, "'time-budget' must be a number"),
    ({"launch": {"block": 32}}, "launch must be an array of tables"),
    ({"launch": [{"blocks": 32}]}, "launch table #1: unknown key 'blocks'"),
    ({"launch": [{"block": [0]}]}, "launch table #1 (kernel '*'): expected 1 to 3 positive"),
    ({"launch": [{"block": [64, 64]}]}, "more than 1024 threads"),
    ({"launch": [{"params": {"n": "big"}}]}, "the value of 'n' must be a number"),
    ({"launch": [{"params": [1]}]}, "'params' must be a table"),
    ({"time-budget": float("inf")}, "time-budget must be positive and finite, not inf"),
    ({"time-budget": float("nan")}, "time-budget must be positive and finite, not nan"),
    ({"uncoalesced-ratio": float("nan")}, "uncoalesced-ratio must be positive and finite"),
    ({"launch": [{"dynamic-smem": float("inf")}]}, "'dynamic-smem' must be a whole number"),
    ({"launch": [{"dynamic-smem": 1.5}]}, "'dynamic-smem' must be a whole number"),
    ({"launch": [{"extents": {"in": 4096.0}}]}, "the value of 'in' must be a whole number"),
    ({"launch": [{"block": "0x20x8"}]}, "expected 1 to 3 positive integers"),
])
def test_errors_name_the_key(table, message):
    with pytest.raises(config.ConfigError) as info:
        parse(table)
    assert message in str(info.value)


def test_discovery_prefers_the_nearest_and_skips_foreign_pyproject(tmp_path, monkeypatch):
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "ptxlint.toml").write_text('arch = "sm_70"\n')
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no table
    assert config.for_file(deep / "k.ptx").arch == "sm_70"
    (tmp_path / "a" / "pyproject.toml").write_text('[tool.ptxlint]\narch = "sm_86"\n')
    assert config.for_file(deep / "k.ptx").arch == "sm_86"
    (tmp_path / "a" / "ptxlint.toml").write_text('[tool.ptxlint]\narch = "sm_90"\n')
    assert config.for_file(deep / "k.ptx").arch == "sm_90"  # ptxlint.toml wins in a directory
    monkeypatch.chdir(deep)
    assert config.for_file("-").arch == "sm_90"


def test_toml_syntax_error_has_a_line(tmp_path):
    (tmp_path / "ptxlint.toml").write_text('arch = "sm_80"\nenable = [\n')
    with pytest.raises(config.ConfigError) as info:
        config.for_file(tmp_path / "k.ptx")
    assert info.value.line is not None and "invalid TOML" in str(info.value)


def test_command_line_overrides():
    cfg = parse({"arch": "sm_80", "enable": ["a", "b"], "disable": ["c"], "time-budget": 3,
                 "launch": [{"kernel": "k", "block": 64, "params": {"n": 1, "m": 2}}]})
    opts = config.options(cfg, config.Overrides(
        arch="sm_90", enable=("c",), disable=("d",), time_budget=9,
        launch=LaunchConfig(grid=(8, 1, 1), params={"n": 5})))
    assert opts.arch == "sm_90" and opts.time_budget == 9
    assert opts.enable == {"c"} and opts.disable == {"d"}
    merged = opts.launch_for("k")
    assert (merged.block, merged.grid, merged.params) == ((64, 1, 1), (8, 1, 1), {"n": 5, "m": 2})
    other = opts.launch_for("other")
    assert (other.block, other.grid, other.params) == (None, (8, 1, 1), {"n": 5})
    plain = config.options(cfg)
    assert plain.launch_for("other") is None and plain.time_budget == 3
    assert plain.enable == {"a", "b"} and plain.disable == {"c"}


def test_sizes_may_be_hex_and_x_separates_decimals_only():
    [(_, launch)] = parse({"launch": [{"block": "0x20,8", "grid": "64x2"}]}).launches
    assert (launch.block, launch.grid) == ((32, 8, 1), (64, 2, 1))
    assert config.dims("0x8") == (8, 1, 1)  # a 0x prefix is hex, never "0 by 8"
    assert config.whole("0x1000") == config.whole("4096") == 4096
    for bad in ("010x", "1_000", "0o17", "1e3", "4096.0"):
        with pytest.raises(ValueError, match="not a whole number"):
            config.whole(bad)
    with pytest.raises(ValueError, match="not a finite number"):
        config.finite("nan")
    assert config.number("nan") != config.number("nan")  # a float parameter may be NaN


@pytest.mark.parametrize("content, line, message", [
    (b'arch = "sm_80"\n\xff = 1\n', 2, "not UTF-8 text (byte 0xff)"),
    (b"tool = 5\n", None, "unknown key 'tool'"),
    (b'enable = ["bank-conflict",\n  "typo"]\n', 2, "enable: unknown rule 'typo'"),
    (b"disable = 'typo'\n", 1, "disable: unknown rule 'typo'"),
])
def test_loading_reports_every_fault_as_a_config_error(tmp_path, content, line, message):
    (tmp_path / "ptxlint.toml").write_bytes(content)
    with pytest.raises(config.ConfigError) as info:
        config.for_file(tmp_path / "k.ptx")
    assert message in info.value.message and info.value.line == line
    assert info.value.path == (tmp_path / "ptxlint.toml").resolve()


def test_every_report_format_of_the_command_line_is_allowed_in_the_config():
    from ptxlint.cli import build_parser
    from ptxlint.config import FORMATS

    (action,) = [a for a in build_parser()._actions if a.dest == "format"]
    assert tuple(action.choices) == FORMATS
