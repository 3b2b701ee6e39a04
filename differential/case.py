"""One differential case: a kernel, a launch and concrete inputs; `run_case` lints it
under the launch, emulates it with the same launch and inputs (observations on, the
probe attached) and compares the two (`match.compare`).

A `Result` is *sound* when it has no `Breach`: no observation lacks its finding
(`missed`), no observed cost exceeds the static worst case (`over-bound`), no executed
instruction is unreachable for the analysis, no probed register value lies outside its
abstract value (`gamma`), and both sides ran (`error`). One exception: a `.uni` branch
or call whose lanes disagree is undefined behaviour (the analysis takes the promise as
given, the emulator splits the warp), so after a reported one (`after_ub`: reachable
from it) contradictions of uniformity claims (lane forms, the warp costs built on them,
later `.uni` branches the split lanes reach apart) are `excused()`, not breaches; an
unreported one is a miss and excuses nothing. Likewise after a reported barrier that
the run saw split (`after_barrier`), the threads meet each later barrier out of step:
those barriers' events are the same defect, excused, and so are contradictions of lane
forms there (a lane released by another barrier runs ahead of its warp: a loop counter
the analysis knows warp-uniform is at another trip in it). Observations whose rule is not
registered yet (`no_rule`) and
events that no rule covers (`unmapped`) are reported, not failed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ptxlint.emulate import EmulationError, run_kernel
from ptxlint.emulate.program import Program
from ptxlint.ir.build import parse_module
from ptxlint.ir.module import Module
from ptxlint.launch import LaunchConfig
from .match import COVERAGE_RULES, EVENT_RULES, Comparison, compare
from .probe import Probe, ProbeStats, Violation
from .hazard_claims import event_judges, hazard_abstentions
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
    # lines reachable from a `.uni` branch or call the run saw diverge: undefined
    # behaviour, after which uniformity claims (lane forms, costs) need not hold
    after_ub: set[int] = field(default_factory=set)
    # lines reachable from a reported barrier that the run saw split: the threads meet
    # every later barrier out of step (undefined behaviour), one defect, one finding
    after_barrier: set[int] = field(default_factory=set)
    lint_seconds: float = 0.0
    run_seconds: float = 0.0

    @property
    def sound(self) -> bool:
        return not self.breaches()

    def breaches(self) -> list[Breach]:
        """Every way the run contradicts the analysis (empty when sound)."""
        return [b for b in self.contradictions() if not self._excused(b)]

    def excused(self) -> list[Breach]:
        """Contradictions of uniformity claims after undefined behaviour (`after_ub`,
        `after_barrier`)."""
        return [b for b in self.contradictions() if self._excused(b)]

    def contradictions(self) -> list[Breach]:
        """Breaches and excused ones together."""
        if self.error is not None:
            return [Breach("error", None, self.error, None)]
        c = self.comparison
        assert c is not None
        return ([Breach("missed", o.site.line, str(o), o) for o in c.missed] +
                [Breach("over-bound", o.site.line, str(o), o) for o in c.over_bound] +
                [Breach("unreachable", s.line, f"executed but unreachable for the analysis: "
                        f"{s}", s) for s in c.unreachable] +
                [Breach("gamma", v.line, str(v), v) for v in self.violations])

    def _excused(self, b: Breach) -> bool:
        s = b.subject
        if b.line in self.after_barrier:
            if b.kind == "missed" and s.rule == "barrier-divergence":
                return True  # a later barrier the split threads meet out of step
            if isinstance(s, Violation) and s.component == "lane form":
                return True  # the lanes of a warp run out of step: one at another trip
        if b.line not in self.after_ub:
            return False
        if isinstance(s, Violation):
            return s.component == "lane form"
        return b.kind == "over-bound" or (b.kind == "missed" and s.rule in (
            *COVERAGE_RULES, "divergent-bra-uni"))

    def problems(self) -> list[str]:
        """One line per breach, naming the case."""
        return [f"{self.case.name}: {b.kind}: {b.text}" for b in self.breaches()]


BARRIER_EVENTS = tuple(k for k, r in EVENT_RULES.items() if r == "barrier-divergence")


@dataclass(frozen=True)
class Breach:
    """One contradiction: `subject` is the `Observation`, `Violation` or `Site`."""

    kind: str  # "missed", "over-bound", "unreachable", "gamma", "error"
    line: int | None
    text: str
    subject: object


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
                         dynamic_smem=case.dynamic_smem, max_steps=case.max_steps, probe=probe,
                         hazards=True)
    except EmulationError as exc:
        result.error = f"the emulator stopped: {exc}"
        return result
    finally:
        result.run_seconds = time.perf_counter() - start
    # the emulator's Program holds the module's own instruction objects, so the
    # static side's identities (bounds, claims) carry over
    program = probe.program or Program(module, case.kernel)
    result.comparison = compare(side.diagnostics, run.observations, program,
                                cost_bounds(side), {**abstentions(side),
                                                    **hazard_abstentions(side)},
                                probe.executed, side.facts.is_reachable,
                                case.threads_per_block, event_judges(side, program))
    result.violations = probe.violations
    result.probe = probe.stats
    cfg = side.facts.cfg
    result.after_ub = after_reported(run.observations, program, cfg, result.comparison,
                                     "divergent-bra-uni", ("divergent-uniform",))
    result.after_barrier = after_reported(run.observations, program, cfg, result.comparison,
                                          "barrier-divergence", BARRIER_EVENTS)
    return result


def after_reported(obs, program, cfg, comparison: Comparison, rule: str,
                   kinds: tuple[str, ...]) -> set[int]:
    """Lines of the kernel reachable from the block of an instruction where the run saw
    an event of `kinds` (undefined behaviour: a `.uni` branch whose lanes disagree, a
    barrier the threads reach out of step) that a confirmed `rule` finding reported (the
    instruction's own block only around a loop). An unreported one is a miss, and
    excuses nothing."""
    blocks = set()
    reported = {site.line for (r, site), ok in comparison.findings.items()
                if r == rule and ok}
    reported |= {copy.line for (r, copy), (_, site) in comparison.copies.items()
                 if r == rule and comparison.findings.get((r, site))}
    for ev in (e for kind in kinds for e in obs.of_kind(kind)):
        insn = program.instructions[ev.pc] if ev.pc is not None else None
        if ev.line not in reported:
            continue
        try:
            todo = list(cfg.blocks[cfg.block_of(insn)].succs)
        except KeyError:  # in a called function, or the implicit ret
            continue
        while todo:
            b = todo.pop()
            if b not in blocks:
                blocks.add(b)
                todo.extend(cfg.blocks[b].succs)
    return {i.span.line for b in blocks for i in cfg.blocks[b].instructions if i.span}


__all__ = ["Case", "Result", "Breach", "run_case", "after_reported"]
