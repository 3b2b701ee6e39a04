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


_BITS = ("b32", "b64")
_HALVES = ("f16", "f16x2", "bf16", "bf16x2")
#: the types each operation takes (as ptxas 13.0 checks them)
OP_TYPES = {
    "and": _BITS, "or": _BITS, "xor": _BITS,
    "cas": ("b16", *_BITS, "b128"), "exch": (*_BITS, "b128"),
    "add": ("u32", "s32", "u64", "f32", "f64", *_HALVES),
    "inc": ("u32",), "dec": ("u32",),
    "min": ("u32", "s32", "u64", "s64", *_HALVES), "max": ("u32", "s32", "u64", "s64", *_HALVES),
}


def _op_type_problem(cls, opcode: str, mods: tuple[str, ...]) -> str | None:
    """`atom`/`red`: the operation and the type must go together (`OP_TYPES`)."""
    op = next((m for m in mods if m in OP_TYPES), None)
    types = [m for m in mods if m in ATOMIC_TYPES]
    if op is None or not types or types[-1] in OP_TYPES[op]:
        return None
    wanted = " or ".join(f".{t}" for t in OP_TYPES[op])
    return f"'{opcode}.{op}' takes {wanted}, not .{types[-1]}"


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
    modifier_problem = classmethod(_op_type_problem)

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
    modifier_problem = classmethod(_op_type_problem)


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
