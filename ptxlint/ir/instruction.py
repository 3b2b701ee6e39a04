"""The `Instruction` base: opcode, modifiers, guard, operands, source span.

Facets (destination, type, state space, memory access, ...) come from the small
mixins in `traits.py`; each opcode is one short class composing them, registered
by `opcode=` in `registry.REGISTRY`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..source import Span
from .operands import (Address, Immediate, Operand, PredicatePair, Register, Sink, Symbol,
                       Vector, registers_in)

# instruction class -> whether it keeps the base class's operand accessors
_PLAIN_OPERANDS: dict[type, bool] = {}


@dataclass(frozen=True, slots=True)
class Guard:
    """`@%p` or `@!%p`."""

    register: Register
    negated: bool = False

    def __str__(self) -> str:
        return f"@{'!' if self.negated else ''}{self.register}"


@dataclass(frozen=True, slots=True)
class DebugLoc:
    """The `.loc file line col [, function_name f, inlined_at file line col]` in force."""

    file: int
    line: int
    column: int
    inlined_at: "DebugLoc | None" = None
    function_name: str | None = None


class Instruction:
    """One PTX instruction. `opcode` is the registered (possibly dotted) opcode,
    `mods` the remaining dot-modifiers without dots, in source order."""

    __slots__ = ("opcode", "mods", "guard", "operands", "span", "loc", "_keys")

    opcode_name: ClassVar[str] = ""
    # min and max operand counts; None for max means unbounded
    arity: ClassVar[tuple[int, int | None]] = (0, None)
    # number of leading operands the instruction writes
    n_dests: ClassVar[int] = 0
    # modifiers accepted (without dots); None accepts any known PTX modifier
    allowed_mods: ClassVar[frozenset[str] | None] = None
    is_unmodelled: ClassVar[bool] = False

    def __init__(self, opcode: str, mods: tuple[str, ...], guard: Guard | None,
                 operands: tuple[Operand, ...], span: Span | None = None,
                 loc: DebugLoc | None = None):
        self.opcode = opcode
        self.mods = mods
        self.guard = guard
        self.operands = operands
        self.span = span
        self.loc = loc
        self._keys: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def __init_subclass__(cls, opcode: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if opcode is not None:
            from .registry import register
            cls.opcode_name = opcode
            register(opcode, cls)

    @classmethod
    def modifier_problem(cls, opcode: str, mods: tuple[str, ...]) -> str | None:
        """Why modifiers that are each allowed do not go together (`atom.and.u32`), as a
        parse error message; None when they do."""
        return None

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode, *self.mods))

    def has(self, mod: str) -> bool:
        return mod in self.mods

    @property
    def dests(self) -> tuple[Operand, ...]:
        return self.operands[: self.n_dests]

    @property
    def sources(self) -> tuple[Operand, ...]:
        return self.operands[self.n_dests:]

    @property
    def defs(self) -> list[Register]:
        """Registers written (vector elements and predicate pairs expanded)."""
        out: list[Register] = []
        for op in self.dests:
            if isinstance(op, Register):
                out.append(op)
            elif isinstance(op, (Vector, PredicatePair)):
                out.extend(r for r in registers_in(op) if not isinstance(r, Sink))
        return out

    @property
    def uses(self) -> list[Register]:
        """Registers read, including the guard and address bases."""
        out = [self.guard.register] if self.guard else []
        for op in self.sources:
            out.extend(registers_in(op))
        return out

    def register_keys(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(`def_keys`, `use_keys`)."""
        return self._keys or self._register_keys()

    @property
    def def_keys(self) -> tuple[str, ...]:
        """The keys of `defs`, computed once (instructions do not change)."""
        return (self._keys or self._register_keys())[0]

    @property
    def use_keys(self) -> tuple[str, ...]:
        """The keys of `uses`, computed once."""
        return (self._keys or self._register_keys())[1]

    def _register_keys(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        cls = self.__class__
        if _PLAIN_OPERANDS.get(cls) is None:  # does the class keep the base's accessors?
            _PLAIN_OPERANDS[cls] = all(getattr(cls, a) is getattr(Instruction, a)
                                       for a in ("defs", "uses", "dests", "sources"))
        if not _PLAIN_OPERANDS[cls]:
            self._keys = (tuple([r.key for r in self.defs]), tuple([r.key for r in self.uses]))
            return self._keys
        # `defs` and `uses` without building operand lists: registers and addresses
        # are most operands
        defs, uses = [], []
        if self.guard is not None:
            uses.append(self.guard.register.key)
        n = self.n_dests
        for i, op in enumerate(self.operands):
            c = op.__class__
            if c is Register:
                (defs if i < n else uses).append(op.key)
            elif c is Address:
                if op.base.__class__ is Register:
                    uses.append(op.base.key)
            elif c is not Immediate and c is not Symbol:
                keys = [r.key for r in registers_in(op)]
                if i >= n:
                    uses.extend(keys)
                elif c is Vector or c is PredicatePair:
                    defs.extend(keys)
        self._keys = (tuple(defs), tuple(uses))
        return self._keys

    def __str__(self) -> str:
        head = f"{self.guard} " if self.guard else ""
        text = head + self.full_opcode
        if self.operands:
            text += " " + ", ".join(map(str, self.operands))
        return text + ";"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


class Unmodelled(Instruction):
    """An opcode the analysis does not model: its first operand, when it is a
    register, vector or predicate pair, is taken as written and becomes unknown."""

    __slots__ = ()
    is_unmodelled = True

    @property
    def dests(self) -> tuple[Operand, ...]:
        first = self.operands[:1]
        if first and isinstance(first[0], (Register, Vector, PredicatePair)):
            return first
        return ()

    @property
    def sources(self) -> tuple[Operand, ...]:
        return self.operands[len(self.dests):]
