"""Data movement through memory: `ld`, `st`, `ldu`, prefetches, cache hints,
address-space conversion, stack allocation, `st.async`, `st.bulk`, `multimem.*`.

Also home of the modifier sets and small mixins shared by the other memory-side
families (`atomic.py`, `async_copy.py`, `sync.py`, `tensor.py`, `texture.py`).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from ..instruction import Instruction
from ..operands import Address, Bracketed, Immediate, Operand, Vector
from ..traits import HasDest, HasStateSpace, HasType, MemoryAccess


def mods(*groups: Iterable[str] | str) -> frozenset[str]:
    """Union of modifier groups; a bare string counts as one modifier."""
    out: set[str] = set()
    for g in groups:
        out.update((g,) if isinstance(g, str) else g)
    return frozenset(out)


# --- modifier sets (spelled as they follow the dot) -------------------------
SCOPES = frozenset({"cta", "cluster", "gpu", "sys"})
B_TYPES = frozenset({"b8", "b16", "b32", "b64", "b128"})
U_TYPES = frozenset({"u8", "u16", "u32", "u64"})
S_TYPES = frozenset({"s8", "s16", "s32", "s64"})
INT_TYPES = B_TYPES | U_TYPES | S_TYPES
HALF_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2"})
FLOAT_TYPES = HALF_TYPES | {"f32", "f64"}
FP8_TYPES = frozenset({"e4m3", "e5m2", "e4m3x2", "e5m2x2", "e4m3x4", "e5m2x4"})
# ld/st/ldu types: half types are moved as .b16/.b32 (ptxas rejects ld.f16)
LDST_TYPES = INT_TYPES | {"f32", "f64"}
ADDR_TYPES = frozenset({"u32", "u64"})
VECS = frozenset({"v2", "v4", "v8"})
SHARED = frozenset({"shared", "shared::cta", "shared::cluster"})
PARAM = frozenset({"param", "param::entry", "param::func"})
LD_SPACES = SHARED | PARAM | {"const", "global", "local"}
ST_SPACES = SHARED | {"param", "param::func", "global", "local"}
CVTA_SPACES = SHARED | {"const", "global", "local", "param", "param::entry"}
LD_CACHE_OPS = frozenset({"ca", "cg", "cs", "lu", "cv"})
ST_CACHE_OPS = frozenset({"wb", "cg", "cs", "wt"})
L1_EVICT = frozenset({"L1::evict_normal", "L1::evict_unchanged", "L1::evict_first",
                      "L1::evict_last", "L1::no_allocate"})
L2_EVICT = frozenset({"L2::evict_normal", "L2::evict_first", "L2::evict_last"})
CACHE_HINT = frozenset({"L2::cache_hint"})
PREFETCH_SIZES = frozenset({"L2::64B", "L2::128B", "L2::256B"})
LOAD_SEMS = frozenset({"weak", "volatile", "relaxed", "acquire", "mmio"})
STORE_SEMS = frozenset({"weak", "volatile", "relaxed", "release", "mmio"})
ALL_SEMS = frozenset({"weak", "volatile", "relaxed", "acquire", "release", "acq_rel",
                      "sc", "mmio"})
SYNC_ALIGNED = frozenset({"sync", "aligned"})
MBAR_COMPLETE = "mbarrier::complete_tx::bytes"
MULTICAST = frozenset({"multicast::cluster", "multicast::cluster::32b"})
REDUCE_OPS = frozenset({"add", "inc", "dec", "min", "max", "and", "or", "xor"})


# --- mixins -----------------------------------------------------------------
class Ordered(Instruction):
    """Memory-model qualifiers: `.sem` (`.relaxed`, `.acquire`, ...) and `.scope`."""

    __slots__ = ()
    default_semantics: ClassVar[str] = "weak"
    default_scope: ClassVar[str | None] = None

    @property
    def semantics(self) -> str:
        for m in self.mods:
            if m in ALL_SEMS:
                return m
        return self.default_semantics

    @property
    def scope(self) -> str | None:
        for m in self.mods:
            if m in SCOPES:
                return m
        return self.default_scope


class CacheHinted(Instruction):
    """`.L2::cache_hint`: the last operand is a 64-bit cache-policy register."""

    __slots__ = ()

    @property
    def cache_policy(self) -> Operand | None:
        if "L2::cache_hint" in self.mods and self.operands:
            return self.operands[-1]
        return None


class DestsBeforeAddress(Instruction):
    """Every operand before the first `[address]` is a destination: for forms whose
    number of written registers depends on the modifiers (`tcgen05.ld.red`)."""

    __slots__ = ()

    def _n_written(self) -> int:
        for i, op in enumerate(self.operands):
            if isinstance(op, (Address, Bracketed)):
                return i
        return self.n_dests

    @property
    def dests(self) -> tuple[Operand, ...]:
        return self.operands[: self._n_written()]

    @property
    def sources(self) -> tuple[Operand, ...]:
        return self.operands[self._n_written():]


def immediate(op: Operand | None) -> int | None:
    """The integer value of an immediate operand, else None."""
    if isinstance(op, Immediate) and isinstance(op.value, int):
        return op.value
    return None


def vector_registers(op: Operand | None) -> int:
    """Registers held by a destination or source: elements of `{...}`, else 1."""
    return len(op.elements) if isinstance(op, Vector) else 1


# --- instructions -----------------------------------------------------------
class Ld(HasDest, MemoryAccess, Ordered, CacheHinted, opcode="ld"):
    """ld{.weak|.volatile|.relaxed.scope|.acquire.scope|.mmio.relaxed.sys}{.ss}{.nc}{.cop}{.L1::*}{.L2::*}{.L2::cache_hint}{.L2::NB}{.vec}.type d, [a]{, cache-policy}: load d from memory"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods(LOAD_SEMS, SCOPES, LD_SPACES, "nc", LD_CACHE_OPS, L1_EVICT, L2_EVICT,
                        CACHE_HINT, PREFETCH_SIZES, VECS, LDST_TYPES)

    @property
    def non_coherent(self) -> bool:
        """`ld.global.nc`: read through the non-coherent (texture) cache."""
        return "nc" in self.mods


class Ldu(HasDest, MemoryAccess, opcode="ldu"):
    """ldu{.global}{.vec}.type d, [a]: load a value that is uniform across the warp"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods("global", "v2", "v4", LDST_TYPES)


class St(MemoryAccess, Ordered, CacheHinted, opcode="st"):
    """st{.weak|.volatile|.relaxed.scope|.release.scope|.mmio.relaxed.sys}{.ss}{.cop}{.L1::*}{.L2::*}{.L2::cache_hint}{.vec}.type [a], b{, cache-policy}: store b to memory"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods(STORE_SEMS, SCOPES, ST_SPACES, ST_CACHE_OPS, L1_EVICT, L2_EVICT,
                        CACHE_HINT, VECS, LDST_TYPES)


class StAsync(MemoryAccess, Ordered, opcode="st.async"):
    """st.async{.sem}{.scope}{.ss}{.mbarrier::complete_tx::bytes}{.vec}.type [a], b{, [mbar]}: asynchronous (remote) store, completion signalled on mbar"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods("weak", "release", "mmio", SCOPES, "shared::cluster", "global",
                        MBAR_COMPLETE, "v2", "v4", INT_TYPES, FLOAT_TYPES)

    @property
    def mbarrier(self) -> Address | None:
        op = self.operands[2] if len(self.operands) > 2 else None
        return op if isinstance(op, Address) else None


class StBulk(MemoryAccess, opcode="st.bulk"):
    """st.bulk{.weak}{.shared::cta} [a], size, initval: set size bytes at a to initval (0)"""

    __slots__ = ()
    arity = (3, 3)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods("weak", "shared", "shared::cta")

    @property
    def access_bytes(self) -> int:
        """The size operand when it is an immediate; 0 when it is a register."""
        return immediate(self.operands[1] if len(self.operands) > 1 else None) or 0


class Prefetch(MemoryAccess, opcode="prefetch"):
    """prefetch{.space}.level [a] | prefetch.global.L2::evict_* [a] | prefetch{.const|.param}.tensormap [a]: cache hint, moves no data to registers"""

    __slots__ = ()
    arity = (1, 1)
    access_kind = "prefetch"
    address_index = 0
    allowed_mods = mods("global", "local", "const", "param", "L1", "L2", "L2::evict_last",
                        "L2::evict_normal", "tensormap")

    @property
    def access_bytes(self) -> int:
        return 0


class Prefetchu(MemoryAccess, opcode="prefetchu"):
    """prefetchu.L1 [a]: prefetch a generic address into the uniform cache"""

    __slots__ = ()
    arity = (1, 1)
    access_kind = "prefetch"
    address_index = 0
    allowed_mods = frozenset({"L1"})

    @property
    def access_bytes(self) -> int:
        return 0


class ApplyPriority(MemoryAccess, opcode="applypriority"):
    """applypriority{.global}.L2::evict_normal [a], size | applypriority.async.bulk{.tensor}.global.bulk_group.L2::evict_normal [a], size: set the L2 eviction priority of a range"""

    __slots__ = ()
    arity = (1, 2)
    access_kind = "prefetch"
    address_index = 0
    allowed_mods = mods("global", "L2::evict_normal", "async", "bulk", "tensor", "bulk_group",
                        "1d", "2d", "3d", "4d", "5d", "tile")

    @property
    def access_bytes(self) -> int:
        return 0


class Discard(MemoryAccess, opcode="discard"):
    """discard{.global}.L2 [a], 128: drop a cache line; the memory becomes indeterminate (a weak write)"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    address_index = 0
    allowed_mods = frozenset({"global", "L2"})

    @property
    def access_bytes(self) -> int:
        return immediate(self.operands[1] if len(self.operands) > 1 else None) or 128


class CreatePolicy(HasDest, HasType, opcode="createpolicy"):
    """createpolicy.range{.global}.L2::prio{.L2::prio}.b64 p, [a], primary, total | .fractional...b64 p{, fraction} | .cvt.L2.b64 p, prop: build a cache-eviction policy"""

    __slots__ = ()
    arity = (1, 4)
    allowed_mods = mods("range", "global", "fractional", "cvt", "L2", L2_EVICT,
                        "L2::evict_unchanged", "b64")


class Cvta(HasDest, HasType, HasStateSpace, opcode="cvta"):
    """cvta{.to}.space.size p, a: convert between a state-space address and a generic address"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = mods("to", CVTA_SPACES, ADDR_TYPES)

    @property
    def to_generic(self) -> bool:
        """True for `cvta.space` (space -> generic), False for `cvta.to.space`."""
        return "to" not in self.mods


class Isspacep(HasDest, HasStateSpace, opcode="isspacep"):
    """isspacep.space p, a: p = generic address a lies in the given state-space window"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = CVTA_SPACES


class Mapa(HasDest, HasType, HasStateSpace, opcode="mapa"):
    """mapa{.shared::cluster}.type d, a, b: the address of a's counterpart in cluster CTA b"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = mods("shared::cluster", ADDR_TYPES)


class Getctarank(HasDest, HasType, HasStateSpace, opcode="getctarank"):
    """getctarank{.shared::cluster}.type d, a: d = rank of the cluster CTA owning address a"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = mods("shared::cluster", ADDR_TYPES)


class Alloca(HasDest, HasType, opcode="alloca"):
    """alloca.type ptr, size{, align}: allocate size bytes of local stack memory"""

    __slots__ = ()
    arity = (2, 3)
    allowed_mods = ADDR_TYPES


class Stacksave(HasDest, HasType, opcode="stacksave"):
    """stacksave.type d: d = the current stack pointer"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = ADDR_TYPES


class Stackrestore(HasType, opcode="stackrestore"):
    """stackrestore.type a: set the stack pointer to a (from a prior stacksave)"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = ADDR_TYPES


MULTIMEM_TYPES = INT_TYPES - {"b8", "b16", "b128", "u8", "u16", "s8", "s16"}
MULTIMEM_FTYPES = HALF_TYPES | {"f32", "f64"} | FP8_TYPES


class MultimemLdReduce(HasDest, MemoryAccess, Ordered, opcode="multimem.ld_reduce"):
    """multimem.ld_reduce{.ldsem}{.scope}{.global}.op{.acc::prec}{.vec}.type d, [a]: load from every copy behind a multimem address and reduce"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods("weak", "relaxed", "acquire", SCOPES, "global",
                        "min", "max", "add", "and", "or", "xor", "acc::f32", "acc::f16",
                        VECS, MULTIMEM_TYPES, MULTIMEM_FTYPES)


class MultimemSt(MemoryAccess, Ordered, opcode="multimem.st"):
    """multimem.st{.async}{.stsem}{.scope}{.global}{.vec}.type [a], b: store b to every copy behind a multimem address"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods("async", "weak", "relaxed", "release", SCOPES, "global", VECS,
                        B_TYPES, U_TYPES, S_TYPES, MULTIMEM_FTYPES)


class MultimemRed(MemoryAccess, Ordered, opcode="multimem.red"):
    """multimem.red{.async}{.redsem}{.scope}{.global}.op{.vec}.type [a], b: reduce b into every copy behind a multimem address"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "reduce"
    address_index = 0
    default_semantics = "relaxed"
    default_scope = "sys"
    allowed_mods = mods("async", "relaxed", "release", SCOPES, "global", REDUCE_OPS, VECS,
                        MULTIMEM_TYPES, MULTIMEM_FTYPES)

