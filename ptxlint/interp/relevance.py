"""Which instructions the rules can observe: a backward slice over registers.

The rules read addresses, guards, branch predicates, call arguments, barrier operands
and `.param` cells (`interp/facts.py` and the rules themselves); a register whose
value can flow into none of those never changes a finding. The lint interprets only
the instructions that write a register that can (`FixpointParams.rules_only`): the
others leave their destinations unknown, which is sound, and the values of every
register in the slice are the ones a full analysis computes, since a sliced-out
register is read by no instruction that is kept (the slice is closed under data
dependence, the carry flag included, and relational facts only ever name registers an
instruction of the slice reads). In the CUB corpus a fifth of the instructions fall
outside (the keys and values being sorted or scanned, and their shuffles).

Never sliced out: instructions without register results (stores, barriers, branches,
fences: their operands are roots, except the data a store writes outside `.param`,
whose value no rule reads), calls, `ret`/`exit`, `cvta` (address-space-mismatch judges
its source) and unmodelled instructions (their note). A memory access's address and
guard are roots even when its result is not.
"""
from __future__ import annotations

import weakref

from ..ir.instruction import Instruction
from ..ir.instructions.atomic import Red
from ..ir.instructions.integer import CarryChain
from ..ir.instructions.memory import Cvta, St
from ..ir.module import Function
from ..ir.operands import registers_in
from ..ir.traits import Branch, Call, MemoryAccess, Terminator
from .transfer.arith import CARRY

_SLICED: "weakref.WeakKeyDictionary[Function, frozenset[int]]" = weakref.WeakKeyDictionary()


def sliced_out(function: Function) -> frozenset[int]:
    """`id()` of the instructions of `function` whose results no rule can observe."""
    hit = _SLICED.get(function)
    if hit is None:
        hit = _SLICED[function] = _sliced_out(function)
    return hit


#: instruction class -> (always kept, stores data no rule reads, may touch the carry flag,
#: accesses memory)
_CLASSES: dict[type, tuple[bool, bool, bool, bool]] = {}
#: instructions a rule judges by their source operands (address-space-mismatch: `cvta`)
_JUDGED = (Call, Branch, Terminator, Cvta)


def _classify(cls: type) -> tuple[bool, bool, bool, bool]:
    hit = _CLASSES[cls] = (cls.is_unmodelled or issubclass(cls, _JUDGED),
                           issubclass(cls, (St, Red)), issubclass(cls, CarryChain),
                           issubclass(cls, MemoryAccess))
    return hit


def _sliced_out(function: Function) -> frozenset[int]:
    writers: dict[str, list[tuple[str, ...]]] = {}  # register -> the reads of its writers
    work: list[str] = [p.name for p in function.returns if p.space == "reg"]
    candidates = []
    classes = _CLASSES
    for insn in function.instructions:
        kept, stores, carries, memory = classes.get(insn.__class__) or \
            _classify(insn.__class__)
        writes, reads = insn.register_keys()
        if carries:
            if insn.writes_carry:
                writes += (CARRY,)
            if insn.reads_carry:
                reads += (CARRY,)
        if kept or not writes:
            if stores and insn.space != "param":  # the data written is no rule's business
                reads = _address_and_guard(insn)
            work.extend(reads)
            continue
        candidates.append((insn, writes))
        for key in writes:
            writers.setdefault(key, []).append(reads)
        if memory:
            work.extend(_address_and_guard(insn))
    relevant: set[str] = set()
    while work:
        key = work.pop()
        if key not in relevant:
            relevant.add(key)
            for reads in writers.get(key, ()):
                work.extend(reads)
    return frozenset(id(insn) for insn, writes in candidates if relevant.isdisjoint(writes))


def _address_and_guard(insn: Instruction) -> list[str]:
    """A memory access's address registers and its guard: the rules read them at the
    instruction even when its result is sliced out."""
    address = insn.address if isinstance(insn, MemoryAccess) else None
    keys = [r.key for r in registers_in(address)] if address is not None else []
    if insn.guard is not None:
        keys.append(insn.guard.register.key)
    return keys


__all__ = ["sliced_out"]
