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
import logging
import os
import pickle
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic, Severity

log = logging.getLogger("ptxlint")

OPTIONS = ("enable", "disable", "time_budget", "path", "uncoalesced_ratio", "kernels")
_CACHE: dict[tuple, tuple[Diagnostic, ...]] = {}
_CACHE_SIZE = 64
_DISK_CACHE_FILES = 512  # a `cache_dir` keeps the newest this many results


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
        from .report.text import Summary, render  # noqa: PLC0415

        n = len(self.errors)
        head = f"ptxlint refused the launch: {n} error" + ("s" if n != 1 else "") + "\n\n"
        return head + render(self.diagnostics, {self._path: self._text}, Summary(files=1))


def check(ptx_text: str, kernel: str | Iterable[str] | None = None, launch: Any = None,
          arch: str | None = None, **options: Any) -> list[Diagnostic]:
    """Every finding for the PTX module `ptx_text`, sorted by position.

    `kernel`: an entry name or fnmatch pattern (or several); None analyses every
    entry. `launch`: a `LaunchConfig`, a mapping of its fields (`block`, `grid`,
    `dynamic_smem`, `params`, `extents`) or a spec string (`"block=256 grid=64
    param.n=1024 buffer.x=4096"`). `arch`: `sm_XX`, overriding `.target`.
    `options`: `enable`/`disable` (rule ids), `time_budget` (seconds per kernel),
    `uncoalesced_ratio`, `path` (the name diagnostics carry, default `<ptx>`).
    """
    return _lint(ptx_text, kernel, _launch(launch), arch, options).diagnostics


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
        enable=frozenset(_ids(enable)) if enable is not None else None,
        disable=frozenset(_ids(options.get("disable", ()))),
        rule_options={k: options[k] for k in ("uncoalesced_ratio",) if k in options})
    if options.get("time_budget") is not None:
        lint_options.time_budget = float(options["time_budget"])
    return lint_text(ptx_text, options.get("path", "<ptx>"), lint_options)


def check_before_launch(ptx_text: str, kernel: str, block: Any, grid: Any,
                        params: Mapping[str | int, int | float] | None = None,
                        extents: Mapping[str | int, int] | None = None,
                        dynamic_smem: int = 0, arch: str | None = None,
                        cache_dir: str | os.PathLike | None = None) -> list[Diagnostic]:
    """Check one launch of `kernel`: raise `PreLaunchError` if any finding is an
    error (the PTX does not parse, the kernel does not exist, the launch does not fit
    the hardware or the kernel's parameters, or a rule finds an error); otherwise log
    the warnings (logger `ptxlint`) and return every finding, warnings and notes.
    `block`/`grid`: an int, a sequence of up to three ints, or `"32,8"`. Results are
    cached per (text, kernel, launch) in the process and, with `cache_dir`, in files
    there, so that a program launching the same kernel the same way in every run pays
    for the analysis once (the files are keyed by ptxlint's own code too)."""
    key = (ptx_text, kernel, str(block), str(grid), _frozen(params), _frozen(extents),
           dynamic_smem, arch)
    found = _CACHE.get(key)
    if found is None and cache_dir is not None:
        found = _load(Path(cache_dir), key)
    if found is None:
        found = tuple(_launch_findings(ptx_text, kernel, block, grid, params, extents,
                                       dynamic_smem, arch))
        if cache_dir is not None:
            _store(Path(cache_dir), key, found)
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = found
    diagnostics = list(found)
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        raise PreLaunchError(diagnostics, ptx_text)
    for d in diagnostics:
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


def _load(cache_dir: Path, key: tuple) -> tuple[Diagnostic, ...] | None:
    try:
        with open(_file(cache_dir, key), "rb") as f:
            found = pickle.load(f)  # written by `_store` below, in the user's own cache
    except Exception:  # noqa: BLE001 - missing, truncated or from elsewhere: analyse
        return None
    ok = isinstance(found, tuple) and all(isinstance(d, Diagnostic) for d in found)
    return found if ok else None


def _store(cache_dir: Path, key: tuple, found: tuple[Diagnostic, ...]) -> None:
    """Write atomically (rename), then keep the newest `_DISK_CACHE_FILES` files; a
    directory that cannot be written only loses the cache."""
    path = _file(cache_dir, key)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
        files = sorted(cache_dir.glob("*.lint"), key=lambda p: p.stat().st_mtime_ns)
        for old in files[:max(0, len(files) - _DISK_CACHE_FILES)]:
            old.unlink(missing_ok=True)
    except OSError:
        log.debug("ptxlint: cannot write the lint cache in %s", cache_dir)


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


def _ids(rules: str | Iterable[str]) -> tuple[str, ...]:
    return (rules,) if isinstance(rules, str) else tuple(rules)


def _literal(name: str) -> str:
    """`name` as an fnmatch pattern matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _frozen(mapping: Mapping | None) -> tuple:
    return tuple(sorted(((str(k), v) for k, v in (mapping or {}).items())))


__all__ = ["check", "check_before_launch", "PreLaunchError"]
