"""What a transfer function may consult besides the state: the function and module
being analysed, the launch configuration, thread bounds, and a sink for notes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..domains.affine import HARDWARE, ThreadBounds
from ..ir.instruction import Instruction
from ..ir.module import Function, Module, Variable

if TYPE_CHECKING:
    from ..launch import LaunchConfig
    from .relations import Relations

# cudaMalloc returns 256-byte aligned buffers; assumed for pointer parameters (a note
# says so wherever an alignment proof depends on it).
ASSUMED_BUFFER_ALIGN = 256


@dataclass
class Ctx:
    function: Function
    module: Module
    launch: "LaunchConfig | None" = None
    bounds: ThreadBounds = HARDWARE
    notes: dict[int, tuple[Instruction, str]] = field(default_factory=dict)  # id(insn) -> note
    # refinements a transfer function makes on a copy of the state (`selp`), remembered
    # as the worklist remembers those of its edges (`refine.assume_cached`)
    refinements: dict = field(default_factory=dict)
    relations: "Relations | None" = None  # set by the interpreter (`relations.Relations`)
    linked: set[str] = field(default_factory=set)  # registers some state fact `Link` reads
    # the kernel a device function is analysed under: its pointer parameters name the
    # buffers the callee's addresses point into
    entry: Function | None = None
    # answers remembered for this analysis (`arith_values.remembered`, symbol addresses)
    memo: dict = field(default_factory=dict)
    _variables: dict[str, Variable] | None = None

    def note(self, insn: Instruction, message: str) -> None:
        self.notes.setdefault(id(insn), (insn, message))

    def variable(self, name: str) -> Variable | None:
        """A variable or parameter visible in the function (locals shadow globals)."""
        if self._variables is None:
            table = {v.name: v for v in self.module.variables}
            if self.entry is not None:
                table.update({p.name: p for p in self.entry.params})
            table.update({p.name: p for p in self.function.params + self.function.returns})
            table.update({v.name: v for v in self.function.variables})
            self._variables = table
        found = self._variables.get(name)
        return found if found is not None else self._foreign(name)

    def _foreign(self, name: str) -> Variable | None:
        """A variable local to another function of the module: an address into a
        caller's `__local_depot` (or `.shared` static) reaches a device function through
        its arguments. nvcc numbers depots per module, so the name is unique; a name
        declared in several functions answers None (which one is unknown)."""
        hit = self.memo.get(("foreign", name), ...)
        if hit is ...:
            found = [v for f in self.module.functions if f is not self.function
                     for v in f.variables if v.name == name]
            hit = self.memo[("foreign", name)] = found[0] if len(found) == 1 else None
        return hit

    def object_align(self, obj: str | None) -> int:
        """Known alignment of an object's first byte."""
        if obj is None:
            return 1
        var = self.variable(obj)
        if var is None:
            return 1
        if var.space == "param" and var in self.function.params:
            # a kernel pointer parameter names the buffer it points to: `.ptr .align N`
            # promises N, and the buffer itself is cudaMalloc'd (NVRTC for sm_100 and
            # sm_120 declares `.ptr .align 1`, which promises nothing more)
            return max(getattr(var, "ptr_align", None) or 1, ASSUMED_BUFFER_ALIGN)
        return var.alignment
