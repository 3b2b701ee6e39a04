"""Transfer functions for memory, synchronisation, warp collectives, textures, tensor
cores and control: what they do to registers and `.param` cells.

Loads. Memory contents are not tracked, except `.param` cells (kernel parameters from
the launch, call arguments and results written by `st.param`). Any other load gives an
unknown value that is *uniform iff the address is*: the lanes reading one address in
one instruction read one value. Exceptions are the per-thread spaces, where one address
names a different location in every thread: `.local`, and `.param` except a kernel's
own parameters. A generic address of unknown origin may point into `.local` only if
the module turns a local address into a generic one (`cvta.local`).

`.param` cells are keyed `(name, byte offset)`: a value sits at its first byte and
`CONTINUED` marks its other bytes. A store drops the older values it overlaps; a load
takes the value at its offset, re-read at its own width, when no other value starts
inside the bytes it reads (reading past a narrower value reads uninitialised bytes,
which is not reported).

Instructions with no register effect (fences, barriers, prefetches, async copies,
stores outside `.param`) still get a transfer function, so the unmodelled-instruction
note only names what the analysis really does not know. `call` is the worklist's.
"""
from __future__ import annotations

import weakref

from ...domains.affine import Affine
from ...domains.align import Congruence
from ...domains.lattice import Tri
from ...domains.space import Region
from ...domains.state import State
from ...domains.strided import StridedInterval as SI
from ...domains.value import TOP, Value, tri_of, uniform_result
from ...ir.instruction import Instruction
from ...ir.instructions import async_copy as ac
from ...ir.instructions import atomic, control, memory, misc, sync, tensor, texture
from ...ir.module import Module
from ...ir.operands import (Address, Negated, Operand, PredicatePair, Register, Sink, Vector,
                           registers_in)
from ...ir.types import DataType, Kind
from ..context import Ctx
from .table import address_value, transfers, value_of

_BOOL = SI.range(0, 1)


# ---- writing destinations ------------------------------------------------------------------
def write(op: Operand, value: Value, s: State) -> None:
    """Write a destination; a selector (`%r1.h0`, `%v.x`) writes part of the register,
    so the register keeps what the rest of it held (a join, hence sound)."""
    if isinstance(op, Register):
        part = "." in op.name and not op.is_special
        s.assign(op.key, s[op.key].join(value) if part else value)
    elif isinstance(op, Vector):
        for e in op.elements:
            write(e, value, s)
    elif isinstance(op, PredicatePair):
        write(op.first, value, s)
        write(op.second, value, s)


def write_defs(insn: Instruction, value: Value, s: State) -> None:
    for op in insn.dests:
        write(op, value, s)


def type_range(t: DataType | None) -> SI:
    """The values a register of type `t` holds (bit patterns for floats)."""
    if t is None or t.kind is Kind.OPAQUE:
        return SI.top()
    if t.kind is Kind.PRED:
        return _BOOL
    return SI.full(t.bits, t.is_signed)


def sources_uniform(insn: Instruction, s: State) -> bool:
    """Every register the instruction reads (guard aside) is the same in all lanes."""
    regs = [r for op in insn.sources for r in registers_in(op)]
    regs += [r for op in insn.dests for r in registers_in(op) if "." in r.name]
    return all(s[r.key].is_uniform for r in regs if not isinstance(r, Sink))


def truth(op: Operand, s: State, ctx: Ctx) -> tuple[Tri, bool]:
    """A predicate source (`%p` or `!%p`): its truth and whether it is uniform."""
    if isinstance(op, Negated):
        v = s[op.operand.key]
        return tri_of(v).negate(), v.is_uniform
    v = value_of(op, s, ctx)
    return tri_of(v), v.is_uniform


def of_truth(t: Tri, uniform: bool) -> Value:
    if t is Tri.MAYBE:
        return Value.of_set(_BOOL, uniform)
    return Value.const(1 if t is Tri.TRUE else 0)


# ---- per-thread memory ---------------------------------------------------------------------
_LOCAL_GENERIC: "weakref.WeakKeyDictionary[Module, bool]" = weakref.WeakKeyDictionary()


def module_makes_local_generic(module: Module) -> bool:
    """Some function converts a `.local` address to a generic one (`cvta.local`)."""
    hit = _LOCAL_GENERIC.get(module)
    if hit is None:
        hit = any(isinstance(i, memory.Cvta) and i.to_generic and i.space == "local"
                  for f in module.functions for i in f.instructions)
        _LOCAL_GENERIC[module] = hit
    return hit


def is_kernel_param(obj: str | None, ctx: Ctx) -> bool:
    fn = ctx.function
    return fn.is_entry and any(p.name == obj for p in fn.params)


def per_thread(address: Value, space: str, ctx: Ctx) -> bool:
    """One address may name a different location in each thread."""
    r = address.region
    if r is not None:
        space = r.space
    elif space == "generic":
        return module_makes_local_generic(ctx.module)
    if space == "local":
        return True
    return space == "param" and not (r is not None and is_kernel_param(r.obj, ctx))


# ---- .param cells ----------------------------------------------------------------------------
# The bytes after the first of a stored value hold CONTINUED, so a later store can find
# (and drop) an older value it partly overwrites. Cells written without them (kernel
# parameters, which are never stored to) are taken to be as wide as their reads.
CONTINUED = Value(SI.const(0), Affine.const(0), Congruence.const(0),
                  Region("param", "(continued)"))


def read_cell(s: State, obj: str, off: int, size: int) -> Value | None:
    """The value stored at `off` if it covers the `size` bytes read."""
    v = s.params.get((obj, off))
    if v is None or v == CONTINUED:
        return None
    for o in range(off + 1, off + size):
        inner = s.params.get((obj, o))
        if inner is not None and inner != CONTINUED:
            return None  # another value starts inside the bytes read
    return v


def write_cell(s: State, obj: str, off: int, size: int, value: Value) -> None:
    """Store `size` bytes at `off`, dropping every older value they overlap."""
    start = off
    while s.params.get((obj, start)) == CONTINUED:
        start -= 1  # an older value begins before `off`
    end = off + size
    while s.params.get((obj, end)) == CONTINUED:
        end += 1  # an older value inside runs past the new one
    for o in range(start, end):
        s.params.pop((obj, o), None)
    s.params[(obj, off)] = value
    for o in range(off + 1, off + size):
        s.params[(obj, o)] = CONTINUED


def at_width(v: Value, bits: int, signed: bool | None, ctx: Ctx) -> Value:
    """A cell's value read (in the `signed` view) or written (`signed=None`: either
    view) at `bits`; a narrower access keeps the low bits."""
    if v.region is not None:
        return v if bits >= ctx.module.address_size else uniform_result(SI.full(bits), v)
    views = (False, True) if signed is None else (signed,)
    if any(v.si.fits(bits, view) for view in views):
        return v
    return uniform_result(v.si.wrap(bits, bool(signed)), v)


def loaded(a: Value, extra: int, t: DataType, space: str, s: State, ctx: Ctx) -> Value:
    """The value one element of a load reads, `extra` bytes past address `a`."""
    r = a.region
    off = a.singleton()
    if r is not None and r.space == "param" and r.obj is not None and off is not None:
        cell = read_cell(s, r.obj, off + extra, t.bytes)
        if cell is not None:
            return at_width(cell, t.bits, t.is_signed, ctx)
    uniform = a.is_uniform and not per_thread(a, space, ctx)
    return unknown_of(t, uniform)


_UNKNOWN: dict[tuple[DataType, bool], Value] = {}


def unknown_of(t: DataType | None, uniform: bool) -> Value:
    """Any value of type `t`, the same in every lane when `uniform` (what a load
    from untracked memory gives; remembered, loads are many and types few)."""
    hit = _UNKNOWN.get((t, uniform))
    if hit is None:
        hit = _UNKNOWN[(t, uniform)] = Value.of_set(type_range(t), uniform)
    return hit


@transfers(memory.Ld, memory.Ldu, memory.MultimemLdReduce)
def load(insn: memory.Ld, s: State, ctx: Ctx) -> None:
    addr, t = insn.address, insn.type
    if not isinstance(addr, Address) or t is None:
        write_defs(insn, TOP, s)
        return
    a = address_value(addr, s, ctx)
    dest = insn.operands[0]
    elements = dest.elements if isinstance(dest, Vector) else (dest,)
    values = [loaded(a, k * t.bytes, t, insn.space, s, ctx) for k in range(len(elements))]
    for e, v in zip(elements, values):
        write(e, v, s)


@transfers(memory.St)
def store(insn: memory.St, s: State, ctx: Ctx) -> None:
    """Only `.param` stores matter: they build call arguments (and results)."""
    addr, t = insn.address, insn.type
    if not isinstance(addr, Address) or t is None or len(insn.operands) < 2 \
            or insn.space not in ("param", "generic"):  # `st.global` writes no cell
        return
    a = address_value(addr, s, ctx)
    r = a.region
    if (r.space if r is not None else insn.space) != "param":
        return
    off = a.singleton()
    if r is None or r.obj is None:  # somewhere in .param: any call cell may change
        for key in [k for k in s.params if not is_kernel_param(k[0], ctx)]:
            del s.params[key]
        return
    if off is None:
        for key in [k for k in s.params if k[0] == r.obj]:
            del s.params[key]
        return
    src = insn.operands[1]
    elements = src.elements if isinstance(src, Vector) else (src,)
    for k, e in enumerate(elements):
        v = at_width(value_of(e, s, ctx, t.bits), t.bits, None, ctx)
        write_cell(s, r.obj, off + k * t.bytes, t.bytes, v)


# ---- address spaces ---------------------------------------------------------------------------
def rebased(v: Value, region: Region, ctx: Ctx) -> Value:
    """A plain number moved into a window of `region.space`: global and generic
    addresses coincide; other windows move by an unknown base, which keeps the lane
    coefficients and the alignment (window bases are at least 512-byte aligned; a
    pointer into an object brings the object's own alignment, as `absolute` says)."""
    obj = v.region.obj if v.region is not None else None
    v = v.numeric() if obj is None else v.absolute(None, ctx.object_align(obj))
    if region.space == "global":
        return Value(v.si, v.aff, v.cong, region)
    aff = v.aff if v.aff.is_top else Affine(SI.top(), v.aff.coeffs)
    return Value(SI.top(), aff, v.cong, region)


@transfers(memory.Cvta)
def cvta(insn: memory.Cvta, s: State, ctx: Ctx) -> None:
    """`cvta.shared` (window -> generic) and `cvta.to.global` (generic -> window) keep
    the object and the offset; anything else keeps only what survives a new base."""
    if len(insn.operands) < 2:
        write_defs(insn, TOP, s)
        return
    v = value_of(insn.operands[1], s, ctx)
    space, generic = insn.space, insn.to_generic
    r = v.region
    if r is not None and r.space == space and r.generic != generic:
        out = Value(v.si, v.aff, v.cong, Region(space, r.obj, generic))
    else:
        out = rebased(v, Region(space, None, generic), ctx)
    write(insn.operands[0], out, s)


@transfers(memory.Isspacep)
def isspacep(insn: memory.Isspacep, s: State, ctx: Ctx) -> None:
    v = value_of(insn.operands[1], s, ctx) if len(insn.operands) > 1 else TOP
    want = insn.space_mod
    r = v.region
    answer = Tri.MAYBE
    if r is not None and r.generic:
        if r.space != insn.space:
            answer = Tri.FALSE
        elif want != "param::entry" or is_kernel_param(r.obj, ctx):
            answer = Tri.TRUE  # a shared::cta address also lies in the shared::cluster window
    write_defs(insn, of_truth(answer, v.is_uniform), s)


@transfers(memory.Alloca, memory.Stacksave)
def stack_pointer(insn: Instruction, s: State, ctx: Ctx) -> None:
    """A `.local` address of this thread's stack."""
    write_defs(insn, Value(SI.top(), Affine.top(), Congruence.top(), Region("local")), s)


# ---- families by effect ---------------------------------------------------------------------
def varying_dests(insn: Instruction, s: State, ctx: Ctx) -> None:
    """Destinations (if any) become unknown and may differ between lanes."""
    write_defs(insn, TOP, s)


def uniform_if_sources(insn: Instruction, s: State, ctx: Ctx) -> None:
    """A per-lane function of its operands (or a read at one address): uniform iff
    every register it reads is."""
    si = _BOOL if isinstance(insn, texture.Istypep) else SI.top()
    write_defs(insn, Value.of_set(si, sources_uniform(insn, s)), s)


def no_effect(insn: Instruction, s: State, ctx: Ctx) -> None:
    """Control flow (the worklist follows it) and debug events."""


transfers(control.Bra, control.BrxIdx, control.Ret, control.Exit, control.Trap,
          control.Brkpt, control.Pmevent)(no_effect)
transfers(  # stores, reductions, hints and copies write no register
          memory.StAsync, memory.StBulk, memory.Prefetch, memory.Prefetchu,
          memory.ApplyPriority, memory.Discard, memory.Stackrestore, memory.MultimemSt,
          memory.MultimemRed, atomic.Red, atomic.RedAsync, ac.AsyncCopy,
          ac.CpAsyncCommitGroup, ac.CpAsyncWaitGroup, ac.CpAsyncWaitAll,
          ac.CpAsyncMbarrierArrive, ac.CpAsyncBulkCommitGroup, ac.CpAsyncBulkWaitGroup,
          ac.TensormapReplace, misc.FabricSubmit, misc.FabricWait, texture.Sust, texture.Sured,
          # fences, barriers and scheduling
          sync.BarWarpSync, sync.BarrierCluster, sync.Membar, sync.Fence, sync.FenceProxy,
          sync.Griddepcontrol, sync.Setmaxnreg, sync.Nanosleep,
          sync.ClusterlaunchcontrolTryCancel,
          # each lane gets its own old value / phase token / wait outcome
          atomic.Atom, sync.MbarrierInit, sync.MbarrierInval, sync.MbarrierArrive,
          sync.MbarrierArriveDrop, sync.MbarrierExpectTx, sync.MbarrierCompleteTx,
          sync.MbarrierTestWait, sync.MbarrierTryWait,
          # matrix fragments are spread over the lanes
          tensor.Mma, tensor.WmmaLoad, tensor.WmmaStore, tensor.Ldmatrix, tensor.Stmatrix,
          tensor.Movmatrix, tensor.WgmmaFence, tensor.WgmmaCommitGroup, tensor.WgmmaWaitGroup,
          tensor.Tcgen05Alloc, tensor.Tcgen05Dealloc, tensor.Tcgen05Relinquish,
          tensor.Tcgen05Mma, tensor.Tcgen05Cp, tensor.Tcgen05Shift, tensor.Tcgen05Ld,
          tensor.Tcgen05St, tensor.Tcgen05Wait, tensor.Tcgen05Commit,
          tensor.Tcgen05FenceBefore, tensor.Tcgen05FenceAfter)(varying_dests)
transfers(memory.CreatePolicy, memory.Mapa, memory.Getctarank,
          texture.Tex, texture.Tld4, texture.Suld, texture.Txq, texture.Suq, texture.Istypep,
          sync.MbarrierPendingCount, sync.MbarrierCheckLayout,
          sync.ClusterlaunchcontrolQueryCancel, misc.Video, misc.Spcompress,
          misc.Spdecompress)(uniform_if_sources)


# ---- warp and block collectives -------------------------------------------------------------
def mask_uniform(insn: Instruction, index: int, s: State, ctx: Ctx) -> bool:
    """The member mask is the same in every lane (deprecated forms have none): the
    lanes it names all get one result."""
    ops = insn.operands
    return index >= len(ops) or value_of(ops[index], s, ctx).is_uniform


@transfers(sync.CtaBarrier)
def cta_barrier(insn: sync.CtaBarrier, s: State, ctx: Ctx) -> None:
    """`bar.red`: one reduction over the block, the same result in every thread."""
    if "popc" in insn.mods:
        write_defs(insn, Value.of_set(SI.range(0, 1024), True), s)
    else:
        write_defs(insn, Value.of_set(_BOOL, True), s)


@transfers(sync.VoteSync, sync.Vote)
def vote(insn: Instruction, s: State, ctx: Ctx) -> None:
    if len(insn.operands) < 2:
        write_defs(insn, TOP, s)
        return
    same = mask_uniform(insn, 2, s, ctx)
    p, p_uniform = truth(insn.operands[1], s, ctx)
    if "ballot" in insn.mods:
        out = Value.const(0) if p is Tri.FALSE else Value.of_set(SI.full(32), same)
    elif "uni" in insn.mods:
        out = Value.const(1) if p_uniform else of_truth(Tri.MAYBE, same)
    else:  # all, any: every active lane holds p when it is uniform
        out = of_truth(p if p_uniform else Tri.MAYBE, same)
    write_defs(insn, out, s)


@transfers(sync.MatchSync)
def match(insn: sync.MatchSync, s: State, ctx: Ctx) -> None:
    """`match.any`: each lane's group of equal values; `match.all`: one answer."""
    if "all" not in insn.mods or len(insn.operands) < 3:
        write_defs(insn, TOP, s)
        return
    same = mask_uniform(insn, 2, s, ctx)
    equal = value_of(insn.operands[1], s, ctx).is_uniform and same
    mask = value_of(insn.operands[2], s, ctx)
    d = insn.operands[0]
    first, second = (d.first, d.second) if isinstance(d, PredicatePair) else (d, None)
    write(first, mask if equal else Value.of_set(SI.full(32), same), s)
    if second is not None:
        write(second, of_truth(Tri.TRUE if equal else Tri.MAYBE, same), s)


@transfers(sync.ReduxSync)
def redux(insn: sync.ReduxSync, s: State, ctx: Ctx) -> None:
    write_defs(insn, unknown_of(insn.type, mask_uniform(insn, 2, s, ctx)), s)


@transfers(sync.Activemask)
def activemask(insn: sync.Activemask, s: State, ctx: Ctx) -> None:
    """The lanes executing together all see the same mask, which includes themselves."""
    hi = ctx.bounds.laneid.hi
    lanes = 32 if hi is None else hi + 1
    write_defs(insn, Value.of_set(SI.range(1, (1 << lanes) - 1), True), s)


@transfers(sync.ElectSync)
def elect(insn: sync.ElectSync, s: State, ctx: Ctx) -> None:
    """`elect.sync d|p`: d is the leader's lane id (one answer), p is true in the leader."""
    d = insn.operands[0] if insn.operands else None
    same = mask_uniform(insn, 1, s, ctx)
    leader = Value.of_set(ctx.bounds.laneid, same)
    if isinstance(d, PredicatePair):
        write(d.first, leader, s)
        write(d.second, Value.of_set(_BOOL), s)
    elif d is not None:
        write(d, TOP, s)


__all__ = ["load", "store", "cvta", "isspacep", "write", "type_range", "sources_uniform",
           "per_thread", "module_makes_local_generic", "read_cell", "write_cell", "CONTINUED"]
