"""Atomic read-modify-write and reductions on memory: `atom`, `red`, `red.async`."""
from __future__ import annotations

from ..instruction import Instruction
from ..operands import Address, Operand
from ..traits import HasDest, MemoryAccess
from .memory import (
    CACHE_HINT,
    FLOAT_TYPES,
    MBAR_COMPLETE,
    REDUCE_OPS,
    SCOPES,
    CacheHinted,
    Ordered,
    mods,
)

ATOMIC_SPACES = frozenset({"global", "shared", "shared::cta", "shared::cluster"})
ATOMIC_OPS = REDUCE_OPS | {"cas", "exch"}
# .b16 only with .cas, .b128 only with .cas/.exch; packed halves need .noftz
ATOMIC_TYPES = frozenset({"b16", "b32", "b64", "b128", "u32", "u64", "s32", "s64"}) | FLOAT_TYPES


class AtomicOp(Instruction):
    """The operation modifier of an atomic or reduction (`.add`, `.cas`, ...)."""

    __slots__ = ()

    @property
    def op(self) -> str | None:
        for m in self.mods:
            if m in ATOMIC_OPS:
                return m
        return None


class Atom(HasDest, MemoryAccess, Ordered, CacheHinted, AtomicOp, opcode="atom"):
    """atom{.sem}{.scope}{.space}.op{.noftz}{.L2::cache_hint}{.vec}.type d, [a], b{, c}{, cache-policy}: atomically d = *a; *a = op(*a, b{, c})"""

    __slots__ = ()
    arity = (3, 5)
    access_kind = "atomic"
    address_index = 1
    default_semantics = "relaxed"
    default_scope = "gpu"
    allowed_mods = mods("relaxed", "acquire", "release", "acq_rel", SCOPES, ATOMIC_SPACES,
                        ATOMIC_OPS, "noftz", CACHE_HINT, "v2", "v4", "v8", ATOMIC_TYPES)

    @property
    def compare(self) -> Operand | None:
        """The compare value b of `atom.cas`."""
        return self.operands[2] if self.op == "cas" and len(self.operands) > 2 else None

    @property
    def value(self) -> Operand | None:
        """The operand combined with memory: b, or the swap value c of `atom.cas`."""
        i = 3 if self.op == "cas" else 2
        return self.operands[i] if len(self.operands) > i else None


class Red(MemoryAccess, Ordered, CacheHinted, AtomicOp, opcode="red"):
    """red{.sem}{.scope}{.space}.op{.noftz}{.L2::cache_hint}{.vec}.type [a], b{, cache-policy}: atomically *a = op(*a, b), no result"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "reduce"
    address_index = 0
    default_semantics = "relaxed"
    default_scope = "gpu"
    allowed_mods = mods("relaxed", "release", SCOPES, ATOMIC_SPACES, REDUCE_OPS,
                        "noftz", CACHE_HINT, "v2", "v4", "v8", ATOMIC_TYPES - {"b16", "b128"})


class RedAsync(MemoryAccess, Ordered, AtomicOp, opcode="red.async"):
    """red.async{.sem}{.scope}{.ss}{.mbarrier::complete_tx::bytes}.op.type [a], b{, [mbar]}: asynchronous reduction into (remote) memory, completion on mbar"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "reduce"
    address_index = 0
    default_semantics = "relaxed"
    allowed_mods = mods("relaxed", "release", SCOPES, "shared::cluster", "global",
                        MBAR_COMPLETE, REDUCE_OPS, "noftz", CACHE_HINT,
                        ATOMIC_TYPES - {"b16", "b128"})

    @property
    def mbarrier(self) -> Address | None:
        op = self.operands[2] if len(self.operands) > 2 else None
        return op if isinstance(op, Address) else None
