"""Memory instructions (PTX ISA 9.7.9): `ld ldu st` of every width and vector size in
every state space, `cvta`, `isspacep`, `cp.async` (performed at once), the cache and
prefetch hints (no-ops), `alloca/stacksave/stackrestore`.

Narrow loads into wide registers are sign- or zero-extended by the instruction type
(`ld.s8` into a `.b32` register sign-extends), as the ISA says.

An address must be a multiple of the access size, the total number of bytes the
instruction accesses (PTX ISA, "Addresses as Operands"): 16 for `ld.v4.f32`, 8 for
`ld.v2.f32`, `cp-size` for `cp.async`; a bulk copy needs 16. A misaligned access is
reported and then performed at its address (byte by byte where an element is misaligned).
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.async_copy import (
    CpAsync,
    CpAsyncBulkCommitGroup,
    CpAsyncBulkPrefetch,
    CpAsyncBulkWaitGroup,
    CpAsyncCommitGroup,
    CpAsyncWaitAll,
    CpAsyncWaitGroup,
)
from ..ir.instructions.control import Brkpt, Pmevent
from ..ir.instructions.memory import (
    Alloca,
    ApplyPriority,
    CreatePolicy,
    Cvta,
    Discard,
    Getctarank,
    Isspacep,
    Ld,
    Ldu,
    Mapa,
    Prefetch,
    Prefetchu,
    St,
    Stackrestore,
    Stacksave,
)
from ..ir.instructions.sync import (
    Fence,
    FenceProxy,
    Griddepcontrol,
    Membar,
    Nanosleep,
    Setmaxnreg,
)
from ..ir.operands import Address, Immediate, Sink
from .layout import SPACE_WINDOW, WINDOW_BITS, window_base
from .memory import gather, gather_bytes, scatter, scatter_bytes
from .operands import UINT, np_type
from .operands import elements as _elements
from .semantics import Compiler, executes

_OBSERVED = ("global", "shared", "generic", "local")


def _space(insn) -> str:
    s = insn.space
    if s == "tex":
        raise ValueError
    return s


def check_alignment(m, need: int, addr: np.ndarray, threads: np.ndarray, hits) -> None:
    """Report the lanes of `hits` (in bounds) whose address is not a multiple of `need`."""
    if need <= 1:
        return
    for h in hits:
        a = addr if h.pos is None else addr[h.pos]
        if (a % np.uint64(need)).any():
            m.obs.misaligned(m, need, a, threads if h.pos is None else threads[h.pos])


def load(m, space: str, addr: np.ndarray, threads: np.ndarray, dt: np.dtype, count: int,
         kind: str = "load", align: int | None = None) -> list[np.ndarray]:
    """Values of `count` consecutive `dt` elements at each address (0 where out of bounds);
    the addresses must be multiples of `align` (default: the access size)."""
    nbytes = dt.itemsize * count
    hits, bad, spaces = m.mem.locate(space, addr, threads, nbytes)
    m.obs.access(m, kind, nbytes, addr, threads, spaces, bad)
    check_alignment(m, nbytes if align is None else align, addr, threads, hits)
    if len(hits) == 1 and hits[0].pos is None:
        h = hits[0]
        vals = gather(h.flat, h.off, dt, count)
        return gather_bytes(h.flat, h.off, dt, count) if vals is None else vals
    out = [np.zeros(len(addr), dt) for _ in range(count)]
    for h in hits:
        vals = gather(h.flat, h.off, dt, count)
        if vals is None:
            vals = gather_bytes(h.flat, h.off, dt, count)
        for o, v in zip(out, vals):
            o[h.pos] = v
    return out


def store(m, space: str, addr: np.ndarray, threads: np.ndarray, dt: np.dtype,
          values: list, kind: str = "store", align: int | None = None) -> None:
    nbytes = dt.itemsize * len(values)
    hits, bad, spaces = m.mem.locate(space, addr, threads, nbytes)
    m.obs.access(m, kind, nbytes, addr, threads, spaces, bad)
    check_alignment(m, nbytes if align is None else align, addr, threads, hits)
    n = len(addr)
    values = [np.broadcast_to(np.asarray(v, dt), (n,)) for v in values]
    if m.obs.hazards is not None and space in ("global", "generic"):
        data = np.ascontiguousarray(np.stack(values, axis=1)).view(np.uint8).reshape(n, nbytes)
        m.obs.hazards.stored(m, space, np.asarray(addr, np.uint64), threads, nbytes, data, bad)
    for h in hits:
        vals = values if h.pos is None else [v[h.pos] for v in values]
        if not scatter(h.flat, h.off, vals, dt):
            scatter_bytes(h.flat, h.off, vals, dt)


@executes(Ld, Ldu)
def ld(insn, c: Compiler):
    t = insn.type
    if t is None or t.bits > 64 or not isinstance(insn.address, Address):
        raise c.unsupported()
    dt = np_type(t)
    space = _space(insn)
    count = insn.vector_width
    addr = c.ops.address(insn.address, space)
    dests = [None if isinstance(e, Sink) else c.write(e, dt)
             for e in _elements(insn.operands[0], count)]
    if len(dests) != count:
        raise c.unsupported()

    def run(m):
        vals = load(m, space, addr(m), m.active(), dt, count)
        for w, v in zip(dests, vals):
            if w is not None:
                w(m, v)
    return run


@executes(St)
def st(insn, c: Compiler):
    t = insn.type
    if t is None or t.bits > 64 or not isinstance(insn.address, Address):
        raise c.unsupported()
    dt = np_type(t)
    space = _space(insn)
    addr = c.ops.address(insn.address, space)
    srcs = [c.read(e, dt) for e in _elements(insn.operands[1], insn.vector_width)]
    if len(srcs) != insn.vector_width:
        raise c.unsupported()
    return lambda m: store(m, space, addr(m), m.active(), dt, [s(m) for s in srcs])


@executes(Cvta)
def cvta(insn, c: Compiler):
    space = insn.space_mod.split("::", 1)[0]
    if space not in SPACE_WINDOW:
        raise c.unsupported()
    dt = c.dtype()
    base = np.uint64(0 if space == "global" else window_base(SPACE_WINDOW[space]))
    a, w = c.read(insn.operands[1], UINT[64]), c.write(insn.operands[0], UINT[64])
    narrow = dt.itemsize == 4
    if insn.to_generic:
        if narrow:
            a = c.read(insn.operands[1], UINT[32])
        return lambda m: w(m, np.asarray(a(m), np.uint64) + base)
    mask = np.uint64(0xFFFFFFFF if narrow else 0xFFFFFFFFFFFFFFFF)
    return lambda m: w(m, (np.asarray(a(m), np.uint64) - base) & mask)


@executes(Isspacep)
def isspacep(insn, c: Compiler):
    space = insn.space_mod.split("::", 1)[0]
    window = SPACE_WINDOW.get(space)
    if window is None:
        raise c.unsupported()
    a, w = c.read(insn.operands[1], UINT[64]), c.write(insn.operands[0], np.dtype(np.bool_))
    return lambda m: w(m, (np.asarray(a(m), np.uint64) >> np.uint64(WINDOW_BITS)) == window)


@executes(Prefetch, Prefetchu, ApplyPriority, Discard, Membar, Fence, FenceProxy, Nanosleep,
          CpAsyncCommitGroup, CpAsyncWaitGroup, CpAsyncWaitAll, CpAsyncBulkPrefetch,
          CpAsyncBulkCommitGroup, CpAsyncBulkWaitGroup, Brkpt, Pmevent, Setmaxnreg, Griddepcontrol)
def no_op(insn, c: Compiler):
    """Hints, orderings, debugger and profiler events: the emulator performs every access
    at once, in order; a grid has no dependent launches."""
    if isinstance(insn, Discard):
        raise c.unsupported()
    return lambda m: None


@executes(CreatePolicy)
def createpolicy(insn, c: Compiler):
    w = c.write(insn.operands[0], UINT[64])
    return lambda m: w(m, np.uint64(0))


@executes(CpAsync)
def cp_async(insn, c: Compiler):
    """`cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}`: copied at once;
    bytes past src-size are zero-filled."""
    ops = insn.operands
    if len(ops) < 3 or not isinstance(ops[0], Address) or not isinstance(ops[1], Address) \
            or not isinstance(ops[2], Immediate) or "bulk" in insn.mods:
        raise c.unsupported()
    size = int(ops[2].value)
    dst, src = c.ops.address(ops[0], "shared"), c.ops.address(ops[1], "global")
    src_size = c.read(ops[3], UINT[32]) if len(ops) > 3 and not isinstance(ops[3], Address) else None
    u8 = np.dtype(np.uint8)

    def run(m):
        t = m.active()
        data = load(m, "global", src(m), t, u8, size, kind="load")
        if src_size is not None:
            n = np.asarray(src_size(m), np.int64)
            data = [np.where(j < n, v, 0).astype(np.uint8) for j, v in enumerate(data)]
        store(m, "shared", dst(m), t, u8, data)
    return run


@executes(Alloca)
def alloca(insn, c: Compiler):
    size = c.read(insn.operands[1], UINT[32])
    align = int(insn.operands[2].value) if len(insn.operands) > 2 and isinstance(
        insn.operands[2], Immediate) else 8
    w = c.write(insn.operands[0], UINT[64])

    def run(m):
        t = m.active()
        f = m.frames
        base = -(-f.sp[t] // align) * align
        top = base + np.asarray(size(m), np.int64)
        f.ensure(int(top.max()) + 16)
        f.sp[t] = top
        rows = t.astype(np.int64) * f.cap
        for k in range(int((top - base).max())):  # mark the new bytes as a live object
            inside = base + k < top
            f.shadow[(rows + base + k)[inside]] = True
        w(m, base.astype(np.uint64))
    return run


@executes(Stacksave)
def stacksave(insn, c: Compiler):
    w = c.write(insn.operands[0], UINT[64])
    return lambda m: w(m, m.frames.sp[m.active()].astype(np.uint64))


@executes(Stackrestore)
def stackrestore(insn, c: Compiler):
    a = c.read(insn.operands[0], UINT[64])

    def run(m):
        t = m.active()
        m.frames.sp[t] = np.asarray(a(m), np.int64)
    return run


@executes(Mapa)
def mapa(insn, c: Compiler):
    """A cluster is one block: rank 0 maps to the address itself, any other rank to an
    address outside every window (so an access through it is reported)."""
    a, r = c.read(insn.operands[1], UINT[64]), c.read(insn.operands[2], UINT[32])
    w = c.write(insn.operands[0], UINT[64])
    bad = np.uint64(7 << WINDOW_BITS)
    return lambda m: w(m, np.where(np.asarray(r(m)) == 0, np.asarray(a(m), np.uint64), bad))


@executes(Getctarank)
def getctarank(insn, c: Compiler):
    w = c.write(insn.operands[0], UINT[32])
    return lambda m: w(m, np.uint32(0))
