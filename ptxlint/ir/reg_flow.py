"""What one instruction does to the *definedness* of registers: which registers it reads,
which it writes, and which writes only pass a value on (the one table both
`uninitialized-read` (`definedness.py`) and the emulator's observation of undefined
reads (`emulate/hazards.py`) go by, so that a run and the analysis mean the same thing
by "a read of an undefined register").

- A **copy** (`mov` from a register or a `{..}` pack/unpack, unguarded) reads nothing:
  its destination is as defined as its source (several sources: defined when all are).
  Compilers move values around without looking at them (an LLVM `phi` with an `undef`
  incoming value becomes a `mov` on one edge and nothing on the other), so copying an
  undefined value is not itself a defect; using the copy is.
- A **select** (`selp d, a, b, p`, unguarded) reads its predicate; `d` takes the
  definedness of the arm `p` picks, so an undefined value in an arm never selected is
  never read.
- A **store** (`st`, `st.param` for a call's arguments) copies its value into memory
  without looking at it: CUB stores every slot of a partial tile to shared memory, the
  unloaded ones too, and reads back only the valid ones. The value registers are read
  only when nothing in the function ever writes them (a certain defect).
- Every other instruction (and a guarded `mov`/`selp`) is **plain**: it reads its guard,
  and, for the threads whose guard holds, every register source (address bases, vector
  elements, call arguments); it writes its destinations.

Special registers are always defined and never listed. A vector register
(`.reg .v4 .f32 %v`) is tracked per element: `%v.x` is one register, and `%v` as a
whole operand stands for all its elements.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from .instruction import Instruction
from .instructions.compare import Selp
from .instructions.memory import St
from .instructions.move import Mov
from .module import Function, Variable
from .operands import Negated, Register, Vector, is_special_register, registers_in

COMPONENTS = "xyzw"


class Flow(NamedTuple):
    """The register effect of one instruction (keys as `flow_key` makes them). A tuple:
    one is built per instruction of every kernel."""

    kind: str  # "plain", "copy" or "select"
    guard: tuple[str, bool] | None  # (predicate key, negated), plain only
    reads: tuple[str, ...]  # plain: the sources read under the guard (the guard apart)
    writes: tuple[str, ...]
    # copy: per write, the keys whose definedness it takes (empty: an immediate, defined)
    sources: tuple[tuple[str, ...], ...] = ()
    # select: the predicate (key, negated) and the keys of each arm (empty: defined)
    pred: tuple[str, bool] | None = None
    arms: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    @property
    def guard_key(self) -> str | None:
        return self.guard[0] if self.guard is not None else None


def vector_registers(function: Function) -> dict[str, int]:
    """`.reg .v2/.v4` declarations of a function: name -> element count."""
    return {s.name: s.vector for s in function.body or ()
            if isinstance(s, Variable) and s.space == "reg" and s.vector > 1}


def defined_at_entry(function: Function) -> set[str]:
    """Registers holding a value before the first instruction: `.reg` parameters (set by
    the caller) and `.reg` declarations with an initialiser."""
    out = {p.name for p in function.params if p.space == "reg"}
    out |= {s.name for s in function.body or ()
            if isinstance(s, Variable) and s.space == "reg" and s.initializer is not None}
    return out


_ELEMENT = {"x": "x", "y": "y", "z": "z", "w": "w", "r": "x", "g": "y", "b": "z", "a": "w"}


def flow_key(reg: Register) -> str:
    """The declaration's key, plus `.x` for one element of a vector register (`.r .g .b
    .a` name the same elements); other suffixes (video byte selectors `.b0`) are not
    elements."""
    if "." not in reg.name:  # most registers
        return reg.key
    base, _, suffix = reg.name.partition(".")
    element = _ELEMENT.get(suffix) if not reg.is_special else None
    return f"{reg.key}.{element}" if element else reg.key


def keys_of(op, vectors: dict[str, int]) -> list[str]:
    """The (non-special) register keys an operand names, vector registers expanded."""
    out = []
    for reg in registers_in(op):
        if reg.is_special:
            continue
        n = vectors.get(reg.name, 1) if "." not in reg.name else 1
        key = flow_key(reg)
        out.extend([f"{key}.{c}" for c in COMPONENTS[:n]] if n > 1 else [key])
    return out


def flows_of(function: Function) -> dict[int, Flow]:
    """The flow of every instruction of `function`, by identity."""
    vectors = vector_registers(function)
    insns = [s for s in function.body or () if isinstance(s, Instruction)]
    if vectors:
        written = {k for insn in insns for op in insn.dests for k in keys_of(op, vectors)}
    else:  # no vector registers: the keys are the instructions' own (computed once)
        written = {k for insn in insns for k in insn.def_keys}
    written |= defined_at_entry(function)
    out = {}
    for insn in insns:
        special = _SPECIAL_FLOW.get(insn.__class__)
        if special is None:
            special = _SPECIAL_FLOW[insn.__class__] = issubclass(insn.__class__, (Mov, Selp, St))
        out[id(insn)] = flow_of(insn, vectors, written) if vectors or special else _plain(insn)
    return out


_SPECIAL_FLOW: dict[type, bool] = {}  # instruction class -> may be other than plain


def _plain(insn: Instruction) -> Flow:
    """`flow_of` for a plain instruction of a function without vector registers."""
    uses = insn.use_keys
    guard = None
    if insn.guard is not None:
        uses = uses[1:]
        if not _special(insn.guard.register.key):
            guard = (insn.guard.register.key, insn.guard.negated)
    if any(map(_special, uses)):  # most read no special register: keep the keys' tuple
        uses = tuple(k for k in uses if not _special(k))
    return _new_flow(Flow, ("plain", guard, uses, insn.def_keys, (), None, ((), ())))


_new_flow = tuple.__new__  # a Flow from all its fields, without the keyword-handling `__new__`


@lru_cache(maxsize=None)
def _special(key: str) -> bool:
    return is_special_register(key)


def flow_of(insn: Instruction, vectors: dict[str, int],
            written: set[str] | None = None) -> Flow:
    """`written`: the registers some instruction of the function writes (a store's
    value is read only when it is not among them); None: every register."""
    writes = tuple(k for op in insn.dests for k in keys_of(op, vectors))
    if insn.guard is None and isinstance(insn, Mov) and not insn.takes_address \
            and len(insn.operands) == 2:
        src = insn.operands[1]
        if isinstance(src, (Register, Vector)) or not registers_in(src):
            keys = tuple(keys_of(src, vectors))
            pairwise = len(keys) == len(writes) > 1 and not isinstance(src, Vector) \
                and not isinstance(insn.operands[0], Vector)
            sources = tuple((k,) for k in keys) if pairwise else tuple(keys for _ in writes)
            return Flow("copy", None, (), writes, sources)
    if insn.guard is None and isinstance(insn, Selp) and len(insn.operands) == 4:
        a, b, c = insn.operands[1:]
        negated = isinstance(c, Negated)
        reg = c.operand if negated else c
        if isinstance(reg, Register) and not reg.is_special:
            return Flow("select", None, (), writes, pred=(flow_key(reg), negated),
                        arms=(tuple(keys_of(a, vectors)), tuple(keys_of(b, vectors))))
    guard = (flow_key(insn.guard.register), insn.guard.negated) \
        if insn.guard is not None and not insn.guard.register.is_special else None
    if isinstance(insn, St) and len(insn.operands) >= 2:
        value = [k for k in keys_of(insn.operands[1], vectors)
                 if written is not None and k not in written and k.split(".")[0] not in written]
        reads = tuple(keys_of(insn.operands[0], vectors) + value +
                      [k for op in insn.operands[2:] for k in keys_of(op, vectors)])
    else:
        reads = tuple(k for op in insn.sources for k in keys_of(op, vectors))
    return Flow("plain", guard, reads, writes)


__all__ = ["Flow", "flow_of", "flows_of", "flow_key", "keys_of", "vector_registers", "defined_at_entry"]
