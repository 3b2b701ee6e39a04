"""One differential case: a kernel, a launch and concrete inputs; `run_case` lints it
under the launch, emulates it with the same launch and inputs (observations on, the
probe attached) and compares the two (`match.compare`).

A `Result` is *sound* when no observation lacks its finding (`missed`), no observed
cost exceeds the static worst case (`over_bound`), no executed instruction is
unreachable for the analysis, and no probed register value lies outside its abstract
value (`violations`). Observations whose rule is not registered yet (`no_rule`) and
events that no rule covers (`unmapped`) are reported, not failed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..emulate import EmulationError, run_kernel
from ..emulate.program import Program
from ..ir.build import parse_module
from ..ir.module import Module
from ..launch import LaunchConfig
from .match import Comparison, compare
from .probe import Probe, ProbeStats, Violation
from .static import abstentions, claims, cost_bounds, lint_kernel

Dims = tuple[int, int, int]
PROBE_ALL_UP_TO = 400  # kernels up to this many instructions: claims at every instruction


@dataclass
class Case:
    name: str
    ptx: str
    kernel: str
    grid: Dims
    block: Dims
    args: dict  # for run_kernel: arrays are copied per run
    launch: LaunchConfig  # what the lint is told
    dynamic_smem: int = 0
    max_steps: int = 5_000_000
    path: str = "<ptx>"

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


@dataclass
class Result:
    case: Case
    comparison: Comparison | None = None
    violations: list[Violation] = field(default_factory=list)
    probe: ProbeStats = field(default_factory=ProbeStats)
    error: str | None = None  # the analysis did not finish, or the emulator stopped
    lint_seconds: float = 0.0
    run_seconds: float = 0.0

    @property
    def sound(self) -> bool:
        c = self.comparison
        return self.error is None and c is not None and not (
            c.missed or c.over_bound or c.unreachable or self.violations)

    def problems(self) -> list[str]:
        """One line per breach (empty when sound)."""
        if self.error is not None:
            return [f"{self.case.name}: {self.error}"]
        c = self.comparison
        assert c is not None
        out = [f"missed: {o}" for o in c.missed]
        out += [f"over the static bound: {o}" for o in c.over_bound]
        out += [f"executed but unreachable for the analysis: {s}" for s in c.unreachable]
        out += [f"gamma: {v}" for v in self.violations]
        return [f"{self.case.name}: {p}" for p in out]


def _module(case: Case) -> Module:
    parsed = parse_module(case.ptx, case.path)
    if not parsed.ok:
        raise ValueError(f"{case.name}: the PTX does not parse")
    return parsed.module


def run_case(case: Case, probe_every: int | None = None) -> Result:
    """Lint, emulate, compare. `probe_every`: claims at every k-th instruction (default:
    all of them up to PROBE_ALL_UP_TO instructions, else spread to about that many)."""
    result = Result(case)
    module = _module(case)
    start = time.perf_counter()
    side = lint_kernel(module, case.kernel, case.launch)
    result.lint_seconds = time.perf_counter() - start
    if side.facts is None:
        result.error = "the analysis did not finish"
        return result
    size = len(side.function.instructions)
    every = probe_every or max(1, -(-size // PROBE_ALL_UP_TO))
    found, guards = claims(side, every)
    probe = Probe(found, guards)
    args = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in case.args.items()}
    start = time.perf_counter()
    try:
        run = run_kernel(module, case.kernel, case.grid, case.block, args,
                         dynamic_smem=case.dynamic_smem, max_steps=case.max_steps, probe=probe)
    except EmulationError as exc:
        result.error = f"the emulator stopped: {exc}"
        return result
    finally:
        result.run_seconds = time.perf_counter() - start
    # the emulator's Program holds the module's own instruction objects, so the
    # static side's identities (bounds, claims) carry over
    program = probe.program or Program(module, case.kernel)
    result.comparison = compare(side.diagnostics, run.observations, program,
                                cost_bounds(side), abstentions(side), probe.executed,
                                side.facts.is_reachable,
                                case.threads_per_block)
    result.violations = probe.violations
    result.probe = probe.stats
    return result


__all__ = ["Case", "Result", "run_case"]
