"""Module -> Function -> statements. Declarations carry byte sizes so rules can
check bounds without re-reading types."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..source import SourceFile, Span
from .instruction import DebugLoc, Instruction
from .types import DataType


@dataclass(eq=False)
class Variable:
    """A declared variable in any state space (`.shared .align 4 .b8 tile[4096]`).
    `dims` holds array extents, `None` for an unsized `[]`."""

    name: str
    space: str  # reg, shared, global, local, const, param, tex, sreg
    type: DataType
    vector: int = 1
    dims: tuple[int | None, ...] = ()
    align: int | None = None
    linkage: tuple[str, ...] = ()  # visible extern weak common
    initializer: str | None = None  # printed back verbatim (PTX initialiser syntax)
    attributes: tuple[str, ...] = ()  # .attribute(.managed), .ptr.global.align 16 ...
    span: Span | None = None
    space_mod: str | None = None  # "shared::cta", "const[2]" when spelled so
    range_count: int | None = None  # %r<13> declares 13 registers %r0..%r12

    @property
    def element_bytes(self) -> int:
        return self.type.bytes * self.vector

    @property
    def byte_size(self) -> int | None:
        """Total size in bytes, or None for unsized (`extern .shared x[]`)."""
        if any(d is None for d in self.dims):
            return None
        return self.element_bytes * math.prod(self.dims)  # type: ignore[arg-type]

    @property
    def alignment(self) -> int:
        """Declared `.align`, else the element size (PTX's default alignment)."""
        return self.align or self.element_bytes

    @property
    def is_extern(self) -> bool:
        return "extern" in self.linkage


@dataclass(eq=False)
class Param(Variable):
    """A kernel or function parameter; `ptr_space`/`ptr_align` come from
    `.ptr.global.align 16` attributes."""

    ptr_space: str | None = None
    ptr_align: int | None = None


@dataclass(eq=False)
class Label:
    name: str
    span: Span | None = None
    # set when the label names a `.branchtargets`/`.calltargets` list or a `.callprototype`
    directive: "ListDirective | None" = None

    def __str__(self) -> str:
        return f"{self.name}:"


@dataclass(eq=False)
class ListDirective:
    """`.branchtargets L1, L2;`, `.calltargets f, g;` or `.callprototype ...;`."""

    kind: str
    items: tuple[str, ...]
    text: str  # printed verbatim
    span: Span | None = None


@dataclass(eq=False)
class ScopeMarker:
    """`{` or `}` of a nested scope inside a function body."""

    opening: bool
    span: Span | None = None


@dataclass(eq=False)
class Pragma:
    values: tuple[str, ...]
    span: Span | None = None


Statement = Instruction | Label | Variable | ScopeMarker | Pragma | ListDirective


@dataclass(eq=False)
class Function:
    name: str
    kind: str  # "entry" or "func"
    linkage: tuple[str, ...] = ()
    params: list[Param] = field(default_factory=list)
    returns: list[Param] = field(default_factory=list)
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)  # maxntid, reqntid...
    body: list[Statement] | None = None  # None: a declaration without a body
    span: Span | None = None
    module: "Module | None" = field(default=None, repr=False)  # set by the builder

    @property
    def is_entry(self) -> bool:
        return self.kind == "entry"

    # (the body it was listed from, its length then, the list): the builder only appends
    _listed: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def instructions(self) -> list[Instruction]:
        """The body's instructions, listed once for every pass that walks them (a dozen
        rules and analyses per kernel): read it, never change it."""
        body, hit = self.body, self._listed
        if hit is None or hit[0] is not body or hit[1] != len(body or ()):
            listed = [s for s in body or () if isinstance(s, Instruction)]
            hit = self._listed = (body, len(body or ()), listed)
        return hit[2]

    @property
    def labels(self) -> dict[str, int]:
        """Label name -> index in `body`."""
        return {s.name: i for i, s in enumerate(self.body or ()) if isinstance(s, Label)}

    @property
    def variables(self) -> list[Variable]:
        return [s for s in self.body or () if isinstance(s, Variable)]

    def param(self, name_or_index: str | int) -> Param | None:
        if isinstance(name_or_index, int):
            return self.params[name_or_index] if 0 <= name_or_index < len(self.params) else None
        return next((p for p in self.params if p.name == name_or_index), None)


@dataclass(eq=False)
class Module:
    path: str
    version: str | None = None
    targets: tuple[str, ...] = ()
    target_span: Span | None = None  # of the `.target` directive, when there is one
    address_size: int = 64
    files: dict[int, str] = field(default_factory=dict)  # .file index -> path
    variables: list[Variable] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)
    items: list[Variable | Function | Pragma] = field(default_factory=list)  # source order
    sections: list[str] = field(default_factory=list)  # `.section` blocks, verbatim
    # the text it was parsed from (diagnostics point into it), when parsed
    source: SourceFile | None = field(default=None, repr=False)
    # the special registers (`%tid.x`) its instructions name, when the parser recorded them
    special_registers: set[str] | None = field(default=None, repr=False)

    @property
    def target(self) -> str | None:
        """The architecture target (`sm_90a`), ignoring `texmode_*`/`debug`."""
        return next((t for t in self.targets if t.startswith(("sm_", "compute_"))), None)

    @property
    def entries(self) -> list[Function]:
        return [f for f in self.functions if f.is_entry and f.body is not None]

    def function(self, name: str) -> Function | None:
        defined = [f for f in self.functions if f.name == name]
        return next((f for f in defined if f.body is not None), defined[0] if defined else None)

    def variable(self, name: str) -> Variable | None:
        return next((v for v in self.variables if v.name == name), None)
