"""The pre-launch hook: every launch is checked by `ptxlint.check_before_launch` with its
real grid, block, buffer sizes and the scalars that can change a finding before its
module is loaded.

Error-level findings raise `LaunchRefused` (a `ptxlint.PreLaunchError`) and the launch
does not happen; its `str()` shows the errors first, then the warnings, and notes only
when asked (`render(notes=True)`, the command line's `--notes`), each buffer and scalar
named by its role (`partial`) rather than its PTX name (`european_param_0`). Warnings
are logged by ptxlint on the `ptxlint` logger; `enabled=False` (`--no-lint`) skips the
check.

What is passed decides what is cached: ptxlint caches a result per (PTX, kernel, launch
as given), in the process and in `lint/` of the pricer's cache directory
(`build.default_cache_dir()`). The launch as given is the grid, the block, every
buffer's size and only the `control` scalars (`catalog`'s docstring says which and why):
market data and seeds are left out, so a new spot, strike, rate, volatility or seed
reuses the result instead of analysing the kernel again, in this run or a later one.
Leaving a value out never makes the analysis unsound, only less precise, and those
values reach no address or branch.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from .catalog import Launch

try:  # ptxlint is imported lazily below; the class must exist for `except` clauses
    from ptxlint.hook import PreLaunchError as _PreLaunchError
except ImportError:  # pragma: no cover - ptxlint is this package's own distribution
    _PreLaunchError = RuntimeError  # type: ignore[misc,assignment]


@dataclass
class LintRecord:
    kernel: str
    seconds: float
    warnings: int = 0
    notes: int = 0
    findings: list = field(default_factory=list)  # ptxlint Diagnostics, roles named

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "seconds": round(self.seconds, 6),
                "warnings": self.warnings, "notes": self.notes,
                "findings": [f"{d.line}:{d.column}: {d.severity}: {d.message} [{d.rule}]"
                             for d in self.findings if _at_least_warning(d)]}


class LaunchRefused(_PreLaunchError):
    """The pre-launch check refused `kernel`. `diagnostics`: every finding, with the
    arguments named by role; `str()` is `render()`: errors first, notes left out."""

    def __init__(self, diagnostics, ptx_text: str, kernel: str):
        super().__init__(diagnostics, ptx_text)
        self.kernel = kernel

    def __str__(self) -> str:
        return self.render()

    def render(self, notes: bool = False) -> str:
        from ptxlint import Severity  # noqa: PLC0415
        from ptxlint.report.text import render  # noqa: PLC0415

        def of(*levels):
            return sorted((d for d in self.diagnostics if d.severity in levels),
                          key=lambda d: d.sort_key())

        errors = of(Severity.ERROR)
        warnings = of(Severity.WARNING)
        rest = [d for d in self.diagnostics if d.severity < Severity.WARNING]
        shown = errors + warnings + (sorted(rest, key=lambda d: d.sort_key()) if notes else [])
        n = len(errors)
        parts = [f"ptxlint refused the launch of {self.kernel}: {n} error"
                 + ("s" if n != 1 else "")]
        parts += [render([d], {d.file: self._text}).rstrip("\n") for d in shown]
        tail = f"{_count(len(errors), 'error')}, {_count(len(warnings), 'warning')}"
        if rest:
            tail += (f", {_count(len(rest), 'note')}" if notes else
                     f"; {_count(len(rest), 'note')} not shown (--notes shows them)")
        return "\n\n".join(parts + [tail])


def check(launch: Launch, ptx: str, arch: str, cache_dir=None) -> LintRecord:
    """Lint one launch; raises LaunchRefused on error-level findings. `cache_dir`:
    where results are kept between runs (`check_before_launch`)."""
    import ptxlint  # noqa: PLC0415  (on first launch: `import pricing_kernels` stays cheap)

    start = time.perf_counter()
    try:
        found = ptxlint.check_before_launch(
            ptx, launch.kernel, block=launch.block, grid=launch.grid,
            params=launch.lint_params(), extents=launch.lint_extents(),
            dynamic_smem=launch.dynamic_smem, arch=arch, cache_dir=cache_dir)
    except ptxlint.PreLaunchError as exc:
        raise LaunchRefused(name_roles(exc.diagnostics, launch), ptx, launch.kernel) \
            from None
    seconds = time.perf_counter() - start
    found = name_roles(found, launch)
    warnings = sum(1 for d in found if _at_least_warning(d))
    return LintRecord(launch.kernel, seconds, warnings, len(found) - warnings, found)


def name_roles(diagnostics, launch: Launch) -> list:
    """`diagnostics` with each PTX parameter name (`european_param_0`, as NVRTC and nvcc
    name them) replaced by the argument's role (`partial`) in the text a reader sees."""
    roles = launch.roles()
    pattern = re.compile(rf"\b{re.escape(launch.kernel)}_param_(\d+)\b")

    def text(s):
        if s is None:
            return None
        return pattern.sub(lambda m: roles.get(int(m.group(1)), m.group(0)), s)

    return [replace(d, message=text(d.message), label=text(d.label), help=text(d.help),
                    notes=tuple(text(n) for n in d.notes),
                    related=tuple(replace(r, label=text(r.label)) for r in d.related))
            for d in diagnostics]


def summary(records: list[LintRecord], enabled: bool) -> dict | None:
    """The `lint` object of the JSON output: None when nothing was launched."""
    if not enabled:
        return {"enabled": False}
    if not records:
        return None
    return {"enabled": True, "seconds": round(sum(r.seconds for r in records), 6),
            "warnings": sum(r.warnings for r in records),
            "launches": [r.to_json() for r in records]}


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("s" if n != 1 else "")


def _at_least_warning(d) -> bool:
    from ptxlint import Severity  # noqa: PLC0415

    return d.severity >= Severity.WARNING


__all__ = ["LintRecord", "LaunchRefused", "check", "summary", "name_roles"]
