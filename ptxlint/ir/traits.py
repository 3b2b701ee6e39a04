"""Mixins: each adds one facet of an instruction and its accessors.

They only read `mods` and `operands`; semantics (abstract transfer, concrete
execute) are attached to the same classes by later layers.
"""
from __future__ import annotations

from typing import ClassVar

from .instruction import Instruction
from .operands import Address, Bracketed, Operand, ParenList, Register, Symbol, Vector
from .types import DataType, lookup

SPACES = ("global", "shared", "local", "const", "param", "tex")
ROUNDINGS = frozenset({"rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi"})
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                         "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"})
BOOL_OPS = frozenset({"and", "or", "xor"})
VECTORS = {"v2": 2, "v4": 4, "v8": 8, "v16": 16, "v32": 32, "v64": 64, "v128": 128}


_TYPES_OF: dict[tuple[str, ...], tuple[DataType, ...]] = {}


def _types_of(mods: tuple[str, ...]) -> tuple[DataType, ...]:
    """The type modifiers among `mods`, in order (asked for again and again by the
    analysis; modifier tuples repeat, so they are remembered)."""
    hit = _TYPES_OF.get(mods)
    if hit is None:
        hit = _TYPES_OF[mods] = tuple(t for t in map(lookup, mods) if t is not None)
    return hit


class HasDest(Instruction):
    """Writes its first operand (a register, vector or predicate pair)."""

    __slots__ = ()
    n_dests: ClassVar[int] = 1


class HasType(Instruction):
    """Carries one or more type modifiers; `type` is the first (the destination
    type for `cvt`-like instructions), `types` all of them in order."""

    __slots__ = ()

    @property
    def types(self) -> list[DataType]:
        return list(_types_of(self.mods))

    @property
    def type(self) -> DataType | None:
        types = _types_of(self.mods)
        return types[0] if types else None

    @property
    def source_type(self) -> DataType | None:
        """The last type modifier: the source type of `cvt.f32.s32` and friends."""
        types = self.types
        return types[-1] if types else None


class HasStateSpace(Instruction):
    """`.global .shared[::cta|::cluster] .local .const[bank] .param[::entry|::func]`;
    no space modifier means generic addressing."""

    __slots__ = ()

    @property
    def space_mod(self) -> str:
        for m in self.mods:
            base = m.split("::", 1)[0].split("[", 1)[0]
            if base in SPACES:
                return m
        return "generic"

    @property
    def space(self) -> str:
        """The state space without its sub-qualifier: "shared", "global", "generic"..."""
        return self.space_mod.split("::", 1)[0]


class HasRounding(Instruction):
    __slots__ = ()

    @property
    def rounding(self) -> str | None:
        for m in self.mods:
            if m in ROUNDINGS:
                return m
        return None


class Saturating(Instruction):
    __slots__ = ()

    @property
    def saturate(self) -> bool:
        return "sat" in self.mods or "satfinite" in self.mods


class FlushesToZero(Instruction):
    __slots__ = ()

    @property
    def ftz(self) -> bool:
        return "ftz" in self.mods


class HasCompare(Instruction):
    """A comparison operator (`setp.lt`) and optional boolean combine (`.and`)."""

    __slots__ = ()

    @property
    def compare(self) -> str | None:
        for m in self.mods:
            if m in COMPARISONS:
                return m
        return None

    @property
    def bool_op(self) -> str | None:
        for m in self.mods:
            if m in BOOL_OPS:
                return m
        return None


class HasVector(Instruction):
    """`.v2 .v4 .v8`: number of elements moved per thread (1 without)."""

    __slots__ = ()

    @property
    def vector_width(self) -> int:
        for m in self.mods:
            n = VECTORS.get(m)
            if n:
                return n
        return 1


class MemoryAccess(HasStateSpace, HasType, HasVector):
    """Reads or writes memory through the `[address]` operand."""

    __slots__ = ()
    access_kind: ClassVar[str] = "load"  # load, store, atomic, reduce, prefetch, copy
    address_index: ClassVar[int] = 1

    @property
    def address(self) -> Address | Bracketed | None:
        if self.address_index < len(self.operands):
            op = self.operands[self.address_index]
            if isinstance(op, (Address, Bracketed)):
                return op
        for op in self.operands:
            if isinstance(op, Address):
                return op
        return None

    @property
    def access_bytes(self) -> int:
        """Bytes one thread moves: element width times vector width."""
        t = self.type
        element = t.bytes if t is not None else 1
        return element * self.vector_width

    @property
    def is_load(self) -> bool:
        return self.access_kind in ("load", "atomic")

    @property
    def is_store(self) -> bool:
        return self.access_kind in ("store", "atomic", "reduce")


class Branch(Instruction):
    """Transfers control to label targets; `.uni` asserts a warp-uniform branch."""

    __slots__ = ()
    target_index: ClassVar[int] = 0

    @property
    def is_uniform(self) -> bool:
        return "uni" in self.mods

    @property
    def targets(self) -> list[str]:
        op = self.operands[self.target_index] if self.target_index < len(self.operands) else None
        return [op.name] if isinstance(op, Symbol) else []


class Terminator(Instruction):
    """Ends the thread or the function (`ret`, `exit`, `trap`)."""

    __slots__ = ()


class Barrier(Instruction):
    """Block- or cluster-level barrier: all (or `b` of the) threads must arrive."""

    __slots__ = ()
    waits: ClassVar[bool] = True  # bar.arrive does not wait

    @property
    def is_aligned(self) -> bool:
        return "aligned" in self.mods or self.opcode == "bar"


class Call(Instruction):
    """`call{.uni} (ret), f, (args){, proto|targets};`"""

    __slots__ = ()

    def _parts(self) -> tuple[ParenList | None, Operand | None, ParenList | None, Operand | None]:
        ops = list(self.operands)
        ret = ops.pop(0) if ops and isinstance(ops[0], ParenList) else None
        callee = ops.pop(0) if ops else None
        args = ops.pop(0) if ops and isinstance(ops[0], ParenList) else None
        proto = ops.pop(0) if ops else None
        return ret, callee, args, proto

    @property
    def callee(self) -> Operand | None:
        return self._parts()[1]

    @property
    def is_indirect(self) -> bool:
        return isinstance(self.callee, Register)

    @property
    def returns(self) -> tuple[Operand, ...]:
        ret = self._parts()[0]
        return ret.items if ret else ()

    @property
    def arguments(self) -> tuple[Operand, ...]:
        args = self._parts()[2]
        return args.items if args else ()

    @property
    def dests(self) -> tuple[Operand, ...]:
        return self.returns

    @property
    def sources(self) -> tuple[Operand, ...]:
        return tuple(op for op in (self.callee, *self.arguments) if op is not None)


def vector_elements(op: Operand) -> tuple[Operand, ...]:
    return op.elements if isinstance(op, Vector) else (op,)
