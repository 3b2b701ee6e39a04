"""Tensor-core instructions: warp-level `mma`/`wmma` and the matrix load/store/
transpose helpers, warpgroup `wgmma`, and the 5th-generation `tcgen05` family.

Fragments live in registers (`mma`, `wgmma`) or Tensor Memory (`tcgen05`); only
the instructions that move data through a per-thread `[address]` are memory
accesses. Tensor Memory addresses are reported in the `"tmem"` space.
"""
from __future__ import annotations

from ..instruction import Instruction
from ..operands import registers_in
from ..traits import HasDest, HasType, MemoryAccess
from .memory import SYNC_ALIGNED, DestsBeforeAddress, mods, vector_registers

MMA_SHAPES = frozenset({"m8n8k4", "m8n8k16", "m8n8k32", "m8n8k128", "m16n8k4", "m16n8k8",
                        "m16n8k16", "m16n8k32", "m16n8k64", "m16n8k128", "m16n8k256"})
WMMA_SHAPES = frozenset({"m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8", "m8n8k4",
                         "m8n8k32", "m8n8k128"})
LAYOUTS = frozenset({"row", "col"})
MMA_TYPES = frozenset({"f16", "f32", "f64", "bf16", "tf32", "s8", "u8", "s4", "u4", "b1",
                       "s32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3"})
MMA_KINDS = frozenset({"kind::f8f6f4", "kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4"})
SCALE_VECS = frozenset({"scale_vec::1X", "scale_vec::2X", "scale_vec::4X"})
BIT_OPS = frozenset({"xor", "and", "popc"})
ROUNDINGS = frozenset({"rn", "rz", "rm", "rp"})
MATRIX_SPACES = frozenset({"shared", "shared::cta"})
# `.sp` may also follow `.sync.aligned` (ptxas accepts `mma.sync.aligned.sp...`), in
# which case the instruction resolves to the dense opcode with "sp" among its mods.
MMA_MODS = mods(SYNC_ALIGNED, MMA_SHAPES, LAYOUTS, MMA_TYPES, "satfinite", BIT_OPS,
                ROUNDINGS, MMA_KINDS, "block_scale", SCALE_VECS, "sp", "sp::ordered_metadata")


class Mma(HasDest, HasType):
    """Shared accessors of the matrix multiply-accumulate forms."""

    __slots__ = ()

    @property
    def is_sparse(self) -> bool:
        return ".sp" in self.opcode or any(m.startswith("sp") for m in self.mods)

    @property
    def shape(self) -> str | None:
        for m in self.mods:
            if m.startswith("m") and "n" in m and "k" in m and m[1:2].isdigit():
                return m
        return None


class MmaSync(Mma, opcode="mma"):
    """mma.sync.aligned.shape{.alayout.blayout}{.kind}{.block_scale.scale_vec}{.satfinite}.dtype.atype.btype.ctype d, a, b, c{, scale operands}: warp matrix multiply-accumulate"""

    __slots__ = ()
    arity = (4, 10)
    allowed_mods = MMA_MODS


class MmaSp(Mma, opcode="mma.sp"):
    """mma.sp.sync.aligned.shape.row.col{.kind}{.block_scale...}.dtype.atype.btype.ctype d, a, b, c, e, f{, scale operands}: sparse-A warp mma (e metadata, f selector)"""

    __slots__ = ()
    arity = (6, 10)
    allowed_mods = MMA_MODS


class MmaSpOrdered(MmaSp, opcode="mma.sp::ordered_metadata"):
    """mma.sp::ordered_metadata.sync.aligned... d, a, b, c, e, f: mma.sp with ordered sparsity metadata"""

    __slots__ = ()


class WmmaLoad(HasDest, MemoryAccess, opcode="wmma.load"):
    """wmma.load.a|b|c.sync.aligned.layout.shape{.ss}.type r, [p]{, stride}: load a matrix fragment (warp-cooperative)"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods("a", "b", "c", SYNC_ALIGNED, LAYOUTS, WMMA_SHAPES, "global",
                        MATRIX_SPACES, MMA_TYPES)

    @property
    def access_bytes(self) -> int:
        """Bytes of fragment this thread receives: its registers times their width."""
        width = 8 if self.has("f64") else 4
        return width * vector_registers(self.operands[0] if self.operands else None)


class WmmaStore(MemoryAccess, opcode="wmma.store"):
    """wmma.store.d.sync.aligned.layout.shape{.ss}.type [p], r{, stride}: store a matrix fragment (warp-cooperative)"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods("d", SYNC_ALIGNED, LAYOUTS, WMMA_SHAPES, "global", MATRIX_SPACES,
                        MMA_TYPES)

    @property
    def access_bytes(self) -> int:
        width = 8 if self.has("f64") else 4
        return width * vector_registers(self.operands[1] if len(self.operands) > 1 else None)


class WmmaMma(Mma, opcode="wmma.mma"):
    """wmma.mma.sync.aligned.alayout.blayout.shape{.rnd}.dtype.atype.btype.ctype{.satfinite} d, a, b, c: fragment multiply-accumulate"""

    __slots__ = ()
    arity = (4, 4)
    allowed_mods = mods(SYNC_ALIGNED, LAYOUTS, WMMA_SHAPES, MMA_TYPES, "satfinite", BIT_OPS,
                        ROUNDINGS)


LDMATRIX_FORMATS = frozenset({"b8x16", "b6x16_p32", "b4x16_p64"})


class Ldmatrix(HasDest, MemoryAccess, opcode="ldmatrix"):
    """ldmatrix.sync.aligned.shape.num{.trans}{.ss}.type r, [p]: load 1/2/4 matrices from shared memory, each lane addressing one 16-byte row"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "load"
    address_index = 1
    allowed_mods = mods(SYNC_ALIGNED, "m8n8", "m16n16", "m8n16", "x1", "x2", "x4", "trans",
                        MATRIX_SPACES, "b16", "b8", "s8", "s4", LDMATRIX_FORMATS)

    @property
    def access_bytes(self) -> int:
        return 16


class Stmatrix(MemoryAccess, opcode="stmatrix"):
    """stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r: store 1/2/4 matrices to shared memory, each lane addressing one 16-byte row"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods(SYNC_ALIGNED, "m8n8", "m16n8", "x1", "x2", "x4", "trans",
                        MATRIX_SPACES, "b16", "b8")

    @property
    def access_bytes(self) -> int:
        return 16


class Movmatrix(HasDest, HasType, opcode="movmatrix"):
    """movmatrix.sync.aligned.m8n8.trans.b16 d, a: transpose a warp-distributed 8x8 matrix"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = mods(SYNC_ALIGNED, "m8n8", "trans", "b16")


def _wgmma_shapes() -> frozenset[str]:
    return frozenset(f"m64n{n}k{k}" for n in range(8, 257, 8) for k in (8, 16, 32, 64, 256))


WGMMA_TYPES = frozenset({"f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1", "f32",
                         "s32"})


class WgmmaFence(Instruction, opcode="wgmma.fence"):
    """wgmma.fence.sync.aligned: order register accesses before the following wgmma.mma_async"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = SYNC_ALIGNED


class WgmmaCommitGroup(Instruction, opcode="wgmma.commit_group"):
    """wgmma.commit_group.sync.aligned: close the pending wgmma.mma_async operations into a group"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = SYNC_ALIGNED


class WgmmaWaitGroup(Instruction, opcode="wgmma.wait_group"):
    """wgmma.wait_group.sync.aligned N: wait until at most N wgmma groups are pending"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = SYNC_ALIGNED


class WgmmaMmaAsync(Mma):
    """d is an accumulator: read (unless scale-d is 0) as well as written."""

    __slots__ = ()

    @property
    def uses(self) -> list:
        return super().uses + [r for op in self.dests for r in registers_in(op)]


WGMMA_MODS = mods(SYNC_ALIGNED, _wgmma_shapes(), WGMMA_TYPES, "satfinite", "and", "popc", "sp")


class WgmmaMma(WgmmaMmaAsync, opcode="wgmma.mma_async"):
    """wgmma.mma_async.sync.aligned.shape.dtype.atype.btype d, a-desc|a, b-desc, scale-d{, imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b}: async warpgroup mma"""

    __slots__ = ()
    arity = (4, 10)
    allowed_mods = WGMMA_MODS


class WgmmaMmaSp(WgmmaMmaAsync, opcode="wgmma.mma_async.sp"):
    """wgmma.mma_async.sp.sync.aligned.shape.dtype.atype.btype d, a-desc|a, b-desc, sp-meta, sp-sel, scale-d{, ...}: async warpgroup mma, sparse A"""

    __slots__ = ()
    arity = (6, 10)
    allowed_mods = WGMMA_MODS


CTA_GROUPS = frozenset({"cta_group::1", "cta_group::2"})
TMEM_SHAPES = frozenset({"16x64b", "16x128b", "16x256b", "32x32b", "16x32bx2"})
TMEM_NUMS = frozenset(f"x{n}" for n in (1, 2, 4, 8, 16, 32, 64, 128))


class TensorMemory(MemoryAccess):
    """Accesses Tensor Memory through a 32-bit `[taddr]`."""

    __slots__ = ()

    @property
    def space_mod(self) -> str:
        return "tmem"


class Tcgen05Alloc(MemoryAccess, opcode="tcgen05.alloc"):
    """tcgen05.alloc.cta_group.sync.aligned{.shared::cta}.b32 [dst], nCols: allocate Tensor Memory columns, address written to shared dst"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods(CTA_GROUPS, SYNC_ALIGNED, "shared::cta", "b32", "exclusive")


class Tcgen05Dealloc(HasType, opcode="tcgen05.dealloc"):
    """tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols: free Tensor Memory columns"""

    __slots__ = ()
    arity = (2, 2)
    allowed_mods = mods(CTA_GROUPS, SYNC_ALIGNED, "b32", "exclusive")


class Tcgen05Relinquish(Instruction, opcode="tcgen05.relinquish_alloc_permit"):
    """tcgen05.relinquish_alloc_permit.cta_group.sync.aligned: give up the CTA's right to allocate Tensor Memory"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = mods(CTA_GROUPS, SYNC_ALIGNED)


TCGEN05_MMA_MODS = mods(
    CTA_GROUPS, "kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8", "kind::mxf8f6f4",
    "kind::mxf4", "kind::mxf4nvf4", "kind::ti16", "block_scale", "block16", "block32",
    SCALE_VECS, "ashift", "decompress::lut::b", "sp", "ws",
    (f"collector::{ab}::{use}" for ab in ("a", "b", "b0", "b1", "b2", "b3")
     for use in ("fill", "use", "lastuse", "discard")))


class Tcgen05Mma(Instruction, opcode="tcgen05.mma"):
    """tcgen05.mma.cta_group.kind{.block_scale...}{.collector...} [d-tmem], a-desc|[a-tmem], b-desc, idesc, {disable-output-lane,} enable-input-d{, scale-input-d}: issue an async 5th-gen mma"""

    # ptxas accepts `.sp` after `.cta_group` too; such forms resolve here with "sp" in mods
    __slots__ = ()
    arity = (5, 9)
    allowed_mods = TCGEN05_MMA_MODS


class Tcgen05MmaSp(Tcgen05Mma, opcode="tcgen05.mma.sp"):
    """tcgen05.mma.sp.cta_group.kind... [d-tmem], a, b-desc, [sp-meta-tmem], idesc, ...: tcgen05.mma with sparse A"""

    __slots__ = ()


class Tcgen05MmaWs(Tcgen05Mma, opcode="tcgen05.mma.ws"):
    """tcgen05.mma.ws.cta_group::1.kind{.collector::bN::*} [d-tmem], a, b-desc, idesc, enable-input-d{, zero-col-mask}: weight-stationary tcgen05.mma"""

    __slots__ = ()


class Tcgen05MmaWsSp(Tcgen05Mma, opcode="tcgen05.mma.ws.sp"):
    """tcgen05.mma.ws.sp.cta_group::1.kind... [d-tmem], a, b-desc, [sp-meta-tmem], idesc, ...: weight-stationary sparse tcgen05.mma"""

    __slots__ = ()


TCGEN05_CP_SHAPES = frozenset({"128x256b", "4x256b", "128x128b", "64x128b", "32x128b"})


class Tcgen05Cp(TensorMemory, opcode="tcgen05.cp"):
    """tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc: async copy from shared memory (descriptor) into Tensor Memory"""

    __slots__ = ()
    arity = (2, 2)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods(CTA_GROUPS, TCGEN05_CP_SHAPES, "warpx2::02_13", "warpx2::01_23",
                        "warpx4", LDMATRIX_FORMATS)

    @property
    def access_bytes(self) -> int:
        return 0  # the size follows from the shape, not from the thread


class Tcgen05Shift(Instruction, opcode="tcgen05.shift"):
    """tcgen05.shift.cta_group.down [taddr]: shift 32-byte Tensor Memory rows down by one"""

    __slots__ = ()
    arity = (1, 1)
    allowed_mods = mods(CTA_GROUPS, "down")


class Tcgen05Ld(DestsBeforeAddress, TensorMemory, opcode="tcgen05.ld"):
    """tcgen05.ld{.red}{.spcompress}.sync.aligned.shape.num{.pack::16b}{...}.b32 r{, ...}, [taddr]{, immHalfSplitoff}: load from Tensor Memory into registers"""

    __slots__ = ()
    n_dests = 1
    arity = (2, 5)
    access_kind = "load"
    allowed_mods = mods(SYNC_ALIGNED, TMEM_SHAPES, TMEM_NUMS, "pack::16b", "b32", "red",
                        "spcompress", "min", "max", "abs", "NaN", "f32", "u32", "s32", "b2",
                        "sp::2:4")

    @property
    def address_index(self) -> int:  # type: ignore[override]
        return len(self.dests)

    @property
    def access_bytes(self) -> int:
        return 4 * sum(vector_registers(op) for op in self.dests[:1])


class Tcgen05St(TensorMemory, opcode="tcgen05.st"):
    """tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32 [taddr]{, immHalfSplitoff}, r: store registers into Tensor Memory"""

    __slots__ = ()
    arity = (2, 3)
    access_kind = "store"
    address_index = 0
    allowed_mods = mods(SYNC_ALIGNED, TMEM_SHAPES, TMEM_NUMS, "unpack::16b", "b32")

    @property
    def access_bytes(self) -> int:
        return 4 * vector_registers(self.operands[-1] if self.operands else None)


class Tcgen05Wait(Instruction):
    """tcgen05.wait::ld|::st.sync.aligned: wait for this thread's prior tcgen05.ld/st."""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = SYNC_ALIGNED


class Tcgen05WaitLd(Tcgen05Wait, opcode="tcgen05.wait::ld"):
    """tcgen05.wait::ld.sync.aligned: wait until the thread's prior tcgen05.ld have completed"""

    __slots__ = ()


class Tcgen05WaitSt(Tcgen05Wait, opcode="tcgen05.wait::st"):
    """tcgen05.wait::st.sync.aligned: wait until the thread's prior tcgen05.st have completed"""

    __slots__ = ()


class Tcgen05Commit(MemoryAccess, opcode="tcgen05.commit"):
    """tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64 [mbar]{, ctaMask}: arrive on mbar when prior async tcgen05 ops complete"""

    __slots__ = ()
    arity = (1, 2)
    access_kind = "atomic"
    address_index = 0
    allowed_mods = mods(CTA_GROUPS, "mbarrier::arrive::one", "shared::cluster",
                        "multicast::cluster", "multicast::cluster::32b", "b64")


class Tcgen05FenceBefore(Instruction, opcode="tcgen05.fence::before_thread_sync"):
    """tcgen05.fence::before_thread_sync: order prior async tcgen05 ops before a following thread sync"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()


class Tcgen05FenceAfter(Instruction, opcode="tcgen05.fence::after_thread_sync"):
    """tcgen05.fence::after_thread_sync: order a prior thread sync before following async tcgen05 ops"""

    __slots__ = ()
    arity = (0, 0)
    allowed_mods = frozenset()

