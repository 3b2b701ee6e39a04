"""The library API: `check()` for any caller and `check_before_launch()` for code about
to launch a kernel (the pricer): same `lint_text()` as the command line, no files.

    import ptxlint
    warnings = ptxlint.check_before_launch(ptx, "saxpy", block=256, grid=4096,
                                           params={"n": 1 << 20}, extents={"x": 4 << 20})
    # raises ptxlint.PreLaunchError when any finding is an error
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .diagnostics import Certainty, CudaLocation, Diagnostic, Related, Severity
from .source import SourceFile, Span

log = logging.getLogger("ptxlint")

OPTIONS = ("enable", "disable", "time_budget", "path", "uncoalesced_ratio", "kernels")
_CACHE: dict[tuple, tuple[Diagnostic, ...]] = {}
_CACHE_SIZE = 64
_DISK_CACHE_FILES = 512  # a `cache_dir` keeps the newest this many results
# The files are JSON, never pickle: anyone who can write to the directory could make a
# pickle run code in the launching process. Pickles of older versions are not JSON
# and are ignored (and evicted like any old file).
_CACHE_FORMAT = "ptxlint-launch-cache"
_CACHE_VERSION = 2


class PreLaunchError(RuntimeError):
    """A kernel launch refused because of error-level findings. `diagnostics` holds
    every finding; `str()` shows them as the text reporter does."""

    def __init__(self, diagnostics: Iterable[Diagnostic], ptx_text: str = "",
                 path: str = "<ptx>"):
        self.diagnostics = list(diagnostics)
        self.errors = [d for d in self.diagnostics if d.severity >= Severity.ERROR]
        self._text, self._path = ptx_text, path
        super().__init__(f"{len(self.errors)} error-level finding(s)")

    def __str__(self) -> str:
        from .grouping import group  # noqa: PLC0415
        from .report.text import Summary, render  # noqa: PLC0415

        n = len(self.errors)
        head = f"ptxlint refused the launch: {n} error" + ("s" if n != 1 else "") + "\n\n"
        return head + render(group(self.diagnostics), {self._path: self._text},
                             Summary(files=1))


def check(ptx_text: str | bytes, kernel: str | Iterable[str] | None = None,
          launch: Any = None, arch: str | None = None, **options: Any) -> list[Diagnostic]:
    """Every finding for the PTX module `ptx_text`, sorted by position, the findings
    of one CUDA line on several instructions as one diagnostic (`Diagnostic.instances`
    holds each; `grouping`).

    `kernel`: an entry name (PTX or demangled) or fnmatch pattern (or several); None
    analyses every entry. `launch`: a `LaunchConfig`, a mapping of its fields (`block`, `grid`,
    `dynamic_smem`, `params`, `extents`) or a spec string (`"block=256 grid=64
    param.n=1024 buffer.x=4096"`). `arch`: `sm_XX`, overriding `.target`.
    `options`: `enable`/`disable` (rule ids), `time_budget` (seconds per kernel),
    `uncoalesced_ratio`, `path` (the name diagnostics carry, default `<ptx>`).
    `ptx_text` may be bytes, decoded as the command line decodes a file. Raises
    `TypeError` for other types and `ValueError` for an unknown rule id.
    """
    return _lint(_text(ptx_text, "check"), kernel, _launch(launch), arch,
                 options).grouped


def _lint(ptx_text: str, kernel: str | Iterable[str] | None, launch: Any,
          arch: str | None, options: dict[str, Any]):
    from .lint import LintOptions, lint_text  # noqa: PLC0415

    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError(f"check() got an unexpected keyword argument '{unknown[0]}'")
    kernels = (kernel,) if isinstance(kernel, str) else tuple(kernel or ())
    enable = options.get("enable")
    lint_options = LintOptions(
        arch=arch, kernels=kernels + tuple(options.get("kernels", ())), launch=launch,
        enable=frozenset(_ids("enable", enable)) if enable is not None else None,
        disable=frozenset(_ids("disable", options.get("disable", ()))),
        rule_options={k: options[k] for k in ("uncoalesced_ratio",) if k in options})
    if options.get("time_budget") is not None:
        lint_options.time_budget = float(options["time_budget"])
    return lint_text(ptx_text, options.get("path", "<ptx>"), lint_options)


def check_before_launch(ptx_text: str | bytes, kernel: str, block: Any, grid: Any,
                        params: Mapping[str | int, int | float] | None = None,
                        extents: Mapping[str | int, int] | None = None,
                        dynamic_smem: int = 0, arch: str | None = None,
                        cache_dir: str | os.PathLike | None = None) -> list[Diagnostic]:
    """Check one launch of `kernel`: raise `PreLaunchError` if any finding is an
    error (the PTX does not parse, the kernel does not exist, the launch does not fit
    the hardware or the kernel's parameters, or a rule finds an error); otherwise log
    the warnings (logger `ptxlint`; the findings of one CUDA line once) and return
    every finding, warnings and notes, each instruction's on its own (not grouped).
    `ptx_text` as for `check()`; `block`/`grid`: an int, a sequence of up to three
    ints, or `"32,8"`. Results are cached per (text, kernel, launch) in the process
    and, with `cache_dir`, in JSON files there, so that a program launching the same
    kernel the same way in every run pays for the analysis once (the files are keyed
    by ptxlint's own code too)."""
    ptx_text = _text(ptx_text, "check_before_launch")
    key = (ptx_text, kernel, str(block), str(grid), _frozen(params), _frozen(extents),
           dynamic_smem, arch)
    found = _CACHE.get(key)
    if found is None and cache_dir is not None:
        found = _load(Path(cache_dir), key, ptx_text)
    if found is None:
        found = tuple(_launch_findings(ptx_text, kernel, block, grid, params, extents,
                                       dynamic_smem, arch))
        if cache_dir is not None:
            _store(Path(cache_dir), key, found, ptx_text)
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = found
    from .grouping import group  # noqa: PLC0415

    diagnostics = list(found)  # each finding as made: a program acts on each
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        raise PreLaunchError(diagnostics, ptx_text)
    for d in group(diagnostics):  # the log says each once (`grouping`)
        level = logging.WARNING if d.severity >= Severity.WARNING else logging.DEBUG
        log.log(level, "%s:%d:%d: %s: %s [%s]", d.file, d.line, d.column, d.severity,
                d.message, d.rule)
    return diagnostics


# ---- results on disk ---------------------------------------------------------------------
@functools.cache
def _code_fingerprint() -> str:
    """ptxlint's version and its source files' sizes and times: a result computed by
    other code is never reused."""
    root = Path(__file__).resolve().parent
    from . import __version__  # noqa: PLC0415

    h = hashlib.sha256(__version__.encode())
    for path in sorted(root.rglob("*.py")):
        st = path.stat()
        h.update(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


def _file(cache_dir: Path, key: tuple) -> Path:
    h = hashlib.sha256(_code_fingerprint().encode())
    h.update(repr(key[1:]).encode())
    h.update(key[0].encode())
    return cache_dir / f"{h.hexdigest()[:40]}.lint"


def _load(cache_dir: Path, key: tuple, ptx_text: str) -> tuple[Diagnostic, ...] | None:
    """The stored result, or None when the file is missing, damaged or not ours (the
    launch is then analysed again). Reading JSON cannot run code; a tampered file can
    at worst change the findings, as anyone who can write the directory could."""
    path = _file(cache_dir, key)
    try:
        with open(path, "rb") as f:
            stored = json.loads(f.read())
        expected = {"format": _CACHE_FORMAT, "version": _CACHE_VERSION,
                    "code": _code_fingerprint(), "key": path.stem}
        if any(stored.get(k) != v for k, v in expected.items()):
            return None  # another version's file, or one copied here under another name
        source = SourceFile("<ptx>", ptx_text)
        return tuple(_from_json(entry, source) for entry in stored["diagnostics"])
    except Exception:  # noqa: BLE001 - missing, truncated, foreign or not valid: analyse
        return None


def _store(cache_dir: Path, key: tuple, found: tuple[Diagnostic, ...], ptx_text: str
           ) -> None:
    """Write atomically (rename), then keep the newest `_DISK_CACHE_FILES` files; a
    directory that cannot be written only loses the cache, and so does a result that
    JSON would not give back unchanged (a `details` value that is not plain JSON)."""
    from .report.json import diagnostic  # noqa: PLC0415

    path = _file(cache_dir, key)
    source = SourceFile("<ptx>", ptx_text)
    try:
        text = json.dumps({
            "format": _CACHE_FORMAT, "version": _CACHE_VERSION, "code": _code_fingerprint(),
            "key": path.stem, "diagnostics": [
                {**diagnostic(d), "cuda_column": d.cuda.column if d.cuda else None}
                for d in found]})
        if tuple(_from_json(e, source) for e in json.loads(text)["diagnostics"]) != found:
            return
    except (ValueError, TypeError, KeyError, IndexError):
        return
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        files = sorted(cache_dir.glob("*.lint"), key=lambda p: p.stat().st_mtime_ns)
        for old in files[:max(0, len(files) - _DISK_CACHE_FILES)]:
            old.unlink(missing_ok=True)
    except OSError:
        log.debug("ptxlint: cannot write the lint cache in %s", cache_dir)


def _from_json(entry: dict, source: SourceFile) -> Diagnostic:
    """The inverse of `report.json.diagnostic` (plus `cuda_column`) for diagnostics of
    `source`: spans get their offsets back from the text. Raises ValueError, TypeError,
    KeyError or IndexError on anything that is not such an entry."""
    def span(e: dict, line: str, column: str) -> Span:
        start = _offset(source, _int(e[line]), _int(e[column]))
        end = _offset(source, _int(e[f"end_{line}"]), _int(e[f"end_{column}"]))
        return source.span(start, end)

    cuda = None
    if entry["cuda_file"] is not None:
        cuda = CudaLocation(_str(entry["cuda_file"]), _int(entry["cuda_line"]),
                            _int(entry["cuda_column"]))
    details = entry["details"]
    if not isinstance(details, dict):
        raise TypeError("details is not an object")
    return Diagnostic(
        rule=_str(entry["rule"]), severity=Severity[_str(entry["severity"]).upper()],
        message=_str(entry["message"]), file=_str(entry["file"]),
        span=span(entry, "line", "column") if _int(entry["line"]) else None,
        kernel=_str(entry["kernel"], none=True),
        certainty=Certainty(entry["certainty"]), label=_str(entry["label"], none=True),
        notes=tuple(_str(n) for n in entry["notes"]),
        help=_str(entry["help"], none=True), details=details, cuda=cuda,
        related=tuple(Related(span(r, "line", "column"), _str(r["label"]))
                      for r in entry["related"]))


def _offset(source: SourceFile, line: int, column: int) -> int:
    if not (1 <= line <= len(source.line_starts) and column >= 1):
        raise IndexError(f"no position {line}:{column} in the text")
    return min(source.line_starts[line - 1] + column - 1, len(source.text))


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError(f"{value!r} is not an integer")
    return value


def _str(value: Any, none: bool = False) -> Any:
    if not (isinstance(value, str) or (none and value is None)):
        raise TypeError(f"{value!r} is not a string")
    return value


def _launch_findings(ptx_text, kernel, block, grid, params, extents, dynamic_smem,
                     arch) -> list[Diagnostic]:
    from .launch import LaunchConfig  # noqa: PLC0415
    from .lint import LAUNCH_ERROR  # noqa: PLC0415

    try:
        launch = LaunchConfig(block=_dims(block), grid=_dims(grid), dynamic_smem=dynamic_smem,
                              params=dict(params or {}), extents=dict(extents or {}))
    except ValueError as exc:  # a launch the hardware refuses (block of 2048 threads)
        return [Diagnostic(LAUNCH_ERROR, Severity.ERROR, str(exc), "<ptx>", None,
                           kernel=kernel)]
    report = _lint(ptx_text, _literal(kernel), launch, arch, {})
    if report.module is None or not report.parsed:
        return report.diagnostics
    names = [f.name for f in report.module.entries]
    if kernel not in names:
        return report.diagnostics + [Diagnostic(
            LAUNCH_ERROR, Severity.ERROR, f"the module has no kernel '{kernel}' "
            f"(kernels: {', '.join(names) or 'none'})", "<ptx>", None, kernel=kernel)]
    return report.diagnostics


def _launch(launch: Any):
    from .launch import LaunchConfig  # noqa: PLC0415

    if launch is None or isinstance(launch, LaunchConfig):
        return launch
    if isinstance(launch, str):
        return LaunchConfig.parse(launch)
    if isinstance(launch, Mapping):
        fields = dict(launch)
        for dim in ("block", "grid"):
            if dim in fields:
                fields[dim] = _dims(fields[dim])
        return LaunchConfig(**fields)
    raise TypeError(f"launch must be a LaunchConfig, a mapping or a spec string, "
                    f"not {type(launch).__name__}")


def _dims(value: Any) -> tuple[int, int, int] | None:
    from .launch import parse_dims  # noqa: PLC0415

    if value is None:
        return None
    if isinstance(value, int):
        value = (value,)
    if isinstance(value, str):
        return parse_dims(value)
    return parse_dims(",".join(str(int(v)) for v in value))


def _ids(option: str, rules: str | Iterable[str]) -> tuple[str, ...]:
    """The rule ids of `enable`/`disable`, checked as the command line checks --enable
    (rules, tool diagnostics, old names): a typo would otherwise turn every rule off."""
    from .config import unknown_rules  # noqa: PLC0415

    ids = (rules,) if isinstance(rules, str) else tuple(rules)
    unknown = unknown_rules(ids)
    if unknown:
        from .report import catalog  # noqa: PLC0415

        raise ValueError(f"{option}: unknown rule id {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(sorted(r.id for r in catalog()))})")
    return ids


def _text(ptx: Any, function: str) -> str:
    """`ptx` as text: bytes are decoded as the command line reads a file (UTF-8, bad
    bytes replaced, universal newlines: `open(path, encoding="utf-8",
    errors="replace")`, whose decoder this is)."""
    if isinstance(ptx, str):
        return ptx
    if isinstance(ptx, (bytes, bytearray)):
        return io.TextIOWrapper(io.BytesIO(ptx), encoding="utf-8", errors="replace").read()
    raise TypeError(f"{function}() expects PTX text as str or bytes, got "
                    f"{type(ptx).__name__}")


def _literal(name: str) -> str:
    """`name` as an fnmatch pattern matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _frozen(mapping: Mapping | None) -> tuple:
    return tuple(sorted(((str(k), v) for k, v in (mapping or {}).items())))


__all__ = ["check", "check_before_launch", "PreLaunchError"]
