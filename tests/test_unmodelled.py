"""An opcode without a modelled class still parses, declares its first operand as
written, and produces an `unmodelled-instruction` note; it is never dropped."""
from __future__ import annotations

import pytest

from ptxlint.ir import registry
from ptxlint.ir.build import parse_module
from ptxlint.ir.instruction import Unmodelled
from ptxlint.rules import unmodelled

SOURCE = """.version 9.0
.target sm_90
.address_size 64
.visible .entry k()
{
\t.reg .b32 %r<3>;
\tmov.u32 %r1, 7;
\tfrobulate.b32 %r2, %r1;
\tret;
}
"""


@pytest.fixture
def generic_opcode():
    """Register a made-up opcode the way a not-yet-modelled one is registered."""
    cls = type("Frobulate", (Unmodelled,), {"__slots__": ()})
    registry.register("frobulate", cls)
    yield cls
    registry.REGISTRY.pop("frobulate")
    registry._resolved.clear()
    registry._checked.clear()


def test_unmodelled_opcode_parses_and_is_reported(generic_opcode):
    result = parse_module(SOURCE, "k.ptx")
    assert result.diagnostics == []
    fn = result.module.functions[0]
    insn = fn.instructions[1]
    assert isinstance(insn, generic_opcode) and insn.full_opcode == "frobulate.b32"
    assert [r.name for r in insn.defs] == ["%r2"]
    assert [r.name for r in insn.uses] == ["%r1"]
    [note] = list(unmodelled.check(result.module))
    assert (note.rule, str(note.severity), note.line, note.column) == (
        "unmodelled-instruction", "note", 8, 2)
    assert note.kernel == "k" and "frobulate" in note.message


def test_every_isa_opcode_is_declared():
    """No opcode of the ISA falls back to the generic class."""
    generic = [name for name in registry.all_opcodes() if registry.REGISTRY[name].is_unmodelled]
    assert generic == []
