"""Texture and surface instructions: sampled fetches (`tex`, `tld4`), surface
loads/stores/reductions (`suld`, `sust`, `sured`) and attribute queries (`txq`,
`suq`, `istypep`).

Fetches and surface accesses address memory through `[handle, {coords}]`
(a `Bracketed` operand), so they are memory accesses in the `"tex"` and
`"surf"` spaces; queries read only the handle's descriptor.
"""
from __future__ import annotations

from typing import ClassVar

from ..operands import Bracketed, Operand, PredicatePair, Register, registers_in
from ..traits import HasDest, HasType, MemoryAccess
from .memory import mods

TEX_GEOMS = frozenset({"1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms"})
SURF_GEOMS = frozenset({"1d", "2d", "3d", "a1d", "a2d"})
CLAMP_MODES = frozenset({"trap", "clamp", "zero"})
SURF_TYPES = frozenset({"b8", "b16", "b32", "b64"})


class HandleAccess(MemoryAccess):
    """Access through an opaque texture or surface handle plus coordinates."""

    __slots__ = ()
    handle_space: ClassVar[str] = "tex"

    @property
    def space_mod(self) -> str:
        return self.handle_space

    @property
    def handle(self) -> Operand | None:
        """The `.texref`/`.surfref` (variable or register) inside the brackets."""
        addr = self.address
        return addr.items[0] if isinstance(addr, Bracketed) and addr.items else None

    @property
    def coordinates(self) -> Operand | None:
        addr = self.address
        return addr.items[-1] if isinstance(addr, Bracketed) and len(addr.items) > 1 else None


class Fetch(HasDest, HandleAccess):
    """A fetch writing a vector and, optionally, a residency predicate: `{d0..d3}|p`."""

    __slots__ = ()

    @property
    def defs(self) -> list[Register]:
        out: list[Register] = []
        for op in self.dests:
            parts = (op.first, op.second) if isinstance(op, PredicatePair) else (op,)
            out.extend(r for part in parts for r in registers_in(part))
        return out


class Tex(Fetch, opcode="tex"):
    """tex{.base|.level|.grad}.geom.v4|v2.dtype.ctype d{|p}, [a, {b,} c]{, lod | dPdx, dPdy}{, e}{, f}: sampled texture fetch"""

    __slots__ = ()
    arity = (2, 6)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods("base", "level", "grad", TEX_GEOMS, "v4", "v2", "u32", "s32", "f16",
                        "f32", "f16x2")


class Tld4(Fetch, opcode="tld4"):
    """tld4.comp.geom.v4.dtype.f32 d{|p}, [a, {b,} c]{, e}{, f}: gather one component of the 2x2 bilinear footprint"""

    __slots__ = ()
    arity = (2, 4)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods("r", "g", "b", "a", "2d", "a2d", "cube", "acube", "v4", "u32", "s32",
                        "f32")


class Txq(HasDest, HasType, opcode="txq"):
    """txq{.level}.query.b32 d, [a]{, lod}: query a texture or sampler attribute"""

    __slots__ = ()
    arity = (2, 3)
    allowed_mods = frozenset({
        "level", "width", "height", "depth", "channel_data_type", "channel_order",
        "normalized_coords", "array_size", "num_mipmap_levels", "num_samples",
        "force_unnormalized_coords", "filter_mode", "addr_mode_0", "addr_mode_1",
        "addr_mode_2", "b32",
    })


class Istypep(HasDest, HasType, opcode="istypep"):
    """istypep.type p, a: p = handle a is a .texref, .samplerref or .surfref"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"texref", "samplerref", "surfref"})


class SurfaceAccess(HandleAccess):
    """Access through a `.surfref` handle plus coordinates (byte x, element y/z)."""

    __slots__ = ()
    handle_space = "surf"


class Suld(HasDest, SurfaceAccess, opcode="suld"):
    """suld.b.geom{.cop}{.vec}.dtype{.clamp} d, [a, b]: load from a surface"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods("b", SURF_GEOMS, "ca", "cg", "cs", "cv", "v2", "v4", SURF_TYPES,
                        CLAMP_MODES)


class Sust(SurfaceAccess, opcode="sust"):
    """sust.b|p.geom{.cop}{.vec}.ctype{.clamp} [a, b], c: store to a surface (.p: formatted)"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods("b", "p", SURF_GEOMS, "wb", "cg", "cs", "wt", "v2", "v4", SURF_TYPES,
                        "u32", "s32", "f32", CLAMP_MODES)


class Sured(SurfaceAccess, opcode="sured"):
    """sured.b|p.op.geom.ctype.clamp [a, b], c: atomic reduction into a surface element"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "reduce"
    address_index = 0
    allowed_mods = mods("b", "p", "add", "min", "max", "and", "or", "1d", "2d", "3d", "u32",
                        "u64", "s32", "s64", "b32", "b64", CLAMP_MODES)


class Suq(HasDest, HasType, opcode="suq"):
    """suq.query.b32 d, [a]: query a surface attribute"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = frozenset({"width", "height", "depth", "channel_data_type",
                              "channel_order", "array_size", "memory_layout", "b32"})
