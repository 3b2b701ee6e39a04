"""Configuration files: `[tool.ptxlint]` in `pyproject.toml`, or `ptxlint.toml` (its
keys at the top level or under `[tool.ptxlint]`), the nearest one found upward from
each file; in a directory holding both, `ptxlint.toml` wins. A `pyproject.toml`
without a `[tool.ptxlint]` table is skipped. Anything wrong in the file, bytes that
are not UTF-8 or a rule id no rule has included, is one `ConfigError` naming it.

    [tool.ptxlint]
    arch = "sm_80"
    disable = ["uniform-branch"]  # ids, old names or fnmatch patterns ("uniform-*")
    severity = "warning"          # minimum shown (default: per format, cli.run)
    format = "text"
    time-budget = 5.0             # finite and above 0, as uncoalesced-ratio
    uncoalesced-ratio = 2.0

    [[tool.ptxlint.launch]]
    kernel = "transpose_*"        # fnmatch pattern; the first matching table applies
    block = [32, 8]               # or "32,8", "0x20,8", "32x8" or 256
    grid = [64, 64]
    dynamic-smem = 0              # a whole number, as extents
    params = { n = 1024 }         # by name, or by 0-based index: { "2" = 1024 }
    extents = { in = 4096 }       # bytes a pointer parameter points to

Command-line options override the file: `--arch`, `--severity`, `--format`,
`--time-budget` replace its values, `--enable` replaces its `enable` list and
re-enables rules its `disable` list names, `--disable` adds to that list, and launch
options given on the command line replace the same fields of every `launch` table
(and apply alone to kernels no table matches). Both override, field by field, a PTX
file's own `// ptxlint: launch` comment (`launches`).
"""
from __future__ import annotations

import fnmatch
import math
import re
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import arch as arch_mod
from .diagnostics import Severity
from .launch import LaunchConfig, parse_dims

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FILES = ("ptxlint.toml", "pyproject.toml")
FORMATS = ("text", "gcc", "json", "sarif", "github", "html")
SEVERITIES = {str(s): s for s in Severity}
KEYS = ("arch", "enable", "disable", "severity", "format", "time-budget",
        "uncoalesced-ratio", "launch")
LAUNCH_KEYS = ("kernel", "block", "grid", "dynamic-smem", "params", "extents")


class ConfigError(ValueError):
    """An invalid configuration file; `line` is 1-based when known."""

    def __init__(self, path: Path, message: str, line: int | None = None):
        super().__init__(message)
        self.path, self.message, self.line = path, message, line

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Config:
    """The settings of one configuration file (all unset without one)."""

    path: Path | None = None
    arch: str | None = None
    enable: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    severity: Severity | None = None
    format: str | None = None
    time_budget: float | None = None
    rule_options: dict[str, Any] = field(default_factory=dict)
    launches: tuple[tuple[str, LaunchConfig], ...] = ()


def find(start: Path) -> Path | None:
    """The nearest configuration file in `start` (a directory) or above it."""
    start = start.resolve()
    for directory in (start, *start.parents):
        for name in FILES:
            candidate = directory / name
            if _is_file(candidate) and (name != "pyproject.toml" or _has_table(candidate)):
                return candidate
    return None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a directory we may not search: no configuration from it
        return False


def _has_table(path: Path) -> bool:
    try:
        return re.search(r"^\s*\[\[?\s*tool\.ptxlint\b", path.read_text(errors="replace"),
                         re.MULTILINE) is not None
    except OSError:
        return False


def for_file(path: str | Path) -> Config:
    """The configuration governing `path` (`-` or a non-file: the current directory)."""
    if str(path) in ("-", ""):
        directory = Path.cwd()
    else:
        p = Path(path)
        directory = p if p.is_dir() else p.parent
    found = find(directory)
    return load(found) if found else Config()


def load(path: Path) -> Config:
    """Read and check one file (cached until it changes). Whatever is wrong with it is
    a ConfigError naming it, never another exception: the files it governs report it."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise ConfigError(path, f"cannot read: {exc.strerror or exc}") from None
    path = path.resolve()
    try:
        cfg = _load(path, stat.st_mtime_ns, stat.st_size)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001  (a shape `parse` does not check yet)
        raise ConfigError(path, f"cannot use this file: {type(exc).__name__}: {exc}") from None
    _check_rules(cfg)  # not cached: the registry is the one of this run
    return cfg


@lru_cache(maxsize=64)
def _load(path: Path, mtime: int, size: int) -> Config:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, f"not UTF-8 text (byte 0x{raw[exc.start]:02x})",
                          raw.count(b"\n", 0, exc.start) + 1) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, f"invalid TOML: {exc}", _error_line(str(exc), path)) from None
    tool = doc.get("tool")  # in a ptxlint.toml, `tool = 5` is just an unknown key
    table = tool.get("ptxlint") if isinstance(tool, dict) else None
    if table is None:
        table = {} if path.name == "pyproject.toml" else doc
    if not isinstance(table, dict):
        raise ConfigError(path, "[tool.ptxlint] must be a table")
    return parse(table, path)


def _error_line(message: str, path: Path) -> int | None:
    m = re.search(r"\(at line (\d+)", message)
    if m:
        return int(m.group(1))
    if "(at end of document)" in message:
        try:
            return max(1, len(path.read_text(encoding="utf-8").splitlines()))
        except OSError:
            return None
    return None


def _check_rules(cfg: Config) -> None:
    """`enable`/`disable` name known rules: `enable = ["typo"]` would turn every rule
    off and pass, as `--enable typo` is refused."""
    assert cfg.path is not None
    for key, names in (("enable", cfg.enable or ()), ("disable", cfg.disable)):
        bad = unknown_rules(names)
        if bad:
            raise ConfigError(cfg.path, f"{key}: unknown rule '{bad[0]}' (see --list-rules)",
                              _quoted_line(cfg.path, bad[0]))


def is_pattern(name: str) -> bool:
    """A rule name with fnmatch wildcards (`bank-*`)."""
    return any(c in name for c in "*?[")


def unknown_rules(names: tuple[str, ...] | list[str]) -> list[str]:
    """The names no rule (nor any built-in diagnostic, nor an old name) has, and the
    patterns (`bank-*`) that match none; none when a rule module does not import (each
    file reports that)."""
    if not names:
        return []
    known = _known_rules()
    if known is None:
        return []
    return [n for n in names if not (any(fnmatch.fnmatchcase(k, n) for k in known)
                                     if is_pattern(n) else n in known)]


def _known_rules() -> set[str] | None:
    try:
        from .report import catalog  # noqa: PLC0415  (imports every rule)
        from .rules.base import ALIASES  # noqa: PLC0415

        return {r.id for r in catalog()} | set(ALIASES)
    except Exception:  # noqa: BLE001
        return None


def expand_rules(names) -> set[str]:
    """Rule ids for names that may be old names or patterns; a pattern stands for
    the ids it matches (so `--enable bank-conflict` re-enables what `disable =
    ["bank-*"]` turned off)."""
    from .rules.base import canonical  # noqa: PLC0415

    known = _known_rules() or set()
    out: set[str] = set()
    for n in names:
        if is_pattern(n):
            out |= {canonical(k) for k in known if fnmatch.fnmatchcase(k, n)}
        else:
            out.add(canonical(n))
    return out


def _quoted_line(path: Path, word: str) -> int | None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return None
    return next((i for i, line in enumerate(lines, 1)
                 if f'"{word}"' in line or f"'{word}'" in line), None)


def parse(table: dict[str, Any], path: Path) -> Config:
    """A `[tool.ptxlint]` table, checked key by key."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(path, f"unknown key '{unknown[0]}' (known: {', '.join(KEYS)})")
    get = _Getter(table, path, "[tool.ptxlint]")
    severity = get.choice("severity", tuple(SEVERITIES))
    budget = get.positive("time-budget")
    ratio = get.positive("uncoalesced-ratio")
    arch = get.string("arch")
    if arch is not None:
        try:
            arch_mod.get(arch)
        except ValueError as exc:
            raise ConfigError(path, f"arch: {exc}") from None
    launches = table.get("launch", [])
    if not isinstance(launches, list) or not all(isinstance(t, dict) for t in launches):
        raise ConfigError(path, "launch must be an array of tables ([[tool.ptxlint.launch]])")
    return Config(
        path=path, arch=arch, enable=get.strings("enable"),
        disable=get.strings("disable") or (), severity=SEVERITIES[severity] if severity else None,
        format=get.choice("format", FORMATS), time_budget=budget,
        rule_options={"uncoalesced_ratio": ratio} if ratio is not None else {},
        launches=tuple(_launch(t, path, i + 1) for i, t in enumerate(launches)))


def _launch(table: dict[str, Any], path: Path, number: int) -> tuple[str, LaunchConfig]:
    where = f"launch table #{number}"
    unknown = sorted(set(table) - set(LAUNCH_KEYS))
    if unknown:
        raise ConfigError(path, f"{where}: unknown key '{unknown[0]}' "
                                f"(known: {', '.join(LAUNCH_KEYS)})")
    get = _Getter(table, path, where)
    pattern = get.string("kernel") or "*"
    smem = get.whole("dynamic-smem")
    try:
        return pattern, LaunchConfig(
            block=_dims(table.get("block")), grid=_dims(table.get("grid")),
            dynamic_smem=smem, params=_keyed(get.table("params")),
            extents=_keyed(get.table("extents"), whole=True))
    except (ValueError, TypeError) as exc:
        raise ConfigError(path, f"{where} (kernel '{pattern}'): {exc}") from None


def _dims(value: Any) -> tuple[int, int, int] | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"expected dimensions like [32, 8] or \"32,8\", got {value!r}")
    if isinstance(value, int):
        return dims(str(value))
    if isinstance(value, str):
        return dims(value)
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool)
                                       for v in value):
        return dims(",".join(map(str, value)))
    raise ValueError(f"expected dimensions like [32, 8] or \"32,8\", got {value!r}")


def _keyed(table: dict[str, Any], whole: bool = False) -> dict[str | int, Any]:
    """Parameter keys: a name, or a 0-based index written as a string ("2"). Values
    are numbers (`inf` and `nan` too: a float parameter may get them); `whole`: byte
    sizes, integers only."""
    out: dict[str | int, Any] = {}
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"the value of '{key}' must be a number, not {value!r}")
        if whole and not isinstance(value, int):
            raise ValueError(f"the value of '{key}' must be a whole number, not {value!r}")
        out[param_key(key)] = value
    return out


def param_key(key: str) -> str | int:
    """A parameter's name, or its 0-based index when written in ASCII digits."""
    return int(key) if re.fullmatch(r"[0-9]+", key) else key


class _Getter:
    """Typed access to one table's keys, with errors naming the key."""

    def __init__(self, table: dict[str, Any], path: Path, where: str):
        self.values, self.path, self.where = table, path, where

    def _fail(self, key: str, expected: str) -> ConfigError:
        got = self.values[key]
        return ConfigError(self.path, f"{self.where}: '{key}' must be {expected}, "
                                      f"not {type(got).__name__} {got!r}")

    def string(self, key: str) -> str | None:
        v = self.values.get(key)
        if v is not None and not isinstance(v, str):
            raise self._fail(key, "a string")
        return v

    def strings(self, key: str) -> tuple[str, ...] | None:
        v = self.values.get(key)
        if isinstance(v, str):
            v = [v]
        if v is not None and not (isinstance(v, list) and all(isinstance(s, str) for s in v)):
            raise self._fail(key, "a list of rule ids")
        return tuple(v) if v is not None else None

    def number(self, key: str) -> float | None:
        v = self.values.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise self._fail(key, "a number")
        return v

    def positive(self, key: str) -> float | None:
        """A finite number above 0 (TOML has `inf` and `nan`: neither is a bound)."""
        v = self.number(key)
        if v is not None and not (math.isfinite(v) and v > 0):
            raise ConfigError(self.path, f"{self.where}: {key} must be positive and finite, "
                                         f"not {v!r}")
        return v

    def whole(self, key: str) -> int | None:
        v = self.number(key)
        if v is not None and not isinstance(v, int):
            raise self._fail(key, "a whole number")
        return v

    def choice(self, key: str, allowed: tuple[str, ...]) -> str | None:
        v = self.string(key)
        if v is not None and v not in allowed:
            raise ConfigError(self.path, f"{self.where}: '{key}' must be one of "
                                         f"{', '.join(allowed)}, not {v!r}")
        return v

    def table(self, key: str) -> dict[str, Any]:
        v = self.values.get(key, {})
        if not isinstance(v, dict):
            raise self._fail(key, "a table like { n = 1024 }")
        return v


# ---------------------------------------------------------------- numbers in settings
# Shared with the command line (shapes: `launch.parse_dims`, as `dims` here).
_WHOLE = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)")
dims = parse_dims


def whole(text: str) -> int:
    """`4096`, `-1` or `0x1000` (no octal, no `_`), else ValueError."""
    t = text.strip()
    if not _WHOLE.fullmatch(t):
        raise ValueError(f"'{text}' is not a whole number (decimal or 0x hex)")
    return int(t, 16 if t.lstrip("+-")[:2].lower() == "0x" else 10)


def number(text: str) -> int | float:
    """A whole number as `whole` reads it, else a float (`1.5`, `1e-3`; `inf` and
    `nan` too: a float parameter may be given them)."""
    try:
        return whole(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"'{text}' is not a number") from None


def finite(text: str) -> float:
    """A finite float: `nan` compares false with every bound and `inf` is none."""
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"'{text}' is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"'{text}' is not a finite number")
    return v


@dataclass(frozen=True)
class Overrides:
    """What the command line (or an API call) sets; None: keep the file's value."""

    arch: str | None = None
    enable: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    time_budget: float | None = None
    kernels: tuple[str, ...] = ()
    launch: LaunchConfig | None = None  # only the fields given are set


# ---------------------------------------------------------------- editor settings
SETTING_KEYS = ("arch", "enable", "disable", "severity", "time-budget", "block", "grid",
                "dynamic-smem", "params", "extents")


@dataclass(frozen=True)
class EditorSettings:
    """What an editor sets for the language server: overrides of the configuration
    file, as the command line's options are, and the minimum severity shown."""

    overrides: Overrides = Overrides()
    severity: Severity | None = None


def editor_settings(values: Any, origin: str = "editor settings") -> EditorSettings:
    """The `ptxlint` object of an editor's settings (LSP `initializationOptions` or
    `workspace/didChangeConfiguration`): the keys of `[tool.ptxlint]` but `format`,
    `uncoalesced-ratio` and the launch tables, and one launch for every kernel given
    by `block`, `grid`, `dynamic-smem`, `params` and `extents`. Keys may be written
    camelCase (`dynamicSmem`). Anything wrong is a ConfigError naming `origin`."""
    where = Path(origin)
    if not isinstance(values, dict):
        raise ConfigError(where, f"expected an object of settings, not {type(values).__name__}")
    table = {re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", str(k)).lower().replace("_", "-"): v
             for k, v in values.items()}
    unknown = sorted(set(table) - set(SETTING_KEYS))
    if unknown:
        raise ConfigError(where, f"unknown setting '{unknown[0]}' "
                                 f"(known: {', '.join(SETTING_KEYS)})")
    get = _Getter(table, where, "ptxlint")
    severity, arch = get.choice("severity", tuple(SEVERITIES)), get.string("arch")
    if arch is not None:
        try:
            arch_mod.get(arch)
        except ValueError as exc:
            raise ConfigError(where, f"arch: {exc}") from None
    enable, disable = get.strings("enable"), get.strings("disable") or ()
    bad = unknown_rules((*(enable or ()), *disable))
    if bad:
        raise ConfigError(where, f"unknown rule '{bad[0]}' (see --list-rules)")
    launch = None
    if {"block", "grid", "dynamic-smem", "params", "extents"} & set(table):
        smem = get.whole("dynamic-smem")
        try:
            launch = LaunchConfig(
                block=_dims(table.get("block")), grid=_dims(table.get("grid")),
                dynamic_smem=smem, params=_keyed(get.table("params")),
                extents=_keyed(get.table("extents"), whole=True))
        except (ValueError, TypeError) as exc:
            raise ConfigError(where, f"launch: {exc}") from None
    return EditorSettings(Overrides(arch=arch, enable=enable, disable=tuple(disable),
                                    time_budget=get.positive("time-budget"), launch=launch),
                          SEVERITIES[severity] if severity else None)


def options(config: Config, overrides: Overrides = Overrides()):
    """The `LintOptions` for files governed by `config`."""
    from .lint import LintOptions  # noqa: PLC0415  (the analysis: not at import time)

    enable = overrides.enable if overrides.enable is not None else config.enable
    disable = (expand_rules(config.disable) - expand_rules(overrides.enable or ())) \
        | expand_rules(overrides.disable)
    return LintOptions(
        arch=overrides.arch or config.arch, kernels=overrides.kernels,
        launches=merge_launches(config.launches, overrides.launch),
        enable=frozenset(expand_rules(enable)) if enable is not None else None,
        disable=frozenset(disable),
        time_budget=overrides.time_budget or config.time_budget or LintOptions.time_budget,
        rule_options=dict(config.rule_options))


def merge_launches(tables: tuple[tuple[str, LaunchConfig], ...],
                   given: LaunchConfig | None) -> dict[str, LaunchConfig]:
    """Each table with the command line's fields on top, then the command line alone
    for every other kernel."""
    out: dict[str, LaunchConfig] = {}
    if given is None:
        for pattern, cfg in tables:
            out.setdefault(pattern, cfg)  # the first table for a pattern applies
        return out
    for pattern, cfg in tables:
        if pattern in out:
            continue
        out[pattern] = replace(
            cfg, block=given.block or cfg.block, grid=given.grid or cfg.grid,
            dynamic_smem=given.dynamic_smem if given.dynamic_smem is not None
            else cfg.dynamic_smem,
            params={**cfg.params, **given.params}, extents={**cfg.extents, **given.extents})
    out.setdefault("*", given)
    return out


__all__ = ["Config", "ConfigError", "Overrides", "EditorSettings", "editor_settings", "find",
           "for_file", "load", "parse",
           "options", "merge_launches", "unknown_rules", "expand_rules", "is_pattern", "whole",
           "number", "finite", "dims",
           "param_key", "FILES", "FORMATS"]
