"""The rule interface and registry.

A rule reads the final `Facts` of one kernel (never the iteration in progress) and
yields diagnostics. Its id is permanent (renames keep an alias); its docstring is its
documentation (`ptxlint --explain ID`, SARIF metadata) with the sections
`## What it does`, `## Why is this bad?`, `## Example`, `## Use instead`, `## Suppress`.
"""
from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Protocol

from ..arch import Arch
from ..deadline import Deadline
from ..diagnostics import Certainty, CudaLocation, Diagnostic, Related, Severity
from ..interp.facts import Facts, FixpointParams
from ..ir.instruction import Instruction
from ..ir.module import Function, Module, Variable
from ..ir.traits import MemoryAccess
from ..parse.lexer import operand_offsets
from ..source import Span

RULES: dict[str, type["Rule"]] = {}
ALIASES: dict[str, str] = {}


class Replay(Protocol):
    """lint's emulated run of one kernel under its exact launch (`ptxlint/replay.py`)."""

    failure: str | None  # why an attempted run gave no answer

    def extent(self, insn: Instruction, obj: str, space: str
               ) -> tuple[int, int, str | None] | None: ...


# lint's services (`lint.rule_context` builds them): (function, launch, params, deadline)
# -> an `AnalysisResult`, and the context -> its kernel's replay. A rule asks them through
# its context (`reanalyze`, `replay`); it never runs the analysis or the emulator itself.
Reanalysis = Callable[[Function, Any, FixpointParams, Deadline], Any]
Replayer = Callable[["RuleContext"], Replay]


@dataclass
class RuleContext:
    """What a rule may consult besides the facts, and the services it may ask for."""

    module: Module
    function: Function
    facts: Facts
    arch: Arch
    launch: Any  # the resolved LaunchConfig
    options: dict[str, Any] = field(default_factory=dict)
    # the kernel, when `function` is a device function it calls (`facts` then hold the
    # callee under one argument state)
    entry: Function | None = None
    # the kernel's time budget (`deadline.py`): a rule checks it in its loops that grow
    # with the kernel (per access, per pair) and hands it to the re-analyses it asks for
    deadline: Deadline = field(default_factory=Deadline)
    # lint's services: None where a context is built without them (asking then fails)
    reanalysis: Reanalysis | None = None
    replayer: Replayer | None = None
    _replay: Replay | None = field(default=None, init=False, repr=False, compare=False)

    def reanalyze(self, launch, params: FixpointParams, phase: str) -> Facts | None:
        """The function's facts under another `launch` (the same function and module),
        within the kernel's time budget, as deadline phase `phase`; None when the
        re-analysis gave up within `params` (`max_work`). Raises `DeadlineExceeded`
        when the kernel's budget runs out: the rule stops, as in any phase."""
        if self.reanalysis is None:
            raise RuntimeError("this rule context has no re-analysis service")
        with self.deadline.phase(phase):
            result = self.reanalysis(self.function, launch, params, self.deadline)
        if result.stopped is not None:
            raise result.stopped
        return result.facts

    def replay(self) -> Replay:
        """The kernel under its exact launch, run on the emulator once, on first use
        (one per context: its answers are shared by the rule's questions)."""
        if self._replay is None:
            if self.replayer is None:
                raise RuntimeError("this rule context has no replay service")
            self._replay = self.replayer(self)
        return self._replay

    @property
    def kernel(self) -> Function:
        """The entry the launch is for: its parameters name the buffers."""
        return self.entry or self.function

    @property
    def block(self) -> tuple[int, int, int] | None:
        return self.launch.block if self.launch is not None else None

    def span_of(self, insn: Instruction) -> Span | None:
        """Where a finding about `insn` points: a memory access's address operand
        (`[%rd4+8]`), otherwise the whole instruction."""
        span = insn.span
        if isinstance(insn, MemoryAccess) and span is not None:
            return _address_span(self.module, insn, span)
        return span

    @cached_property
    def _positions(self) -> dict[int, int]:
        return {id(s): i for i, s in enumerate(self.function.body or ())}

    def position(self, statement) -> int:
        """The index of `statement` in the function's body (len(body) if absent)."""
        return self._positions.get(id(statement), len(self._positions))

    @cached_property
    def declarations(self) -> dict[str, tuple[list[int], list[Variable]]]:
        """Variable name -> (body indices, declarations) in body order: call sequences
        redeclare `param0`/`retval0` in each `{ }` block."""
        out: dict[str, tuple[list[int], list[Variable]]] = {}
        for i, s in enumerate(self.function.body or ()):
            if isinstance(s, Variable):
                at, decls = out.setdefault(s.name, ([], []))
                at.append(i)
                decls.append(s)
        return out


class Rule:
    id: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.WARNING
    aliases: ClassVar[tuple[str, ...]] = ()
    stage: ClassVar[str] = "stable"
    # judges single instructions from their own facts, so it also runs on the device
    # functions a kernel calls (`lint.check_rules`)
    checks_callees: ClassVar[bool] = False

    def __init_subclass__(cls, id: str | None = None, severity: Severity | None = None,
                          checks_callees: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        if id is None:
            return
        cls.id = id
        cls.checks_callees = checks_callees
        if severity is not None:
            cls.severity = severity
        if id in RULES:
            raise ValueError(f"rule {id!r} registered twice")
        RULES[id] = cls
        for alias in cls.aliases:
            ALIASES[alias] = id

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.doc().splitlines()[0] if cls.__doc__ else cls.id

    def check(self, rc: RuleContext) -> Iterator[Diagnostic]:
        raise NotImplementedError

    def diagnostic(self, rc: RuleContext, where: Instruction | Span | None, message: str, *,
                   severity: Severity | None = None,
                   certainty: Certainty = Certainty.DEFINITE, label: str | None = None,
                   notes: tuple[str, ...] | list[str] = (), help: str | None = None,
                   details: dict[str, Any] | None = None,
                   related: tuple[Related, ...] | list[Related] = ()) -> Diagnostic:
        span = rc.span_of(where) if isinstance(where, Instruction) else where
        cuda = None
        if isinstance(where, Instruction) and where.loc is not None:
            name = rc.module.files.get(where.loc.file)
            if name is not None and not os.path.isabs(name):
                # nvcc records the path it was given: relative to the PTX file's folder
                name = os.path.normpath(os.path.join(os.path.dirname(rc.module.path), name))
            if name is not None:
                cuda = CudaLocation(name, where.loc.line, where.loc.column)
        return Diagnostic(self.id, self.severity if severity is None else severity, message,
                          rc.module.path, span,
                          kernel=rc.kernel.name, certainty=certainty, label=label,
                          notes=tuple(notes), help=help, details=dict(details or {}),
                          cuda=cuda, related=tuple(related))


def _address_span(module: Module, insn: MemoryAccess, span: Span) -> Span:
    """The span of the access's address operand (`[%rd4+8]`): what a finding about the
    access is about; the whole instruction when the text is not at hand."""
    address = insn.address
    index = next((i for i, op in enumerate(insn.operands) if op is address), None)
    if module.source is None or index is None:
        return span
    operands = operand_offsets(module.source.text, span.start, span.end)
    return module.source.span(*operands[index]) if index < len(operands) else span


def load_rules() -> dict[str, type[Rule]]:
    """Import every rule module once; the registry of rule id -> class."""
    import importlib
    import pkgutil

    from .. import rules

    for info in pkgutil.iter_modules(rules.__path__):
        if info.name not in ("base", "unmodelled"):
            importlib.import_module(f"{rules.__name__}.{info.name}")
    return RULES


def canonical(rule_id: str) -> str:
    return ALIASES.get(rule_id, rule_id)


__all__ = ["Rule", "RuleContext", "RULES", "load_rules", "canonical", "Facts"]
