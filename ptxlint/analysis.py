"""`analyze(function, launch)`: the one public door into the abstract interpreter."""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

from .cfg import build_cfg
from .diagnostics import Certainty, Diagnostic, Severity
from .interp.calls import CallAnalyzer
from .interp.context import Ctx
from .interp.facts import Facts
from .interp.worklist import BudgetExceeded, FixpointParams, Interpreter
from .ir.module import Function, Module
from .launch import LaunchConfig, initial_state, thread_bounds

INCOMPLETE = "analysis-incomplete"
UNMODELLED = "unmodelled-instruction"


@dataclass
class AnalysisResult:
    function: Function
    facts: Facts | None  # None when the analysis did not finish
    # the facts of each device function the kernel calls, per distinct argument state
    callee_facts: list[Facts] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return self.facts is not None


def analyze(function: Function, launch=None, *, module: Module | None = None,
            params: FixpointParams = FixpointParams()) -> AnalysisResult:
    """Abstract interpretation of one function (an entry, usually) to a fixpoint."""
    start = time.perf_counter()
    # The fixpoint allocates many small acyclic values while the parsed module (a large,
    # long-lived object graph) sits in memory: the cyclic collector would rescan that
    # graph again and again. Paused as while parsing (`ir.build.parse_module`), from the
    # first allocation on (the allocations counted while it was paused would otherwise
    # start a full collection right here).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        module = module or function.module or Module(path="<memory>", functions=[function])
        launch = (launch or LaunchConfig()).resolved(function)  # ValueError: bad config
        result = _analyze(function, launch, module, params)
    finally:
        if gc_was_enabled:
            gc.enable()
    result.seconds = time.perf_counter() - start
    return result


def _analyze(function: Function, launch, module: Module,
             params: FixpointParams) -> AnalysisResult:
    cfg = build_cfg(function)
    ctx = Ctx(function, module, launch, thread_bounds(function, launch))
    calls = CallAnalyzer(module, params, launch)
    interp = Interpreter(cfg, ctx, params, calls)
    result = AnalysisResult(function, None)
    try:
        entry = initial_state(function, module, launch)
        in_states = interp.run(entry)
        result.facts = Facts(cfg, ctx, in_states, interp.divergent, interp)
        result.callee_facts = calls.facts
    except BudgetExceeded:
        result.diagnostics.append(Diagnostic(
            INCOMPLETE, Severity.NOTE,
            f"analysis of '{function.name}' stopped after its {params.time_budget:g} s "
            f"budget: no findings are reported for it", module.path, function.span,
            kernel=function.name, certainty=Certainty.DEFINITE,
            help="raise the time budget (--time-budget) or simplify the kernel"))
    for insn, message in ctx.notes.values():
        result.diagnostics.append(Diagnostic(
            UNMODELLED, Severity.NOTE, message, module.path, insn.span, kernel=function.name,
            details={"opcode": insn.opcode}))
    return result
