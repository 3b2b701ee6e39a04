"""The rest of the PTX 9.x instruction index: scalar and SIMD video instructions
(9.7.17/9.7.18 in PTX 9.0 numbering), the fabric instructions (PTX 9.3/9.4) and
register-level sparse compression (PTX 9.4).

Operand selectors such as `a.b0` or `d.h1` belong to the operands, not to the
modifiers, so they do not appear in `allowed_mods`.
"""
from __future__ import annotations

from ..instruction import Instruction
from ..traits import HasDest, HasType, Saturating
from .async_copy import AsyncCopy
from .memory import REDUCE_OPS, mods

VIDEO_TYPES = frozenset({"u32", "s32"})
VIDEO_OP2 = frozenset({"add", "min", "max"})
VIDEO_CMP = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
VIDEO_SCALAR = mods(VIDEO_TYPES, "sat", VIDEO_OP2)


class Video(HasDest, HasType, Saturating):
    """d = op(a, b){ op2 c}: byte/half-word selected integer operations."""

    __slots__ = ()
    arity = (3, 4)


class Vadd(Video, opcode="vadd"):
    """vadd.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: add selected bytes/halves"""

    __slots__ = ()
    allowed_mods = VIDEO_SCALAR


class Vsub(Video, opcode="vsub"):
    """vsub.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: subtract"""

    __slots__ = ()
    allowed_mods = VIDEO_SCALAR


class Vabsdiff(Video, opcode="vabsdiff"):
    """vabsdiff.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: |a - b|"""

    __slots__ = ()
    allowed_mods = VIDEO_SCALAR


class Vmin(Video, opcode="vmin"):
    """vmin.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: minimum"""

    __slots__ = ()
    allowed_mods = VIDEO_SCALAR


class Vmax(Video, opcode="vmax"):
    """vmax.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: maximum"""

    __slots__ = ()
    allowed_mods = VIDEO_SCALAR


class Vshl(Video, opcode="vshl"):
    """vshl.dtype.atype.u32{.sat}.mode{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: shift left (.clamp/.wrap the shift)"""

    __slots__ = ()
    allowed_mods = VIDEO_SCALAR | {"clamp", "wrap"}


class Vshr(Video, opcode="vshr"):
    """vshr.dtype.atype.u32{.sat}.mode{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: shift right (.clamp/.wrap the shift)"""

    __slots__ = ()
    allowed_mods = VIDEO_SCALAR | {"clamp", "wrap"}


class Vmad(Video, opcode="vmad"):
    """vmad.dtype.atype.btype{.po}{.sat}{.scale} d, {-}a{.asel}, {-}b{.bsel}, {-}c: d = a*b + c with optional negation and shift"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = mods(VIDEO_TYPES, "sat", "po", "shr7", "shr15")


class Vset(Video, opcode="vset"):
    """vset.atype.btype.cmp{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}: d = (a cmp b) as 0/1"""

    __slots__ = ()
    allowed_mods = mods(VIDEO_TYPES, VIDEO_CMP, VIDEO_OP2)


SIMD_MODS = mods(VIDEO_TYPES, "sat", "add")


class Vadd2(Video, opcode="vadd2"):
    """vadd2.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-half-word add"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vsub2(Video, opcode="vsub2"):
    """vsub2.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-half-word subtract"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vavrg2(Video, opcode="vavrg2"):
    """vavrg2.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-half-word rounded average"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vabsdiff2(Video, opcode="vabsdiff2"):
    """vabsdiff2.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-half-word |a - b|"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vmin2(Video, opcode="vmin2"):
    """vmin2.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-half-word minimum"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vmax2(Video, opcode="vmax2"):
    """vmax2.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-half-word maximum"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vset2(Video, opcode="vset2"):
    """vset2.atype.btype.cmp{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-half-word compare"""

    __slots__ = ()
    allowed_mods = mods(VIDEO_TYPES, VIDEO_CMP, "add")


class Vadd4(Video, opcode="vadd4"):
    """vadd4.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-byte add"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vsub4(Video, opcode="vsub4"):
    """vsub4.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-byte subtract"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vavrg4(Video, opcode="vavrg4"):
    """vavrg4.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-byte rounded average"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vabsdiff4(Video, opcode="vabsdiff4"):
    """vabsdiff4.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-byte |a - b|"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vmin4(Video, opcode="vmin4"):
    """vmin4.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-byte minimum"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vmax4(Video, opcode="vmax4"):
    """vmax4.dtype.atype.btype{.sat}{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-byte maximum"""

    __slots__ = ()
    allowed_mods = SIMD_MODS


class Vset4(Video, opcode="vset4"):
    """vset4.atype.btype.cmp{.add} d{.mask}, a{.asel}, b{.bsel}, c: per-byte compare"""

    __slots__ = ()
    allowed_mods = mods(VIDEO_TYPES, VIDEO_CMP, "add")


# --- fabric (PTX 9.3; try_pullred 9.4) ----------------------------------------
FABRIC_MODS = mods("async", "multimem", "shared::cta", "mbarrier::complete_tx::bytes",
                   "mbarrier::complete_tx::16B", "mbarrier::report::fabric", "relaxed", "sys",
                   "b128")
FABRIC_RED_TYPES = frozenset({"b32", "b64", "u32", "u64", "s32", "s64"})


class FabricSend(AsyncCopy):
    """Shared memory to a remote fabric endpoint `[leId, offset{, counterOffset}]`: the
    `[address]` this thread's memory analysis sees is the shared source (operand 1)."""

    __slots__ = ()
    address_index = 1

    @property
    def dst_space(self) -> str:
        return "fabric"

    @property
    def src_space(self) -> str:
        return self.space_mod


class FabricFetch(AsyncCopy):
    """A remote fabric endpoint `[leId, offset]` into shared memory (operand 0)."""

    __slots__ = ()

    @property
    def src_space(self) -> str:
        return "fabric"


class FabricTryGet(FabricFetch, opcode="fabric.try_get"):
    """fabric.try_get.async.shared::cta.mbarrier::complete_tx::bytes.mbarrier::report::fabric.sem.scope.b128 [dst], [srcLeId, srcOff], size, [mbar]: fetch from a fabric endpoint into shared memory"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = FABRIC_MODS


class FabricTryPut(FabricSend, opcode="fabric.try_put"):
    """fabric.try_put.async{.multimem}.shared::cta.mbarrier::complete_tx::16B.mbarrier::report::fabric{.cp_mask|.counted::bytes}.sem.scope.b128 [dstLeId, dstOff{, ctrOff}], [src], size, [mbar]{, bytemask}: send shared memory to a fabric endpoint"""

    __slots__ = ()
    arity = (4, 5)
    allowed_mods = FABRIC_MODS | {"cp_mask", "counted::bytes"}


class FabricTryRed(FabricSend, opcode="fabric.try_red"):
    """fabric.try_red.async{.multimem}.shared::cta.mbarrier::complete_tx::16B.mbarrier::report::fabric{.counted::bytes}.sem.scope.op.type [dstLeId, dstOff{, ctrOff}], [src], size, [mbar]: reduce shared memory into a fabric endpoint"""

    __slots__ = ()
    arity = (4, 5)
    access_kind = "reduce"
    allowed_mods = FABRIC_MODS | {"counted::bytes"} | REDUCE_OPS | FABRIC_RED_TYPES


class FabricTryPullred(FabricFetch, opcode="fabric.try_pullred"):
    """fabric.try_pullred.async.multimem.shared::cta.mbarrier::complete_tx::bytes.mbarrier::report::fabric.sem.scope.op.type.sync [dst], [srcLeId, srcOff], size, [mbar], membermask: fetch-and-reduce from a multimem fabric endpoint"""

    __slots__ = ()
    arity = (5, 5)
    access_kind = "reduce"
    allowed_mods = FABRIC_MODS | REDUCE_OPS | FABRIC_RED_TYPES | {"sync"}


class FabricSubmit(Instruction, opcode="fabric.submit"):
    """fabric.submit{.op_restrict::fetching}: submit this thread's pending fabric operations"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset({"op_restrict::fetching"})


class FabricWait(Instruction, opcode="fabric.wait"):
    """fabric.wait.sync_restrict::reads: wait for this thread's submitted fabric reads"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset({"sync_restrict::reads"})


# --- register sparse compression (PTX 9.4) ------------------------------------
SPARSE_MODS = frozenset({"b8", "b16", "b32", "f32", "b4", "b2", "sp::2:4", "sp::1:2", "x1",
                         "x2", "x4", "x8", "max", "min", "abs", "NaN"})


class Spcompress(HasDest, HasType, opcode="spcompress"):
    """spcompress.dtype.itype.sp::2:4.num {meta}, {packed}, {data}, spdesc: keep the selected elements of each group, write their indices to meta"""

    __slots__ = ()
    n_dests = 2
    arity = (4, 4)
    allowed_mods = SPARSE_MODS


class Spdecompress(HasDest, HasType, opcode="spdecompress"):
    """spdecompress.dtype.itype.sp::2:4.num {data}, {packed}, {meta}, spdesc: scatter packed elements back to their indices, zero elsewhere"""

    __slots__ = ()
    arity = (3, 4)
    allowed_mods = SPARSE_MODS
