"""A module flattened for execution: one list of steps over every function with a body,
so a thread's position is one integer (`pc`). Labels become pcs, each instruction is
compiled once into a closure (`semantics.compile_step`), and each function records its
frame, its registers and whether it can recurse.

A function body that falls off its end gets an implicit `ret`; for the kernel that
retires the thread like `exit`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cfg import is_brx
from ..ir.instruction import Instruction
from ..ir.instructions.control import CallInst
from ..ir.module import Function, Label, Module, ScopeMarker, Variable
from ..ir.operands import Register, Symbol
from ..ir.types import DataType
from .errors import EmulationError
from .layout import FrameLayout, ModuleLayout, kernel_params
from .operands import Operands, storage_type


class RegisterTypes:
    """Register key -> declared type, for one function. A `%r<N>` range is kept as one
    entry and looked up by its index: `.reg .b32 %r<100000000>;` must cost nothing
    until a register is used (the emulator allocates storage only for used ones)."""

    def __init__(self) -> None:
        self.names: dict[str, DataType] = {}
        # (prefix, scope suffix) -> [(count, type)], latest declaration last
        self.ranges: dict[tuple[str, str], list[tuple[int, DataType]]] = {}

    def declare(self, name: str, suffix: str, t: DataType, count: int | None) -> None:
        if count is None:
            self.names[name + suffix] = t
        else:  # like the IR builder: the prefix is the name without trailing digits
            self.ranges.setdefault((name.rstrip(_DIGITS), suffix), []).append((count, t))

    def get(self, key: str) -> DataType | None:
        t = self.names.get(key)
        if t is not None or not self.ranges:
            return t
        base, at, scope = key.partition("@")
        prefix = base.rstrip(_DIGITS)
        digits = base[len(prefix):]
        if not digits or (digits[0] == "0" and digits != "0"):
            return None  # `%r01` is not in `%r<N>`
        index = int(digits)
        for count, t in reversed(self.ranges.get((prefix, at + scope), ())):
            if index < count:
                return t
        return None


_DIGITS = "0123456789"


def register_types(module: Module) -> dict[int, RegisterTypes]:
    """Per function (by id): its register declarations. Keys are rebuilt the way the
    IR builder makes them: the name, plus `@k` inside the k-th nested `{ }` scope of
    the module."""
    out: dict[int, RegisterTypes] = {}
    counter = 0
    for fn in module.functions:
        if fn.body is None:
            continue
        types = RegisterTypes()
        suffixes = [""]
        for p in [*fn.params, *fn.returns]:
            if p.space == "reg":
                types.declare(p.name, "", p.type, None)
        for s in fn.body:
            if isinstance(s, ScopeMarker):
                if s.opening:
                    counter += 1
                    suffixes.append(f"@{counter}")
                elif len(suffixes) > 1:
                    suffixes.pop()
            elif isinstance(s, Variable) and s.space == "reg":
                types.declare(s.name, suffixes[-1], s.type, s.range_count)
        out[id(fn)] = types
    return out


@dataclass(eq=False)
class FnInfo:
    function: Function
    index: int
    entry: int = 0  # pc of its first step
    end: int = 0  # one past its implicit ret
    frame: FrameLayout | None = None
    registers: list[str] = field(default_factory=list)  # storage keys
    recursive: bool = False
    callees: set[str] = field(default_factory=set)


class Context:
    """What compiling one function's operands needs (see `operands.Operands`)."""

    def __init__(self, program: Program, info: FnInfo, types: RegisterTypes):
        self.program = program
        self.info = info
        self.types = types
        self.prefix = f"{info.index}/"

    def key(self, reg: Register) -> str:
        base = reg.name.split(".", 1)[0]
        component = reg.name[len(base):] if not reg.is_special else ""
        return self.prefix + reg.key + component

    def register_type(self, reg: Register) -> np.dtype:
        t = self.types.get(reg.key)
        dt = storage_type(t) if t is not None else np.dtype(np.uint64)
        key = self.key(reg)
        known = self.program.register_dtypes.setdefault(key, dt)
        if known != dt:
            raise EmulationError(f"register {reg.name} has two storage types")
        return dt

    def resolve(self, name: str) -> tuple[str, str, int]:
        """("frame", space, frame offset) or ("uniform", space, address)."""
        name = self.program.aliases.get(name, name)
        frame = self.info.frame
        if frame is not None and name in frame.offsets:
            off, _size, space = frame.offsets[name]
            return "frame", space, off
        if name in self.program.param_offsets and self.info.function.is_entry:
            return "uniform", "param", self.program.param_offsets[name][0]
        lay = self.program.layout
        placed = lay.symbol(name)
        if placed is not None:
            return "uniform", placed.space, placed.address
        if name in lay.functions:
            return "uniform", "code", lay.functions[name]
        raise EmulationError(f"'{name}' is not a variable the emulator knows")


class Program:
    def __init__(self, module: Module, kernel: str):
        entry = module.function(kernel)
        if entry is None or entry.body is None or not entry.is_entry:
            names = ", ".join(f.name for f in module.entries) or "none"
            raise EmulationError(f"no kernel named '{kernel}' (kernels: {names})")
        self.module = module
        self.kernel = entry
        self.aliases = dict(module.aliases)  # `.alias a, b`: a names b
        self.functions = [entry] + [f for f in module.functions
                                    if f.body is not None and f is not entry and not f.is_entry]
        self.layout = ModuleLayout.of(module, self.functions)
        self.param_offsets, self.param_size = kernel_params(entry)
        self.register_dtypes: dict[str, np.dtype] = {}
        self.infos: dict[str, FnInfo] = {}
        self.instructions: list[Instruction | None] = []  # None: an implicit ret
        self.owner: list[FnInfo] = []
        self.labels: dict[tuple[int, str], int] = {}
        types = register_types(module)
        for i, fn in enumerate(self.functions):
            self._flatten(i, fn)
        self.contexts = {fn.name: Context(self, self.infos[fn.name],
                                          types.get(id(fn)) or RegisterTypes())
                         for fn in self.functions}
        for fn in self.functions:  # `.reg` parameters and return values are registers too
            for p in [*fn.params, *fn.returns]:
                if p.space == "reg":
                    self.contexts[fn.name].register_type(Register(p.name, p.name))
        self._find_recursion()
        from .semantics import compile_step

        self.steps = [compile_step(self, pc) for pc in range(len(self.instructions))]
        for info in self.infos.values():
            prefix = self.contexts[info.function.name].prefix
            info.registers = [k for k in self.register_dtypes if k.startswith(prefix)]

    def _flatten(self, i: int, fn: Function) -> None:
        """Append `fn`'s instructions (and an implicit ret) to the step list."""
        info = FnInfo(fn, i, frame=FrameLayout.of(fn, fn.is_entry))
        self.infos[fn.name] = info
        info.entry = len(self.instructions)
        for s in fn.body or ():
            if isinstance(s, Label):
                self.labels[(i, s.name)] = len(self.instructions)
            elif isinstance(s, Instruction):
                self.instructions.append(s)
                self.owner.append(info)
                if isinstance(s, CallInst) and isinstance(s.callee, Symbol):
                    info.callees.add(self.aliases.get(s.callee.name, s.callee.name))
        self.instructions.append(None)
        self.owner.append(info)
        info.end = len(self.instructions)

    def context_of(self, pc: int) -> Context:
        return self.contexts[self.owner[pc].function.name]

    def operands(self, pc: int) -> Operands:
        return Operands(self.context_of(pc))

    def label_pc(self, pc: int, name: str, span=None) -> int:
        hit = self.labels.get((self.owner[pc].index, name))
        if hit is None:
            raise EmulationError(f"branch to undefined label {name}", span)
        return hit

    def branch_targets(self, pc: int, insn: Instruction) -> list[int]:
        """The pcs of `brx.idx`'s `.branchtargets` list, in order."""
        fn = self.owner[pc].function
        table = insn.operands[-1] if insn.operands else None
        if isinstance(table, Symbol):
            for s in fn.body or ():
                if isinstance(s, Label) and s.name == table.name and s.directive is not None:
                    return [self.label_pc(pc, n, insn.span) for n in s.directive.items]
        names = insn.targets if hasattr(insn, "targets") else []
        if not names or not is_brx(insn):
            raise EmulationError(f"{insn.full_opcode} has no branch target list", insn.span)
        return [self.label_pc(pc, n, insn.span) for n in names]

    def _find_recursion(self) -> None:
        """A function is recursive when it can reach itself through direct calls (an
        indirect call makes every function a possible callee)."""
        indirect = any(isinstance(i, CallInst) and not isinstance(i.callee, Symbol)
                       for i in self.instructions if i is not None)
        names = set(self.infos)
        for name, info in self.infos.items():
            seen, todo = set(), list(names if indirect else info.callees)
            while todo:
                f = todo.pop()
                if f in seen or f not in self.infos:
                    continue
                seen.add(f)
                todo.extend(names if indirect else self.infos[f].callees)
            info.recursive = name in seen
