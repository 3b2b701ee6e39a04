"""A comparable summary of a parsed module, for print/re-parse round trips."""
from __future__ import annotations

from ptxlint.ir.instruction import Instruction
from ptxlint.ir.module import Label, ListDirective, Module, Pragma, ScopeMarker, Variable
from ptxlint.ir.printer import variable_text


def statement_signature(s) -> tuple:
    if isinstance(s, Instruction):
        return ("insn", type(s).__name__, s.opcode, s.mods, s.guard, s.operands,
                (s.loc.file, s.loc.line, s.loc.column) if s.loc else None)
    if isinstance(s, Label):
        return ("label", s.name, s.directive.text if s.directive else None)
    if isinstance(s, ListDirective):
        return ("list", s.kind, s.items)
    if isinstance(s, Variable):
        return ("var", variable_text(s))
    if isinstance(s, ScopeMarker):
        return ("scope", s.opening)
    if isinstance(s, Pragma):
        return ("pragma", s.values)
    raise AssertionError(type(s))


def module_signature(m: Module) -> tuple:
    functions = tuple(
        (f.name, f.kind, f.linkage, tuple(map(variable_text, f.params)),
         tuple(map(variable_text, f.returns)), tuple(sorted(f.directives.items())),
         None if f.body is None else tuple(map(statement_signature, f.body)))
        for f in m.functions)
    return (m.version, m.targets, m.address_size, m.files,
            tuple(map(variable_text, m.variables)), functions, tuple(m.aliases))
