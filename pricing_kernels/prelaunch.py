"""The pre-launch hook: every launch is checked by `ptxlint.check_before_launch` with its
real grid, block, scalar values and buffer sizes before its module is loaded.

Error-level findings raise `ptxlint.PreLaunchError` (its `str()` is the rendered
diagnostics) and the launch does not happen; warnings are logged by ptxlint on the
`ptxlint` logger; `enabled=False` (`--no-lint`) skips the check. The pricer keeps the
results in `lint/` of its build cache (`build.default_cache_dir()`), so a run that
launches what an earlier run launched does not analyse it again.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .catalog import Launch


@dataclass
class LintRecord:
    kernel: str
    seconds: float
    warnings: int = 0
    notes: int = 0
    findings: list = field(default_factory=list)  # ptxlint Diagnostics

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "seconds": round(self.seconds, 6),
                "warnings": self.warnings, "notes": self.notes,
                "findings": [f"{d.line}:{d.column}: {d.severity}: {d.message} [{d.rule}]"
                             for d in self.findings if _at_least_warning(d)]}


def check(launch: Launch, ptx: str, arch: str, cache_dir=None) -> LintRecord:
    """Lint one launch; raises PreLaunchError on error-level findings. `cache_dir`:
    where results are kept between runs (`check_before_launch`)."""
    import ptxlint  # noqa: PLC0415  (on first launch: `import pricing_kernels` stays cheap)

    start = time.perf_counter()
    found = ptxlint.check_before_launch(
        ptx, launch.kernel, block=launch.block, grid=launch.grid,
        params=launch.lint_params(), extents=launch.lint_extents(),
        dynamic_smem=launch.dynamic_smem, arch=arch, cache_dir=cache_dir)
    seconds = time.perf_counter() - start
    warnings = sum(1 for d in found if _at_least_warning(d))
    return LintRecord(launch.kernel, seconds, warnings, len(found) - warnings, list(found))


def summary(records: list[LintRecord], enabled: bool) -> dict | None:
    """The `lint` object of the JSON output: None when nothing was launched."""
    if not enabled:
        return {"enabled": False}
    if not records:
        return None
    return {"enabled": True, "seconds": round(sum(r.seconds for r in records), 6),
            "warnings": sum(r.warnings for r in records),
            "launches": [r.to_json() for r in records]}


def _at_least_warning(d) -> bool:
    from ptxlint import Severity  # noqa: PLC0415

    return d.severity >= Severity.WARNING


__all__ = ["LintRecord", "check", "summary"]
