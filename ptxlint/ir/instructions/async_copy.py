"""Asynchronous copies (`cp.async*`, bulk and tensor copies, bulk reductions,
`multimem.cp*`) with their group/wait instructions, and tensor-map editing."""
from __future__ import annotations

from typing import ClassVar

from ..instruction import Instruction
from ..operands import Address, Bracketed, Operand
from ..traits import SPACES, MemoryAccess
from .memory import (
    CACHE_HINT,
    MBAR_COMPLETE,
    MULTICAST,
    PREFETCH_SIZES,
    REDUCE_OPS,
    SCOPES,
    SYNC_ALIGNED,
    CacheHinted,
    immediate,
    mods,
)

DIMS = frozenset({"1d", "2d", "3d", "4d", "5d"})
CTA_GROUPS = frozenset({"cta_group::1", "cta_group::2"})
LOAD_MODES = frozenset({"tile", "im2col", "tile::gather4", "tile::scatter4", "im2col::w",
                        "im2col::w::128", "im2col_no_offs", "im2col_no_offs::w"})
BULK_SPACES = frozenset({"shared", "shared::cta", "shared::cluster", "global"})
BULK_RED_TYPES = frozenset({"b32", "u32", "s32", "b64", "u64", "s64", "f16", "bf16", "f32",
                            "f64"})


class AsyncCopy(MemoryAccess):
    """A copy between two memory locations. The state spaces are written
    destination first (`cp.async.ca.shared.global`); `address_index` and `space`
    name the destination, `src_address`/`src_space` the source."""

    __slots__ = ()
    access_kind = "copy"
    address_index = 0
    dst_index: ClassVar[int] = 0
    src_index: ClassVar[int] = 1

    def _spaces(self) -> list[str]:
        return [m for m in self.mods if m.split("::", 1)[0] in SPACES]

    @property
    def dst_address(self) -> Address | Bracketed | None:
        op = self.operands[self.dst_index] if self.dst_index < len(self.operands) else None
        return op if isinstance(op, (Address, Bracketed)) else None

    @property
    def src_address(self) -> Address | Bracketed | None:
        op = self.operands[self.src_index] if self.src_index < len(self.operands) else None
        return op if isinstance(op, (Address, Bracketed)) else None

    @property
    def dst_space(self) -> str:
        found = self._spaces()
        return found[0] if found else "generic"

    @property
    def src_space(self) -> str:
        found = self._spaces()
        return found[1] if len(found) > 1 else "generic"

    @property
    def size(self) -> Operand | None:
        """The byte-count operand (third), when the form has one."""
        return self.operands[2] if len(self.operands) > 2 else None

    @property
    def access_bytes(self) -> int:
        """Bytes copied per thread when the size is an immediate; 0 when unknown."""
        return immediate(self.size) or 0

    @property
    def mbarrier(self) -> Address | None:
        """The completion mbarrier `[mbar]` of `.mbarrier::complete_tx::*` forms."""
        if not any(m.startswith("mbarrier::complete_tx") for m in self.mods):
            return None
        for op in self.operands[2:]:
            if isinstance(op, Address):
                return op
        return None


class CpAsync(AsyncCopy, CacheHinted, opcode="cp.async"):
    """cp.async.ca|.cg.shared{::cta}.global{.L2::cache_hint}{.L2::NB} [dst], [src], cp-size{, src-size|ignore-src}{, cache-policy}: start an async global->shared copy of cp-size bytes"""

    __slots__ = ()
    arity = (3, 5)
    allowed_mods = mods("ca", "cg", "shared", "shared::cta", "global", CACHE_HINT,
                        PREFETCH_SIZES)

    @property
    def copy_size(self) -> int | None:
        """cp-size (4, 8 or 16 bytes), the bytes written to shared memory."""
        return immediate(self.size)

    @property
    def src_size(self) -> Operand | None:
        """src-size or ignore-src: fewer (or no) bytes read, the rest zero-filled."""
        n = len(self.operands) - (1 if self.cache_policy is not None else 0)
        return self.operands[3] if n > 3 else None


class CpAsyncCommitGroup(Instruction, opcode="cp.async.commit_group"):
    """cp.async.commit_group: close the pending cp.async operations into a group"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()


class CpAsyncWaitGroup(Instruction, opcode="cp.async.wait_group"):
    """cp.async.wait_group N: wait until at most N most recent cp.async groups are pending"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = frozenset()

    @property
    def pending(self) -> int | None:
        return immediate(self.operands[0] if self.operands else None)


class CpAsyncWaitAll(Instruction, opcode="cp.async.wait_all"):
    """cp.async.wait_all: wait for every prior cp.async of this thread"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()


class CpAsyncMbarrierArrive(MemoryAccess, opcode="cp.async.mbarrier.arrive"):
    """cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar]: arrive on mbar when this thread's prior cp.async complete"""

    __slots__ = ()
    arity = (1, 1)
    access_kind = "atomic"
    address_index = 0
    allowed_mods = frozenset({"noinc", "shared", "shared::cta", "b64"})


BULK_SEMS = frozenset({"relaxed", "acquire", "release"})


class CpAsyncBulk(AsyncCopy, CacheHinted, opcode="cp.async.bulk"):
    """cp.async.bulk.dst.src.completion{.multicast::cluster}{.L2::cache_hint}{.cp_mask} [dst], [src], size{, [mbar]}{, ctaMask}{, cache-policy}{, byteMask}: bulk async copy"""

    __slots__ = ()
    arity = (3, 6)
    allowed_mods = mods(BULK_SPACES, MBAR_COMPLETE, "bulk_group", MULTICAST, CACHE_HINT,
                        "cp_mask", "ignore_oob", BULK_SEMS, SCOPES)

    @property
    def cache_policy(self) -> Operand | None:
        """With `.cp_mask` the byte mask comes last and the cache policy before it."""
        if "L2::cache_hint" not in self.mods:
            return None
        i = -2 if "cp_mask" in self.mods else -1
        return self.operands[i] if len(self.operands) >= 4 else None


class CpReduceAsyncBulk(AsyncCopy, CacheHinted, opcode="cp.reduce.async.bulk"):
    """cp.reduce.async.bulk.dst.src.completion{.L2::cache_hint}.op{.noftz}.type [dst], [src], size{, [mbar]}{, cache-policy}: bulk async reduction of src into dst"""

    __slots__ = ()
    arity = (3, 4)
    access_kind = "reduce"
    allowed_mods = mods(BULK_SPACES, MBAR_COMPLETE, "bulk_group", CACHE_HINT, REDUCE_OPS,
                        "noftz", BULK_RED_TYPES, BULK_SEMS, SCOPES)


class CpAsyncBulkPrefetch(AsyncCopy, CacheHinted, opcode="cp.async.bulk.prefetch"):
    """cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, cache-policy}: prefetch size bytes into L2"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "prefetch"
    src_index = 0
    allowed_mods = mods("L2", "global", CACHE_HINT, "L2::evict_last", "L2::evict_normal",
                        "L2::evict_first")

    @property
    def size(self) -> Operand | None:
        return self.operands[1] if len(self.operands) > 1 else None

    @property
    def access_bytes(self) -> int:
        return 0


class TensorCopy(AsyncCopy):
    """Bulk tensor copy: one side is `[tensorMap, {coords}]`, the other `[smem]`."""

    __slots__ = ()

    @property
    def tensor_map(self) -> Operand | None:
        for op in self.operands:
            if isinstance(op, Bracketed) and op.items:
                return op.items[0]
        return None

    @property
    def size(self) -> Operand | None:
        return None  # the box size lives in the tensor map


class CpAsyncBulkTensor(TensorCopy, CacheHinted, opcode="cp.async.bulk.tensor"):
    """cp.async.bulk.tensor.dim.dst.src{.load_mode}.completion{.cta_group}{.multicast::cluster}{.L2::cache_hint} [dst], [tmap, coords]{, [mbar]}{, im2col-offs}{, ctaMask}{, cache-policy}: copy a tensor tile"""

    __slots__ = ()
    arity = (2, 6)
    allowed_mods = mods(DIMS, BULK_SPACES, LOAD_MODES, MBAR_COMPLETE, "bulk_group", CTA_GROUPS,
                        MULTICAST, CACHE_HINT, "override::global_address")


class CpReduceAsyncBulkTensor(TensorCopy, CacheHinted, opcode="cp.reduce.async.bulk.tensor"):
    """cp.reduce.async.bulk.tensor.dim.dst.src.op{.load_mode}.completion{.L2::cache_hint} [tmap, coords], [src]{, cache-policy}: reduce a shared tile into a tensor"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "reduce"
    allowed_mods = mods(DIMS, BULK_SPACES, REDUCE_OPS, LOAD_MODES, "bulk_group", CACHE_HINT)


class CpAsyncBulkPrefetchTensor(TensorCopy, CacheHinted, opcode="cp.async.bulk.prefetch.tensor"):
    """cp.async.bulk.prefetch.tensor.dim.L2.src{.load_mode}{.L2::cache_hint} [tmap, coords]{, im2col-offs}{, cache-policy}: prefetch a tensor tile into L2"""

    __slots__ = ()
    arity = (1, 3)
    access_kind = "prefetch"
    src_index = 0
    allowed_mods = mods(DIMS, "L2", "global", LOAD_MODES, CACHE_HINT, "L2::evict_last",
                        "L2::evict_normal", "L2::evict_first")


class CpAsyncBulkCommitGroup(Instruction, opcode="cp.async.bulk.commit_group"):
    """cp.async.bulk.commit_group: close the pending bulk async operations into a bulk group"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()


class CpAsyncBulkWaitGroup(Instruction, opcode="cp.async.bulk.wait_group"):
    """cp.async.bulk.wait_group{.read} N: wait until at most N bulk groups are pending (.read: only their source reads)"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = frozenset({"read"})

    @property
    def pending(self) -> int | None:
        return immediate(self.operands[0] if self.operands else None)


class MultimemCpAsyncBulk(AsyncCopy, opcode="multimem.cp.async.bulk"):
    """multimem.cp.async.bulk.global.shared::cta.bulk_group{.cp_mask} [dst], [src], size{, byteMask}: bulk copy shared memory to every copy behind a multimem address"""

    __slots__ = ()
    arity = (3, 4)
    allowed_mods = mods("global", "shared::cta", "bulk_group", "cp_mask", BULK_SEMS, SCOPES)


class MultimemCpReduceAsyncBulk(AsyncCopy, opcode="multimem.cp.reduce.async.bulk"):
    """multimem.cp.reduce.async.bulk.global.shared::cta.bulk_group.op{.noftz}.type [dst], [src], size: bulk reduction into every copy behind a multimem address"""

    __slots__ = ()
    arity = (3, 3)
    access_kind = "reduce"
    allowed_mods = mods("global", "shared::cta", "bulk_group", REDUCE_OPS, "noftz",
                        BULK_RED_TYPES, BULK_SEMS, SCOPES)


TENSORMAP_FIELDS = frozenset({
    "global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
    "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode",
})


class TensormapReplace(MemoryAccess, opcode="tensormap.replace"):
    """tensormap.replace.tile.field{.ss}.b1024.type [tmap], {ord,} new_val: rewrite one field of a 128-byte tensor map in memory"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods("tile", TENSORMAP_FIELDS, "global", "shared", "shared::cta", "b1024",
                        "b32", "b64")


class TensormapCpFenceproxy(AsyncCopy, opcode="tensormap.cp_fenceproxy"):
    """tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned [dst], [src], size: copy a tensor map and fence it for the tensormap proxy"""

    __slots__ = ()
    arity = (3, 3)
    allowed_mods = mods("global", "shared::cta", "tensormap::generic", "release", SCOPES,
                        SYNC_ALIGNED)
