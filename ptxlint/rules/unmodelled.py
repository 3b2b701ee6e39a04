"""`unmodelled-instruction`: an opcode whose semantics ptxlint does not model.

The analysis treats its destinations as unknown (sound but imprecise), so users
are told where precision may be lost.
"""
from __future__ import annotations

from collections.abc import Iterator

from ..diagnostics import Certainty, Diagnostic, Severity
from ..ir.module import Module

RULE_ID = "unmodelled-instruction"


def check(module: Module) -> Iterator[Diagnostic]:
    for fn in module.functions:
        for insn in fn.instructions:
            if insn.is_unmodelled:
                yield Diagnostic(
                    RULE_ID, Severity.NOTE,
                    f"'{insn.opcode}' is not modelled: its destinations are treated as unknown",
                    module.path, insn.span, kernel=fn.name, certainty=Certainty.DEFINITE,
                    details={"opcode": insn.opcode})
