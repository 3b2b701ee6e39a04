"""Instruction semantics: one table from instruction class to an *executor factory*.

A factory runs once per instruction, reading its modifiers and compiling its operands,
and returns `run(m)`, the concrete step over the machine's active threads (`m.idx`).
Lookup walks the class's MRO, like the analysis's transfer table, so a factory
registered for a mixin serves every opcode composed from it. Control flow (branches,
calls, returns, exits, CTA barriers) is decoded here into `Step.kind` and carried out by
the scheduler in `simt.py`.

An instruction without a factory, or a form its factory does not handle, compiles to a
step that raises `EmulationError("'op' is not supported by the emulator")` when a thread
reaches it: never silently skipped, and dead code does not stop a run.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..cfg import is_brx
from ..ir.instruction import Instruction
from ..ir.instructions.control import Bra, CallInst, Exit, Ret, Trap
from ..ir.instructions.sync import (
    BarrierCluster,
    CtaBarrier,
    MbarrierTestWait,
    MbarrierTryWait,
)
from ..ir.types import DataType
from .errors import EmulationError, unsupported
from .operands import BOOL, Operands, np_type

Run = Callable[[object], None]
Factory = Callable[[Instruction, "Compiler"], Run]
EXECUTORS: dict[type, Factory] = {}
_by_class: dict[type, Factory | None] = {}

PLAIN, BRANCH, BRX, CALL, RET, EXIT, TRAP, BARRIER, MBWAIT = range(9)
KIND_NAMES = ("plain", "branch", "brx", "call", "ret", "exit", "trap", "barrier", "mbwait")


def executes(*classes: type) -> Callable[[Factory], Factory]:
    def register(fn: Factory) -> Factory:
        for cls in classes:
            EXECUTORS[cls] = fn
        _by_class.clear()
        return fn
    return register


def factory_for(cls: type) -> Factory | None:
    hit = _by_class.get(cls, False)
    if hit is False:
        _load_families()
        hit = next((EXECUTORS[k] for k in cls.__mro__ if k in EXECUTORS), None)
        _by_class[cls] = hit
    return hit


def _load_families() -> None:
    from . import (  # noqa: F401
        atomics,
        bitops,
        compare,
        convert,
        floatfuncs,
        floatops,
        intops,
        mbarrier,
        memops,
        moves,
        warpops,
    )


class Compiler:
    """What a factory needs: typed operand readers and writers of the instruction's
    function, the program (labels, layout) and the instruction's pc."""

    def __init__(self, program, pc: int, insn: Instruction):
        self.program = program
        self.pc = pc
        self.insn = insn
        self.ops: Operands = program.operands(pc)

    def read(self, op, dt: np.dtype):
        if op is None:
            raise self.unsupported()
        return self.ops.read(op, dt)

    def write(self, op, dt: np.dtype):
        if op is None:
            raise self.unsupported()
        return self.ops.write(op, dt)

    def pred(self, op):
        return self.ops.read(op, BOOL)

    def dtype(self, t: DataType | None = None) -> np.dtype:
        t = t if t is not None else self.insn.type  # type: ignore[attr-defined]
        if t is None:
            raise self.unsupported()
        return np_type(t)

    def unsupported(self, what: str | None = None) -> EmulationError:
        return unsupported(what or self.insn.full_opcode, self.insn.span)


class Step:
    """One compiled instruction. `run` (plain steps) already applies the guard;
    control steps keep the guard reader in `guard` for the scheduler."""

    __slots__ = ("data", "guard", "insn", "kind", "pc", "run", "uni")

    def __init__(self, pc: int, insn: Instruction | None, kind: int, run=None, guard=None,
                 data=None, uni: bool = False):
        self.pc, self.insn, self.kind, self.run = pc, insn, kind, run
        self.guard, self.data, self.uni = guard, data, uni

    @property
    def is_memory(self) -> bool:
        return self.kind == PLAIN and self.data == "memory"


def _raiser(err: EmulationError) -> Run:
    def run(m):
        raise err
    return run


def guarded(run: Run, guard) -> Run:
    """Run only for the threads whose guard predicate holds."""
    def step(m):
        g = guard(m)
        if np.ndim(g) == 0:
            if g:
                run(m)
            return
        if g.all():
            run(m)
            return
        if not g.any():
            return
        saved = m.idx
        m.idx = m.active()[np.flatnonzero(g)]
        try:
            run(m)
        finally:
            m.idx = saved
    return step


def compile_step(program, pc: int) -> Step:
    insn = program.instructions[pc]
    if insn is None:
        return Step(pc, None, RET)
    ops = program.operands(pc)
    guard = None
    if insn.guard is not None:
        g = ops.read(insn.guard.register, BOOL)
        guard = (lambda m: ~g(m)) if insn.guard.negated else g
    try:
        control = _control(program, pc, insn, guard)
        if control is not None:
            return control
        factory = factory_for(type(insn))
        if factory is None:
            raise unsupported(insn.full_opcode, insn.span)
        run = factory(insn, Compiler(program, pc, insn))
    except EmulationError as err:
        if err.span is None:
            err.span = insn.span
        return Step(pc, insn, PLAIN, _raiser(err), data="unsupported")
    from ..ir.traits import MemoryAccess

    memory = "memory" if isinstance(insn, MemoryAccess) else None
    return Step(pc, insn, PLAIN, run if guard is None else guarded(run, guard), data=memory)


def _control(program, pc: int, insn: Instruction, guard) -> Step | None:
    uni = "uni" in insn.mods
    if isinstance(insn, Bra):
        target = program.label_pc(pc, insn.targets[0], insn.span) if insn.targets else None
        if target is None:
            raise unsupported(insn.full_opcode, insn.span)
        return Step(pc, insn, BRANCH, guard=guard, data=target, uni=uni)
    if is_brx(insn):
        index = program.operands(pc).read(insn.operands[0], np.dtype(np.uint32))
        return Step(pc, insn, BRX, guard=guard, data=(index, program.branch_targets(pc, insn)),
                    uni=uni)
    if isinstance(insn, CallInst):
        from .calls import compile_call

        return Step(pc, insn, CALL, guard=guard, data=compile_call(program, pc, insn), uni=uni)
    if isinstance(insn, Ret):
        return Step(pc, insn, RET, guard=guard, uni=uni)
    if isinstance(insn, Exit):
        return Step(pc, insn, EXIT, guard=guard)
    if isinstance(insn, Trap):
        return Step(pc, insn, TRAP, guard=guard)
    if isinstance(insn, (MbarrierTestWait, MbarrierTryWait)):
        from .mbarrier import compile_wait

        return Step(pc, insn, MBWAIT, guard=guard, data=compile_wait(program, pc, insn))
    if isinstance(insn, (CtaBarrier, BarrierCluster)):
        from .barriers import compile_barrier

        return compile_barrier(program, pc, insn, guard)
    return None
