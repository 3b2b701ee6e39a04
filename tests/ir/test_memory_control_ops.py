"""The memory, control-flow, synchronisation, tensor-core, texture/surface and misc
opcode families (ptxlint/ir/instructions/{memory,atomic,async_copy,sync,control,
tensor,texture,misc}.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxlint.ir.instruction import Guard, Instruction
from ptxlint.ir.operands import (Address, Bracketed, Immediate, Negated, ParenList,
                                 PredicatePair, Register, Sink, Symbol, Vector)
from ptxlint.ir.registry import REGISTRY, all_opcodes, resolve
from ptxlint.ir.traits import Barrier, Branch, Call, MemoryAccess, Terminator

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ("memory", "atomic", "async_copy", "sync", "control", "tensor", "texture", "misc")
PACKAGE = "ptxlint.ir.instructions."

OURS = sorted({
    # memory
    "ld", "ldu", "st", "st.async", "st.bulk", "prefetch", "prefetchu", "applypriority",
    "discard", "createpolicy", "cvta", "isspacep", "mapa", "getctarank", "alloca",
    "stacksave", "stackrestore", "multimem.ld_reduce", "multimem.st", "multimem.red",
    # atomic
    "atom", "red", "red.async",
    # async copy
    "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
    "cp.async.mbarrier.arrive", "cp.async.bulk", "cp.reduce.async.bulk",
    "cp.async.bulk.prefetch", "cp.async.bulk.tensor", "cp.reduce.async.bulk.tensor",
    "cp.async.bulk.prefetch.tensor", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group",
    "multimem.cp.async.bulk", "multimem.cp.reduce.async.bulk", "tensormap.replace",
    "tensormap.cp_fenceproxy",
    # sync
    "bar", "barrier", "bar.warp.sync", "barrier.cluster", "membar", "fence", "fence.proxy",
    "mbarrier.init", "mbarrier.inval", "mbarrier.arrive", "mbarrier.arrive_drop",
    "mbarrier.expect_tx", "mbarrier.complete_tx", "mbarrier.test_wait", "mbarrier.try_wait",
    "mbarrier.pending_count", "mbarrier.check_layout", "vote", "vote.sync", "match",
    "redux.sync", "redux", "activemask", "elect.sync", "griddepcontrol", "setmaxnreg",
    "clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.query_cancel", "nanosleep",
    # control
    "bra", "brx.idx", "call", "ret", "exit", "trap", "brkpt", "pmevent",
    # tensor
    "mma", "mma.sp", "mma.sp::ordered_metadata", "wmma.load", "wmma.store", "wmma.mma",
    "ldmatrix", "stmatrix", "movmatrix", "wgmma.fence", "wgmma.commit_group",
    "wgmma.wait_group", "wgmma.mma_async", "wgmma.mma_async.sp", "tcgen05.alloc",
    "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.mma", "tcgen05.mma.sp",
    "tcgen05.mma.ws", "tcgen05.mma.ws.sp", "tcgen05.cp", "tcgen05.shift", "tcgen05.ld",
    "tcgen05.st", "tcgen05.wait::ld", "tcgen05.wait::st", "tcgen05.commit",
    "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync",
    # texture / surface
    "tex", "tld4", "txq", "istypep", "suld", "sust", "sured", "suq",
    # misc: video, fabric, register sparse compression
    "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
    "vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2",
    "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4",
    "fabric.try_get", "fabric.try_put", "fabric.try_red", "fabric.try_pullred",
    "fabric.submit", "fabric.wait", "spcompress", "spdecompress",
})


def r(name: str) -> Register:
    return Register(name, name)


def imm(value: int) -> Immediate:
    return Immediate(value, str(value))


def addr(base: str, offset: int = 0) -> Address:
    return Address(r(base) if base.startswith("%") else Symbol(base), offset)


def vec(*names: str) -> Vector:
    return Vector(tuple(Sink() if n == "_" else r(n) for n in names))


def make(full_opcode: str, *operands, guard: Guard | None = None) -> Instruction:
    hit = resolve(full_opcode)
    assert hit is not None, full_opcode
    cls, opcode, mods = hit
    bad = [m for m in mods if m not in cls.allowed_mods]
    assert not bad, f"{full_opcode}: {bad} not in {cls.__name__}.allowed_mods"
    lo, hi = cls.arity
    assert lo <= len(operands) and (hi is None or len(operands) <= hi), full_opcode
    return cls(opcode, mods, guard, tuple(operands))


def names(regs) -> list[str]:
    return [x.name for x in regs]


# --- registry and class hygiene -------------------------------------------------------

def our_classes() -> dict[str, type[Instruction]]:
    all_opcodes()
    return {op: cls for op, cls in REGISTRY.items()
            if cls.__module__.removeprefix(PACKAGE) in FAMILIES}


def test_registers_exactly_our_opcodes():
    assert sorted(our_classes()) == OURS


@pytest.mark.parametrize("opcode", OURS)
def test_class_hygiene(opcode):
    cls = our_classes()[opcode]
    assert cls.__doc__ and cls.__doc__.strip(), f"{cls.__name__} has no docstring"
    assert opcode.split(".")[0] in cls.__doc__, cls.__name__
    assert cls.__dict__.get("__slots__") == (), f"{cls.__name__} lacks __slots__ = ()"
    assert cls.allowed_mods is not None
    assert all("." not in m for m in cls.allowed_mods), cls.__name__
    lo, hi = cls.arity
    assert 0 <= lo and (hi is None or lo <= hi)
    assert cls.n_dests <= lo or cls.n_dests == 0 or opcode in ("call",)


def test_every_class_in_our_modules_has_slots_and_docstring():
    import importlib
    import inspect
    for fam in FAMILIES:
        mod = importlib.import_module(PACKAGE + fam)
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ != mod.__name__ or not issubclass(cls, Instruction):
                continue
            assert cls.__dict__.get("__slots__") == (), cls.__name__
            assert cls.__doc__, cls.__name__


# --- resolution ------------------------------------------------------------------------

RESOLVE = [
    ("ld.global.nc.L1::evict_last.v4.f32", "ld", ("global", "nc", "L1::evict_last", "v4", "f32")),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32", "st.async", None),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
     "cp.async.bulk.tensor", None),
    ("cp.async.bulk.prefetch.tensor.2d.L2.global.tile", "cp.async.bulk.prefetch.tensor", None),
    ("cp.async.bulk.prefetch.L2.global", "cp.async.bulk.prefetch", None),
    ("cp.async.ca.shared.global", "cp.async", ("ca", "shared", "global")),
    ("cp.async.mbarrier.arrive.noinc.shared.b64", "cp.async.mbarrier.arrive", None),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32", "cp.reduce.async.bulk", None),
    ("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64", "mbarrier.arrive", None),
    ("mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.try_wait", None),
    ("bar.warp.sync", "bar.warp.sync", ()),
    ("barrier.cluster.arrive.release.aligned", "barrier.cluster", ("arrive", "release", "aligned")),
    ("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster", "fence.proxy", None),
    ("fence.mbarrier_init.release.cluster", "fence", None),
    ("match.any.sync.b32", "match", ("any", "sync", "b32")),
    ("vote.ballot.sync.b32", "vote", ("ballot", "sync", "b32")),
    ("vote.sync.ballot.b32", "vote.sync", ("ballot", "b32")),
    ("redux.add.sync.u32", "redux", ("add", "sync", "u32")),
    ("multimem.st.async.release.gpu.global.u32", "multimem.st", None),
    ("multimem.cp.async.bulk.global.shared::cta.bulk_group", "multimem.cp.async.bulk", None),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",
     "mma.sp::ordered_metadata", None),
    ("mma.sync.aligned.sp.m16n8k32.row.col.f32.f16.f16.f32", "mma", None),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16", "wgmma.mma_async.sp", None),
    ("tcgen05.wait::ld.sync.aligned", "tcgen05.wait::ld", ("sync", "aligned")),
    ("tcgen05.fence::after_thread_sync", "tcgen05.fence::after_thread_sync", ()),
    ("tcgen05.mma.ws.sp.cta_group::1.kind::i8", "tcgen05.mma.ws.sp", None),
    ("tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32", "tcgen05.ld", None),
    ("clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128",
     "clusterlaunchcontrol.query_cancel", None),
    ("applypriority.async.bulk.global.bulk_group.L2::evict_normal", "applypriority", None),
]


@pytest.mark.parametrize("full,opcode,mods", RESOLVE)
def test_resolve(full, opcode, mods):
    cls, got, got_mods = resolve(full)
    assert got == opcode
    if mods is not None:
        assert got_mods == mods
    assert all(m in cls.allowed_mods for m in got_mods), [m for m in got_mods
                                                         if m not in cls.allowed_mods]


# --- memory accesses ---------------------------------------------------------------------

# (full opcode, operands, access_kind, address_index, access_bytes, space, vector_width)
ACCESSES = [
    ("ld.global.v4.f32", (vec("%f1", "%f2", "%f3", "%f4"), addr("%rd1", 16)),
     "load", 1, 16, "global", 4),
    ("ld.global.nc.L1::no_allocate.v2.f64", (vec("%fd1", "%fd2"), addr("%rd1")),
     "load", 1, 16, "global", 2),
    ("ld.shared::cluster.u32", (r("%r1"), addr("%r2")), "load", 1, 4, "shared", 1),
    ("ld.param.u64", (r("%rd1"), addr("param0")), "load", 1, 8, "param", 1),
    ("ld.u8", (r("%rs1"), addr("%rd1")), "load", 1, 1, "generic", 1),
    ("ld.global.b128", (r("%q1"), addr("%rd1")), "load", 1, 16, "global", 1),
    ("ld.global.L2::evict_last.v8.f32", (vec(*[f"%f{i}" for i in range(8)]), addr("%rd1")),
     "load", 1, 32, "global", 8),
    ("ldu.global.v2.f32", (vec("%f1", "%f2"), addr("%rd1")), "load", 1, 8, "global", 2),
    ("st.shared.b32", (addr("%r1", 4), r("%r2")), "store", 0, 4, "shared", 1),
    ("st.global.v4.s32", (addr("%rd1"), vec("%r1", "%r2", "%r3", "%r4")),
     "store", 0, 16, "global", 4),
    ("st.local.f64", (addr("%rd1"), r("%fd1")), "store", 0, 8, "local", 1),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b64",
     (addr("%r1"), vec("%rd1", "%rd2"), addr("%r3")), "store", 0, 16, "shared", 2),
    ("st.bulk.weak.shared::cta", (addr("%r1"), imm(256), imm(0)), "store", 0, 256, "shared", 1),
    ("atom.global.add.u32", (r("%r1"), addr("%rd1"), imm(1)), "atomic", 1, 4, "global", 1),
    ("atom.shared.cas.b64", (r("%rd1"), addr("%r1"), r("%rd2"), r("%rd3")),
     "atomic", 1, 8, "shared", 1),
    ("atom.global.v4.f32.add", (vec("%f1", "%f2", "%f3", "%f4"), addr("%rd1"),
                                vec("%f5", "%f6", "%f7", "%f8")), "atomic", 1, 16, "global", 4),
    ("atom.add.noftz.f16x2", (r("%r1"), addr("%rd1"), r("%r2")), "atomic", 1, 4, "generic", 1),
    ("red.global.add.f64", (addr("%rd1"), r("%fd1")), "reduce", 0, 8, "global", 1),
    ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u64",
     (addr("%r1"), r("%rd1"), addr("%r2")), "reduce", 0, 8, "shared", 1),
    ("multimem.ld_reduce.relaxed.gpu.global.add.v4.f32",
     (vec("%f1", "%f2", "%f3", "%f4"), addr("%rd1")), "load", 1, 16, "global", 4),
    ("multimem.red.release.sys.global.add.u64", (addr("%rd1"), r("%rd2")),
     "reduce", 0, 8, "global", 1),
    ("prefetch.global.L2::evict_last", (addr("%rd1"),), "prefetch", 0, 0, "global", 1),
    ("discard.global.L2", (addr("%rd1"), imm(128)), "store", 0, 128, "global", 1),
    ("mbarrier.init.shared::cta.b64", (addr("bar"), imm(32)), "store", 0, 8, "shared", 1),
    ("mbarrier.try_wait.parity.shared::cta.b64", (r("%p1"), addr("bar"), r("%r1")),
     "load", 1, 8, "shared", 1),
    ("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64", (Sink(), addr("bar"), imm(16)),
     "atomic", 1, 8, "shared", 1),
    ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", (vec("%r1", "%r2", "%r3", "%r4"),
                                                         addr("%r5")), "load", 1, 16, "shared", 1),
    ("stmatrix.sync.aligned.m8n8.x2.shared.b16", (addr("%r5"), vec("%r1", "%r2")),
     "store", 0, 16, "shared", 1),
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16",
     (vec(*[f"%r{i}" for i in range(8)]), addr("%rd1"), imm(16)), "load", 1, 32, "global", 1),
    ("wmma.store.d.sync.aligned.row.m8n8k4.f64",
     (addr("%rd1"), vec("%fd1", "%fd2"), imm(8)), "store", 0, 16, "generic", 1),
    ("tcgen05.ld.sync.aligned.32x32b.x4.b32", (vec("%r1", "%r2", "%r3", "%r4"), addr("%r5")),
     "load", 1, 16, "tmem", 1),
    ("tcgen05.st.sync.aligned.16x64b.x2.b32", (addr("%r5"), vec("%r1", "%r2")),
     "store", 0, 8, "tmem", 1),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", (addr("%r1"), imm(32)),
     "store", 0, 4, "shared", 1),
    ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64", (addr("%r1"),),
     "atomic", 0, 8, "shared", 1),
    ("tex.2d.v4.f32.f32", (vec("%f1", "%f2", "%f3", "%f4"),
                           Bracketed((Symbol("tex0"), vec("%f5", "%f6")))),
     "load", 1, 16, "tex", 4),
    ("suld.b.2d.v2.b32.trap", (vec("%r1", "%r2"), Bracketed((Symbol("surf"), vec("%r3", "%r4")))),
     "load", 1, 8, "surf", 2),
    ("sust.b.1d.b8.trap", (Bracketed((Symbol("surf"), vec("%r3"))), r("%rs1")),
     "store", 0, 1, "surf", 1),
    ("sured.b.add.2d.u32.trap", (Bracketed((Symbol("surf"), vec("%r1", "%r2"))), r("%r3")),
     "reduce", 0, 4, "surf", 1),
    ("tensormap.replace.tile.global_address.shared::cta.b1024.b64", (addr("%r1"), r("%rd1")),
     "store", 0, 8, "shared", 1),
]


@pytest.mark.parametrize("full,ops,kind,index,nbytes,space,width", ACCESSES)
def test_memory_access(full, ops, kind, index, nbytes, space, width):
    inst = make(full, *ops)
    assert isinstance(inst, MemoryAccess)
    assert inst.access_kind == kind
    assert inst.address_index == index
    assert inst.address is ops[index]
    assert inst.access_bytes == nbytes
    assert inst.space == space
    assert inst.vector_width == width


def test_ld_defs_and_uses():
    inst = make("ld.global.nc.v4.f32", vec("%f1", "_", "%f3", "%f4"), addr("%rd7", 8),
                guard=Guard(r("%p1"), negated=True))
    assert inst.non_coherent
    assert names(inst.defs) == ["%f1", "%f3", "%f4"]
    assert names(inst.uses) == ["%p1", "%rd7"]
    assert inst.semantics == "weak" and inst.scope is None


def test_st_uses_value_and_base():
    inst = make("st.release.gpu.global.u32", addr("%rd1"), r("%r9"))
    assert inst.defs == [] and inst.dests == ()
    assert names(inst.uses) == ["%rd1", "%r9"]
    assert (inst.semantics, inst.scope) == ("release", "gpu")
    assert inst.is_store and not inst.is_load


def test_cache_policy_operand():
    inst = make("ld.global.L2::cache_hint.b64", r("%rd1"), addr("%rd2"), r("%rd3"))
    assert inst.cache_policy == r("%rd3")
    assert make("ld.global.b64", r("%rd1"), addr("%rd2")).cache_policy is None


def test_atom_operands():
    cas = make("atom.global.cas.b32", r("%r1"), addr("%rd1"), r("%r2"), r("%r3"))
    assert (cas.op, cas.compare, cas.value) == ("cas", r("%r2"), r("%r3"))
    assert (cas.semantics, cas.scope) == ("relaxed", "gpu")
    add = make("atom.acquire.sys.global.add.u64", r("%rd1"), addr("%rd2"), imm(1))
    assert (add.op, add.compare, add.value) == ("add", None, imm(1))
    assert (add.semantics, add.scope) == ("acquire", "sys")
    assert add.is_load and add.is_store and names(add.defs) == ["%rd1"]


def test_cp_async_addresses_and_size():
    inst = make("cp.async.ca.shared.global", addr("%r1"), addr("%rd1", 4), imm(8))
    assert inst.address_index == 0
    assert inst.dst_address == addr("%r1") and inst.src_address == addr("%rd1", 4)
    assert (inst.dst_space, inst.src_space, inst.space) == ("shared", "global", "shared")
    assert inst.copy_size == 8 and inst.access_bytes == 8
    assert inst.src_size is None and inst.cache_policy is None
    zfill = make("cp.async.cg.shared.global.L2::cache_hint", addr("%r1"), addr("%rd1"), imm(16),
                 r("%r2"), r("%rd9"))
    assert zfill.src_size == r("%r2") and zfill.cache_policy == r("%rd9")
    assert zfill.access_bytes == 16
    assert names(zfill.uses) == ["%r1", "%rd1", "%r2", "%rd9"]


def test_bulk_copies():
    bulk = make("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
                addr("%r1"), addr("%rd1"), r("%r2"), addr("%r3"))
    assert bulk.size == r("%r2") and bulk.access_bytes == 0
    assert bulk.mbarrier == addr("%r3")
    assert (bulk.dst_space, bulk.src_space) == ("shared::cluster", "global")
    tile = Bracketed((r("%rd1"), vec("%r2", "%r3")))
    tensor = make("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                  addr("%r1"), tile, addr("%r4"))
    assert tensor.dst_address == addr("%r1") and tensor.src_address is tile
    assert tensor.tensor_map == r("%rd1") and tensor.access_bytes == 0
    store = make("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", tile, addr("%r4"))
    assert store.dst_address is tile and store.src_address == addr("%r4")
    assert store.dst_space == "global"
    wait = make("cp.async.bulk.wait_group.read", imm(0))
    assert wait.pending == 0
    masked = make("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.cp_mask",
                  addr("%rd1"), addr("%r1"), imm(64), r("%rd9"), r("%rs1"))
    assert masked.cache_policy == r("%rd9") and masked.access_bytes == 64


def test_fabric_transfers():
    remote = Bracketed((r("%r1"), r("%rd1")))
    put = make("fabric.try_put.async.shared::cta.mbarrier::complete_tx::16B"
               ".mbarrier::report::fabric.relaxed.sys.b128", remote, addr("%r2"), r("%r3"),
               addr("%r4"))
    assert put.address == addr("%r2") and put.space == "shared"
    assert (put.dst_address, put.src_address) == (remote, addr("%r2"))
    assert (put.dst_space, put.src_space) == ("fabric", "shared::cta")
    assert put.mbarrier == addr("%r4")
    get = make("fabric.try_get.async.shared::cta.mbarrier::complete_tx::bytes"
               ".mbarrier::report::fabric.relaxed.sys.b128", addr("%r2"), remote, r("%r3"),
               addr("%r4"))
    assert get.address == addr("%r2") and (get.dst_space, get.src_space) == ("shared::cta", "fabric")


# --- synchronisation ---------------------------------------------------------------------

def test_cta_barriers():
    sync = make("bar.sync", imm(0))
    assert isinstance(sync, Barrier) and sync.waits and sync.is_aligned
    assert sync.barrier_id == imm(0) and sync.thread_count is None and sync.dests == ()
    arrive = make("bar.arrive", imm(1), imm(64))
    assert not arrive.waits and arrive.thread_count == imm(64)
    red = make("bar.red.popc.u32", r("%r1"), imm(0), Negated(r("%p1")))
    assert names(red.defs) == ["%r1"] and names(red.uses) == ["%p1"]
    assert red.barrier_id == imm(0) and red.thread_count is None
    unaligned = make("barrier.sync", imm(0), imm(128))
    assert not unaligned.is_aligned and unaligned.thread_count == imm(128)
    assert make("barrier.sync.aligned", imm(0)).is_aligned


def test_cluster_barrier_and_fences():
    arrive = make("barrier.cluster.arrive.release.aligned")
    assert not arrive.waits and arrive.is_aligned and arrive.semantics == "release"
    wait = make("barrier.cluster.wait")
    assert wait.waits and not wait.is_aligned
    fence = make("fence.sc.cta")
    assert (fence.semantics, fence.scope) == ("sc", "cta")
    assert make("fence.gpu").semantics == "acq_rel"
    proxy = make("fence.proxy.async.shared::cta")
    assert proxy.space == "shared"


def test_warp_level():
    vote = make("vote.sync.ballot.b32", r("%r1"), Negated(r("%p1")), imm(-1))
    assert names(vote.defs) == ["%r1"] and names(vote.uses) == ["%p1"]
    elect = make("elect.sync", PredicatePair(Sink(), r("%p2")), imm(-1))
    assert names(elect.defs) == ["%p2"]
    assert make("setmaxnreg.inc.sync.aligned.u32", imm(232)).register_count == 232
    assert make("cp.async.wait_group", imm(1)).pending == 1


# --- control flow ------------------------------------------------------------------------

def test_branches():
    bra = make("bra.uni", Symbol("$L__BB0_2"))
    assert isinstance(bra, Branch) and bra.is_uniform and bra.targets == ["$L__BB0_2"]
    cond = make("bra", Symbol("L1"), guard=Guard(r("%p1")))
    assert not cond.is_uniform and names(cond.uses) == ["%p1"]
    brx = make("brx.idx", r("%r1"), Symbol("ts"))
    assert isinstance(brx, Branch) and brx.target_list == "ts" and brx.targets == []
    assert brx.index == r("%r1") and names(brx.uses) == ["%r1"]
    resolved = make("brx.idx.uni", r("%r1"), Vector((Symbol("L0"), Symbol("L1"))))
    assert resolved.targets == ["L0", "L1"] and resolved.is_uniform


def test_call_and_terminators():
    call = make("call.uni", ParenList((r("%rv"),)), Symbol("f"), ParenList((r("%a"), r("%b"))))
    assert isinstance(call, Call) and not call.is_indirect
    assert names(call.defs) == ["%rv"] and names(call.uses) == ["%a", "%b"]
    indirect = make("call", r("%rd1"), ParenList((r("%a"),)), Symbol("proto"))
    assert indirect.is_indirect and names(indirect.uses) == ["%rd1", "%a"]
    for op in ("ret", "exit", "trap"):
        assert isinstance(make(op), Terminator)
    assert not isinstance(make("brkpt"), Terminator)


# --- tensor cores and texture ------------------------------------------------------------

def test_mma_family():
    mma = make("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", vec("%f1", "%f2", "%f3", "%f4"),
               vec("%r1", "%r2", "%r3", "%r4"), vec("%r5", "%r6"), vec("%f5", "%f6", "%f7", "%f8"))
    assert mma.shape == "m16n8k16" and not mma.is_sparse
    assert len(mma.defs) == 4 and len(mma.uses) == 10
    sp = make("mma.sync.aligned.sp.m16n8k32.row.col.f32.f16.f16.f32", vec("%f1"), vec("%r1"),
              vec("%r2"), vec("%f2"), r("%r9"), imm(0))
    assert sp.is_sparse
    wg = make("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", vec("%f1", "%f2"),
              r("%rd1"), r("%rd2"), imm(1), imm(1), imm(1), imm(0), imm(0))
    assert names(wg.defs) == ["%f1", "%f2"]
    assert set(names(wg.uses)) == {"%rd1", "%rd2", "%f1", "%f2"}


def test_tcgen05_ld_red_writes_two_operands():
    inst = make("tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32", vec("%f1", "%f2"), r("%f3"),
                addr("%r4"))
    assert names(inst.defs) == ["%f1", "%f2", "%f3"]
    assert inst.address_index == 2 and inst.address == addr("%r4")
    assert names(inst.uses) == ["%r4"] and inst.access_bytes == 8


def test_texture_handle_and_coordinates():
    coords = vec("%f5", "%f6")
    inst = make("tex.2d.v4.f32.f32", vec("%f1", "%f2", "%f3", "%f4"),
                Bracketed((Symbol("tex0"), Symbol("smp"), coords)))
    assert inst.handle == Symbol("tex0") and inst.coordinates is coords
    assert names(inst.uses) == ["%f5", "%f6"]
    txq = make("txq.level.width.b32", r("%r1"), addr("tex0"), r("%r2"))
    assert not isinstance(txq, MemoryAccess)


# --- real PTX ----------------------------------------------------------------------------

# Full opcodes ptxas 13.0 (PTX ISA 9.0) assembles, or that nvcc/CCCL emit.
REAL = """
ld.global.nc.L1::no_allocate.L2::256B.v4.f32 ld.global.L1::evict_last.L2::cache_hint.u32
ld.mmio.relaxed.sys.global.u32 ld.volatile.shared::cta.u32 ld.param::entry.u64 ld.acquire.gpu.b32
st.global.L1::no_allocate.L2::cache_hint.v2.f32 st.relaxed.sys.shared::cluster.u32 st.global.wt.v4.f32
st.async.release.gpu.global.u32 st.bulk.weak.shared::cta ldu.global.v4.f32
atom.global.v8.f16.max.noftz atom.global.add.L2::cache_hint.s32 atom.shared::cluster.cas.b32
atom.acq_rel.sys.global.exch.b64 atom.global.cas.b16 atom.relaxed.global.cas.b64
red.global.v2.f16x2.max.noftz red.shared::cluster.max.u32 red.global.add.noftz.bf16x2
red.async.release.gpu.global.add.u32
cp.async.ca.shared::cta.global.L2::cache_hint.L2::128B cp.async.mbarrier.arrive.noinc.shared::cta.b64
cp.async.bulk.prefetch.L2.global.L2::cache_hint cp.async.bulk.global.shared::cta.bulk_group.cp_mask
cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint
cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16
cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.inc.u32
cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes
cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes.cta_group::1
cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes
cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group
tensormap.replace.tile.global_address.shared::cta.b1024.b64
tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned
multimem.ld_reduce.add.acc::f32.v2.f16x2 multimem.ld_reduce.relaxed.cta.min.v2.e4m3x2
multimem.st.relaxed.gpu.v4.f32 multimem.red.release.sys.global.add.v4.f32
mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 mbarrier.try_wait.relaxed.cluster.shared::cta.b64
mbarrier.arrive.relaxed.cluster.shared::cluster.b64 mbarrier.arrive_drop.noComplete.release.cta.shared::cta.b64
mbarrier.arrive.noComplete.shared.b64 mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64
mbarrier.pending_count.b64 mbarrier.inval.shared::cta.b64 mbarrier.expect_tx.relaxed.cta.shared::cta.b64
fence.proxy.tensormap::generic.acquire.gpu fence.acquire.sync_restrict::shared::cluster.cluster
fence.proxy.async.global membar.proxy.alias barrier.cta.red.popc.aligned.u32 barrier.red.and.pred
redux.sync.max.abs.NaN.f32 match.sync.any.b32 vote.any.sync.pred
clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128
createpolicy.range.global.L2::evict_last.L2::evict_first.b64 createpolicy.cvt.L2.b64
prefetch.param.tensormap prefetchu.L1 isspacep.shared::cluster cvta.to.shared::cluster.u64
applypriority.global.L2::evict_normal discard.global.L2 alloca.u64 stacksave.u64 pmevent.mask
tex.base.2d.v4.f32.f32 tex.1d.v2.f16x2.f32 tex.grad.2d.v4.f32.f32 tld4.a.cube.v4.f32.f32
txq.level.width.b32 txq.force_unnormalized_coords.b32 suq.memory_layout.b32 istypep.texref
suld.b.3d.cs.v2.b64.trap sust.p.2d.v4.b32.clamp sust.b.2d.wt.b32.zero sured.p.and.1d.b32.trap
mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64.rn
mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32
wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64.rn wmma.load.c.sync.aligned.row.m8n8k4.f64
ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8
stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 movmatrix.sync.aligned.m8n8.trans.b16
wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8.satfinite
wgmma.mma_async.sync.aligned.sp.m64n8k32.f32.f16.f16 wgmma.wait_group.sync.aligned
tcgen05.ld.sync.aligned.16x32bx2.x1.pack::16b.b32 tcgen05.st.sync.aligned.16x64b.x1.unpack::16b.b32
tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.abs.f32 tcgen05.ld.red.sync.aligned.32x32b.x2.u32.max
tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64
tcgen05.cp.cta_group::1.64x128b.warpx2::02_13.b8x16.b6x16_p32 tcgen05.shift.cta_group::1.down
tcgen05.mma.cta_group::1.kind::tf32.ashift.collector::a::lastuse tcgen05.mma.cta_group::1.sp.kind::f16
tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::fill tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16
tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X tcgen05.dealloc.cta_group::2.sync.aligned.b32
tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
vmad.s32.s32.u32.po.sat.shr7 vset.s32.u32.lt.add vshl.u32.u32.u32.clamp.add vavrg4.u32.u32.u32.add
vset2.u32.u32.ne vabsdiff4.u32.u32.u32.sat
""".split()


@pytest.mark.parametrize("full", REAL)
def test_real_forms_are_accepted(full):
    cls, _, mods = resolve(full)
    assert cls.__module__.removeprefix(PACKAGE) in FAMILIES, full
    assert [m for m in mods if m not in cls.allowed_mods] == []


def test_rejects_what_ptxas_rejects():
    for full, bad in [("ld.global.f16", "f16"), ("red.global.acquire.sys.add.u32", "acquire"),
                      ("fence.proxy.generic::async.release.cluster", "generic::async")]:
        cls, _, mods = resolve(full)
        assert bad in mods and bad not in cls.allowed_mods


def seen_opcodes() -> list[str]:
    """Every opcode-shaped word of ptx_samples/opcodes_seen.txt (both of its tables,
    examples included); file names and counts are skipped."""
    path = ROOT / "ptx_samples" / "opcodes_seen.txt"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue
        out.extend(w for w in line.split()
                   if re.fullmatch(r"[a-z][a-z0-9_]*(\.[A-Za-z0-9_:]+)*", w)
                   and not w.endswith(".ptx"))
    return out


def test_opcodes_seen_modifiers_allowed():
    seen = seen_opcodes()
    if not seen:
        pytest.skip("ptx_samples/opcodes_seen.txt is absent")
    problems = {}
    for full in seen:
        hit = resolve(full)
        if hit is None:
            continue
        cls, opcode, mods = hit
        if cls.__module__.removeprefix(PACKAGE) not in FAMILIES:
            continue
        bad = [m for m in mods if m not in cls.allowed_mods]
        if bad:
            problems[full] = bad
    assert problems == {}


def test_texture_fetch_with_residency_predicate():
    inst = make("tex.2d.v4.f32.f32", PredicatePair(vec("%f1", "%f2", "%f3", "%f4"), r("%p1")),
                Bracketed((Symbol("tex0"), vec("%f5", "%f6"))))
    assert names(inst.defs) == ["%f1", "%f2", "%f3", "%f4", "%p1"]
    assert names(inst.uses) == ["%f5", "%f6"]


def test_every_registered_opcode_is_documented():
    doc = (ROOT / "docs" / "ptx-opcodes.md").read_text()
    missing = [op for op in all_opcodes() if f"`{op}`" not in doc]
    assert missing == []
