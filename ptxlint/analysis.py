"""`analyze(function, launch)`: the one public door into the abstract interpreter."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .deadline import Deadline, DeadlineExceeded
from .diagnostics import Certainty, Diagnostic, Severity
from .gcpause import collector_paused
from .interp.calls import CallAnalyzer
from .interp.context import Ctx
from .interp.facts import Facts, FixpointParams
from .interp.prepass import prepass
from .interp.worklist import Interpreter, WorkExceeded
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
    stopped: DeadlineExceeded | None = None  # the deadline ended the analysis

    @property
    def complete(self) -> bool:
        return self.facts is not None


def analyze(function: Function, launch=None, *, module: Module | None = None,
            params: FixpointParams = FixpointParams(),
            deadline: Deadline | None = None) -> AnalysisResult:
    """Abstract interpretation of one function (an entry, usually) to a fixpoint.
    `deadline`: the kernel's (the lint's, a rule's re-analysis), else one of
    `params.time_budget` seconds. Past it the result has no facts, `stopped` says
    where, and an `analysis-incomplete` note is among its diagnostics."""
    start = time.perf_counter()
    # The fixpoint allocates many small acyclic values (`gcpause.py`): paused from the
    # first allocation on (those counted while parsing paused it would otherwise start a
    # full collection right here).
    with collector_paused():
        module = module or function.module or Module(path="<memory>", functions=[function])
        launch = (launch or LaunchConfig()).resolved(function)  # ValueError: bad config
        if deadline is None:
            deadline = Deadline(params.time_budget)
        result = _analyze(function, launch, module, params, deadline)
    result.seconds = time.perf_counter() - start
    return result


def _analyze(function: Function, launch, module: Module, params: FixpointParams,
             deadline: Deadline) -> AnalysisResult:
    ctx = Ctx(function, module, launch, thread_bounds(function, launch))
    calls = CallAnalyzer(module, params, launch, deadline)
    result = AnalysisResult(function, None)
    try:
        with deadline.phase("pre-passes"):  # the loops of the CFG, the rules' slice
            # the CFG and what else depends on the function alone, shared with the other
            # analyses of it on this deadline (the rules' re-analyses under other launches)
            pre = prepass(function, deadline)
            interp = Interpreter(pre.cfg, ctx, params, calls, deadline, pre)
        entry = initial_state(function, module, launch)
        with deadline.phase("fixpoint"):
            in_states = interp.run(entry)
        result.facts = Facts(pre.cfg, ctx, in_states, interp.divergent, interp)
        result.callee_facts = calls.facts
    except DeadlineExceeded as exc:  # no iterate short of the fixpoint reaches a rule
        result.stopped = exc
        result.diagnostics.append(incomplete(module, function, exc))
    except WorkExceeded:  # the caller's `params.max_work`: no facts, as it asked
        pass
    for insn, message in ctx.notes.values():
        result.diagnostics.append(Diagnostic(
            UNMODELLED, Severity.NOTE, message, module.path, insn.span, kernel=function.name,
            details={"opcode": insn.opcode}))
    return result


def incomplete(module: Module, kernel: Function, exc: DeadlineExceeded,
               unfinished: tuple[str, ...] | None = None) -> Diagnostic:
    """The `analysis-incomplete` note of a kernel whose time budget ran out in phase
    `exc.phase`: in its analysis (`unfinished` None: nothing is reported for it), or in
    its rules (`unfinished`: the rules that did not finish; the findings every rule made
    before are reported, each computed on the final facts)."""
    budget = "its" if exc.budget is None else f"its {exc.budget:g} s"
    if unfinished is None:
        message = (f"analysis of '{kernel.name}' stopped at {budget} time budget in "
                   f"`{exc.phase}`: no findings are reported for it")
    else:
        message = (f"checking of '{kernel.name}' stopped at {budget} time budget in "
                   f"`{exc.phase}`: findings of {', '.join(unfinished)} may be missing")
    return Diagnostic(
        INCOMPLETE, Severity.NOTE, message, module.path, kernel.span, kernel=kernel.name,
        certainty=Certainty.DEFINITE,
        details={"phase": exc.phase, "budget": exc.budget,
                 "unfinished": list(unfinished or ())},
        help="raise the time budget (--time-budget) or simplify the kernel")
