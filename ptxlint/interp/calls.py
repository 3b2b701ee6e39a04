"""Calls to `.func`: the callee is analysed with the caller's argument values.

Arguments and results travel through `.param` variables: the caller `st.param`s
each argument, `call (ret), f, (args)`, then `ld.param`s the result. The callee is
analysed from a state whose parameter cells hold the arguments (and whose special
registers are the caller's: it runs in the same thread); its exit state's return
cells become the caller's result cells. Results are cached per (callee, arguments), and the callee's facts under each distinct
argument state are kept (`facts`) so that the rules check its accesses too.
Recursion, indirect calls and callees without a body are conservative: results
unknown, and a note says so.
"""
from __future__ import annotations

from ..deadline import Deadline
from ..domains.state import State
from ..domains.value import TOP
from ..ir.module import Module
from ..ir.operands import Register, Symbol
from ..ir.traits import Call
from .context import Ctx
from .facts import Facts
from .prepass import prepass
from .transfer.arith_values import read

SPECIAL_PREFIXES = ("%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid",
                    "%smid", "%nsmid", "%gridid", "%cluster", "%nclusterid", "%is_explicit",
                    "%lanemask", "%dynamic_smem", "%total_smem", "%aggr_smem", "%envreg")


class CallAnalyzer:
    def __init__(self, module: Module, params, launch=None, deadline: Deadline | None = None):
        self.module = module
        self.params = params
        self.launch = launch
        self.deadline = deadline if deadline is not None else Deadline(params.time_budget)
        self.stack: list[str] = []
        self.cache: dict[tuple, State | None] = {}
        # the facts of each callee under each distinct argument state, for the rules
        self.facts: list = []

    def apply(self, insn: Call, s: State, ctx: Ctx) -> None:
        callee_op = insn.callee
        callee = self.module.function(callee_op.name) if isinstance(callee_op, Symbol) else None
        results = [r.name for r in insn.returns if isinstance(r, Symbol)]
        result_regs = [r for r in insn.returns if isinstance(r, Register)]
        if callee is None or callee.body is None or callee.name in self.stack:
            why = ("an indirect call" if not isinstance(callee_op, Symbol) else
                   "recursion" if callee and callee.name in self.stack else
                   "a callee without a body")
            ctx.note(insn, f"results of {why} are treated as unknown")
            self._forget(s, results)
            for r in result_regs:
                s.assign(r.key, TOP)
            return
        entry = State()
        for key, v in s.regs.items():
            if key.startswith(SPECIAL_PREFIXES):
                entry.regs[key] = v
        for formal, actual in zip(callee.params, insn.arguments):
            if formal.space == "reg":  # a register argument: the formal is a register
                v = read(actual, s, ctx, formal.type.bits if formal.type else 64)
                if not v.is_top:
                    entry.regs[formal.name] = v
            elif isinstance(actual, Symbol):
                for (name, off), v in s.params.items():
                    if name == actual.name:
                        entry.params[(formal.name, off)] = v
        key = (callee.name, tuple(sorted((k, repr(v)) for k, v in entry.params.items())),
               tuple(sorted((k, repr(v)) for k, v in entry.regs.items())))
        if key not in self.cache:
            self.cache[key] = self._analyse(callee, entry, ctx)
        exit_state = self.cache[key]
        self._forget(s, results)
        for formal, actual in zip(callee.returns, insn.returns):
            if isinstance(actual, Register):  # a `.reg` return value
                s.assign(actual.key, TOP if exit_state is None else exit_state[formal.name])
        if exit_state is None:
            return
        for formal, actual in zip(callee.returns, results):
            for (name, off), v in exit_state.params.items():
                if name == formal.name:
                    s.params[(actual, off)] = v

    def _forget(self, s: State, names: list[str]) -> None:
        for cell in [c for c in s.params if c[0] in names]:
            del s.params[cell]

    def _analyse(self, callee, entry: State, caller: Ctx) -> State | None:
        from .worklist import Interpreter  # noqa: PLC0415 - mutual recursion
        # same thread, same launch: the caller's bounds; notes go to the caller's report
        ctx = Ctx(callee, self.module, self.launch, caller.bounds, caller.notes,
                  entry=caller.entry or caller.function)
        self.stack.append(callee.name)
        try:
            with self.deadline.phase(f"call to {callee.name}"):
                pre = prepass(callee, self.deadline)  # shared by every argument state
                interp = Interpreter(pre.cfg, ctx, self.params, self, self.deadline, pre)
                states = interp.run(entry)
        finally:
            self.stack.pop()
        self.facts.append(Facts(pre.cfg, ctx, states, interp.divergent, interp))
        return states[pre.cfg.exit]


__all__ = ["CallAnalyzer", "TOP"]
