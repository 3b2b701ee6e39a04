"""Instruction operands. Immutable values; `str()` prints valid PTX."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Union

# Special registers of the PTX ISA (section "Special Registers"); a name that
# ends in .x/.y/.z picks a component. %envregN, %pmN and %pm*_64 are families.
SPECIAL_BASES = frozenset({
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid",
    "%nsmid", "%gridid", "%is_explicit_cluster", "%clusterid", "%nclusterid",
    "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank",
    "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt",
    "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi",
    "%reserved_smem_offset_begin", "%reserved_smem_offset_end", "%reserved_smem_offset_cap",
    "%reserved_smem_offset_0", "%reserved_smem_offset_1", "%total_smem_size", "%aggr_smem_size", "%dynamic_smem_size",
    "%current_graph_exec",
})


@functools.cache  # asked for every register operand the analysis reads; names repeat
def is_special_register(name: str) -> bool:
    base = name.split(".", 1)[0]
    if base in SPECIAL_BASES:
        return True
    for family in ("%envreg", "%pm"):
        if base.startswith(family):
            rest = base[len(family):].removesuffix("_64")
            if rest.isdigit():
                return True
    return False


@dataclass(frozen=True, slots=True)
class Register:
    """`%r1`, `%tid.x`. `key` names the declaration (distinct for a shadowing
    declaration in a nested scope), so analyses key state on it, not on `name`."""

    name: str
    key: str

    @property
    def is_special(self) -> bool:
        return is_special_register(self.name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Immediate:
    """An integer or floating constant; `text` keeps the spelling for printing."""

    value: int | float = field(compare=False)  # NaN != NaN; the spelling decides
    text: str

    @property
    def is_float(self) -> bool:
        return isinstance(self.value, float)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Symbol:
    """A variable, function or label name used as an operand."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Sink:
    """`_`: a destination whose value is discarded."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Negated:
    """`!%p`: a predicate source used inverted."""

    operand: Register

    def __str__(self) -> str:
        return f"!{self.operand}"


@dataclass(frozen=True, slots=True)
class PredicatePair:
    """`%p|%q`: setp's complementary destination pair."""

    first: Register | Sink
    second: Register | Sink

    def __str__(self) -> str:
        return f"{self.first}|{self.second}"


@dataclass(frozen=True, slots=True)
class Vector:
    """`{%r1, %r2, _, %r4}` (elements may also be immediates in stores)."""

    elements: tuple["Operand", ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elements)) + "}"


@dataclass(frozen=True, slots=True)
class Address:
    """`[%rd1+16]`, `[sym+-4]`, `[sym]`, `[16]`: base (register, symbol or none) plus
    a constant byte offset."""

    base: Register | Symbol | None
    offset: int = 0

    def __str__(self) -> str:
        if self.base is None:
            return f"[{self.offset}]"
        if self.offset == 0:
            return f"[{self.base}]"
        return f"[{self.base}+{self.offset}]"


@dataclass(frozen=True, slots=True)
class Bracketed:
    """A bracketed list used by texture, surface and tensor-copy operands:
    `[tex, {%f1, %f2}]`, `[%rd1, {%r1, %r2}]`."""

    items: tuple["Operand", ...]

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.items)) + "]"


@dataclass(frozen=True, slots=True)
class ParenList:
    """`(%r1, %r2)`: return and argument lists of `call`."""

    items: tuple["Operand", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


@dataclass(frozen=True, slots=True)
class Expression:
    """A constant expression that is not a plain literal (e.g. `sym+8`, `4*2`),
    kept as text and evaluated where a consumer needs it."""

    text: str

    def __str__(self) -> str:
        return self.text


Operand = Union[Register, Immediate, Symbol, Sink, Negated, PredicatePair, Vector,
                Address, Bracketed, ParenList, Expression]


def registers_in(operand: Operand) -> list[Register]:
    """Every register an operand mentions, in order."""
    if isinstance(operand, Register):
        return [operand]
    if isinstance(operand, Negated):
        return [operand.operand]
    if isinstance(operand, PredicatePair):
        return registers_in(operand.first) + registers_in(operand.second)
    if isinstance(operand, Address):
        return [operand.base] if isinstance(operand.base, Register) else []
    if isinstance(operand, (Vector, Bracketed, ParenList)):
        items = operand.elements if isinstance(operand, Vector) else operand.items
        return [r for item in items for r in registers_in(item)]
    return []
