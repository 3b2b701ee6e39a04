"""Memory-space provenance: which state space (and which object) a pointer points into.

A `Region` says the value is an address inside `space`; `obj` names the object (a
`.shared`/`.local`/`.const`/`.global` variable or a kernel pointer parameter's buffer)
when it is known, and `generic` says the address is a generic one (after `cvta`), not a
window address of `space`. A value whose provenance is `None` is a plain number or an
address of unknown origin.

The lattice: None (unknown) is top; `Region(s, o, g)` for a known object is below
`Region(s, None, g)` (somewhere in that space); regions in different spaces join to None.
"""
from __future__ import annotations

from dataclasses import dataclass

from .interning import InternTable, new_instance, set_field

SPACES = ("global", "shared", "local", "const", "param")


_CACHE = InternTable(1 << 16)  # (space, obj, generic) -> instance
_alloc, _set = new_instance, set_field


@dataclass(frozen=True, init=False, eq=False)
class Region:
    """``Region(space, obj=None, generic=False)``; instances are interned."""

    __slots__ = ("space", "obj", "generic", "_hash")

    space: str  # one of SPACES
    obj: str | None
    generic: bool  # a generic address (cvta) rather than a window address

    def __new__(cls, space: str, obj: str | None = None, generic: bool = False) -> "Region":
        key = (space, obj, generic)
        hit = _CACHE.get(key)
        if hit is not None and cls is Region:
            return hit
        self = _alloc(cls)
        _set(self, "space", space)
        _set(self, "obj", obj)
        _set(self, "generic", generic)
        _set(self, "_hash", hash(key))
        if cls is Region:
            _CACHE.keep(key, self)
        return self

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.space == other.space and self.obj == other.obj
                and self.generic == other.generic)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return (type(self), (self.space, self.obj, self.generic))

    def __str__(self) -> str:
        where = self.obj or f"some .{self.space} object"
        return f"{'generic ' if self.generic else ''}{self.space} {where}"

    def as_generic(self) -> "Region":
        return Region(self.space, self.obj, True)

    def as_window(self) -> "Region":
        return Region(self.space, self.obj, False)


def join_regions(a: Region | None, b: Region | None) -> Region | None:
    if a is None or b is None:
        return None
    if a == b:
        return a
    if a.space != b.space or a.generic != b.generic:
        return None
    return Region(a.space, None, a.generic)


def region_leq(a: Region | None, b: Region | None) -> bool:
    if b is None:
        return True
    if a is None:
        return False
    return a == b or (b.obj is None and a.space == b.space and a.generic == b.generic)
