"""Warp-synchronous instructions (PTX ISA 9.7.9, 9.7.13): `shfl.sync` (and `shfl`),
`vote.sync` (and `vote`), `activemask`, `match.sync`, `redux.sync`, `elect.sync`,
`bar.warp.sync`.

Lanes are addressed through a padded warp grid: slot `32*w + lane` for warp `w` of the
chunk. `shfl` follows the ISA's pseudo-code (source lane from the mode, clamp value
`c[4:0]` and segment mask `c[12:8]`); a lane whose source is out of range reads its own
value and gets `p = false`; a source lane that is inactive supplies whatever its register
holds. When lanes of `membermask` that have not exited are not executing the instruction
with the others, or a lane executes it that is not in the mask it passes (both undefined
behaviour in PTX), a `warp-sync` event is recorded (details `missing` or `outside`;
`warp-barrier` for `bar.warp.sync`); lanes waiting where they can only leave the kernel
silently (`Scheduler.leaving`) count as exited, as the instruction waits for them to
exit. `warp-sync-mask` must report both kinds, but a `bar.warp.sync` with an immediate
mask is `barrier-divergence`'s (the soundness suite's `differential/match.py`).
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.move import Shfl, ShflSync
from ..ir.instructions.sync import (
    Activemask,
    BarWarpSync,
    ElectSync,
    MatchSync,
    ReduxSync,
    Vote,
    VoteSync,
)
from ..ir.operands import PredicatePair
from .operands import BOOL, SINT, UINT
from .semantics import Compiler, executes

U32 = UINT[32]


def slots(m, t: np.ndarray) -> np.ndarray:
    return m.warp[t].astype(np.int64) * 32 + m.lane[t]


def full_values(m, read) -> np.ndarray:
    """An operand's value for every thread of the chunk, in padded warp slots."""
    saved = m.idx
    m.idx = None
    try:
        v = read(m)
    finally:
        m.idx = saved
    v = np.broadcast_to(np.asarray(v), (m.n,))
    if m.full_warps:
        return v
    out = np.zeros(m.n_warps * 32, v.dtype)
    out[slots(m, m.all_threads)] = v
    return out


def lane_bits(m, t: np.ndarray, flag) -> tuple[np.ndarray, np.ndarray]:
    """(per-thread run index, per-warp OR of `flag << lane`) over the warps of `t`."""
    w = m.warp[t]
    start = np.concatenate([[True], w[1:] != w[:-1]])
    run = np.cumsum(start) - 1
    bits = np.where(np.broadcast_to(flag, t.shape), np.uint32(1) << m.lane[t], np.uint32(0))
    return run, np.bitwise_or.reduceat(bits.astype(U32), np.flatnonzero(start))


def check_members(m, t: np.ndarray, member, what: str, kind: str = "warp-sync") -> np.ndarray:
    """Per-thread bitmask of the warp's executing lanes; records executing lanes whose
    own bit is not in the mask they pass (`outside`), and lanes that some executing
    lane's mask names, that have not exited but do not execute this instruction
    (`missing`)."""
    run, active = lane_bits(m, t, True)
    w = m.warp[t]
    first = np.flatnonzero(np.concatenate([[True], w[1:] != w[:-1]]))
    live = _live_bits(m, w[first])
    per_lane = np.broadcast_to(np.asarray(member, np.uint32), t.shape)
    _outside(m, t, per_lane, what, kind)
    # lanes of one warp may pass different masks (two 16-lane tiles): any of them waits
    mem = np.bitwise_or.reduceat(per_lane.astype(U32), first)
    missing = mem & live & ~active
    scheduler = getattr(m, "scheduler", None)
    if missing.any() and scheduler is not None:
        # lanes on their way out of the kernel, doing nothing anyone could wait for:
        # as good as exited (the collective waits for them to exit)
        missing &= ~_live_bits(m, w[first], scheduler.leaving())
    for i in np.flatnonzero(missing):
        end = first[i + 1] if i + 1 < len(first) else len(t)
        lanes = [k for k in range(32) if int(missing[i]) >> k & 1]
        m.obs.event(kind, m, f"{what}: lanes {lanes} of the member mask have not "
                    "exited but do not execute it with the others", t[first[i]:end],
                    missing=lanes)
    return active[run]


def _outside(m, t: np.ndarray, per_lane: np.ndarray, what: str, kind: str) -> None:
    """Executing lanes whose own bit is not in their mask: undefined in PTX."""
    bad = ((per_lane >> m.lane[t].astype(np.uint32)) & np.uint32(1)) == 0
    if not bad.any():
        return
    w = m.warp[t]
    for warp in np.unique(w[bad]):
        sel = bad & (w == warp)
        lanes = sorted(int(k) for k in m.lane[t[sel]])
        m.obs.event(kind, m, f"{what}: lanes {lanes} execute it but are not in their "
                    "member mask", t[sel], outside=lanes)


def _live_bits(m, warps: np.ndarray, flags: np.ndarray | None = None) -> np.ndarray:
    """Per warp of `warps`: the bits of its live lanes (of the lanes `flags` marks)."""
    flags = m.live if flags is None else flags
    if m.full_warps:
        grid = flags
    else:
        grid = np.zeros(m.n_warps * 32, bool)
        grid[slots(m, m.all_threads)] = flags
    g = grid.reshape(-1, 32)[warps]
    return (g.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)


@executes(Shfl, ShflSync)
def shfl(insn, c: Compiler):
    mode = insn.mode
    a, b, cc = c.read(insn.a, U32), c.read(insn.b, U32), c.read(insn.c, U32)
    member = c.read(insn.membermask, U32) if isinstance(insn, ShflSync) else None
    d = c.write(insn.value_dest, U32)
    p = c.write(insn.predicate_dest, BOOL) if insn.predicate_dest is not None else None

    def run(m):
        t = m.active()
        if member is not None:
            check_members(m, t, member(m), insn.full_opcode)
        lane = m.lane[t].astype(np.int64)
        bval = np.asarray(b(m), np.int64) & 31
        cw = np.asarray(cc(m), np.int64)
        cval, seg = cw & 31, (cw >> 8) & 31
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        src = full_values(m, a)
        d(m, src[m.warp[t].astype(np.int64) * 32 + j])
        if p is not None:
            p(m, ok)
    return run


@executes(Vote, VoteSync)
def vote(insn, c: Compiler):
    mode = next((x for x in ("all", "any", "uni", "ballot") if x in insn.mods), None)
    if mode is None:
        raise c.unsupported()
    a = c.pred(insn.operands[1])
    member = c.read(insn.operands[2], U32) if len(insn.operands) > 2 else None
    d = c.write(insn.operands[0], U32 if mode == "ballot" else BOOL)

    def run(m):
        t = m.active()
        mem = member(m) if member is not None else np.uint32(0xFFFFFFFF)
        if member is not None:
            active = check_members(m, t, mem, insn.full_opcode)
        else:
            run0, bits0 = lane_bits(m, t, True)
            active = bits0[run0]
        scope = active & np.asarray(mem, np.uint32)
        run_, yes = lane_bits(m, t, a(m))
        yes = yes[run_] & scope
        if mode == "ballot":
            d(m, yes)
        elif mode == "all":
            d(m, yes == scope)
        elif mode == "any":
            d(m, yes != 0)
        else:
            d(m, (yes == 0) | (yes == scope))
    return run


@executes(Activemask)
def activemask(insn, c: Compiler):
    d = c.write(insn.operands[0], U32)

    def run(m):
        t = m.active()
        run_, bits = lane_bits(m, t, True)
        d(m, bits[run_])
    return run


@executes(MatchSync)
def match(insn, c: Compiler):
    t_ = insn.type
    dt = UINT[t_.bits if t_ else 32]
    a, member = c.read(insn.operands[1], dt), c.read(insn.operands[2], U32)
    dst = insn.operands[0]
    pair = isinstance(dst, PredicatePair)
    d = c.write(dst.first if pair else dst, U32)
    p = c.write(dst.second, BOOL) if pair else None
    mode_all = "all" in insn.mods

    def run(m):
        t = m.active()
        mem = np.broadcast_to(np.asarray(member(m), np.uint32), t.shape)
        active = check_members(m, t, member(m), insn.full_opcode) & mem
        vals = np.broadcast_to(np.asarray(a(m), dt), t.shape)
        grid = np.zeros(m.n_warps * 32, dt)
        act = np.zeros(m.n_warps * 32, bool)
        s = slots(m, t)
        grid[s], act[s] = vals, True
        g, ag = grid.reshape(-1, 32), act.reshape(-1, 32)
        w = m.warp[t].astype(np.int64)
        eq = (g[w] == vals[:, None]) & ag[w]
        bits = (eq.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
        bits &= active
        if mode_all:
            same = bits == active
            d(m, np.where(same, active, np.uint32(0)))
            if p is not None:
                p(m, same)
        else:
            d(m, bits)
    return run


@executes(ReduxSync)
def redux(insn, c: Compiler):
    op = next((x for x in ("add", "min", "max", "and", "or", "xor") if x in insn.mods), None)
    t_ = insn.type
    if op is None or t_ is None or t_.name == "f32":
        raise c.unsupported()
    dt = SINT[32] if t_.is_signed else U32
    a, member, d = c.read(insn.operands[1], dt), c.read(insn.operands[2], U32), c.write(insn.operands[0], dt)
    ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

    def run(m):
        t = m.active()
        check_members(m, t, member(m), insn.full_opcode)
        vals = np.broadcast_to(np.asarray(a(m), dt), t.shape)
        w = m.warp[t]
        start = np.concatenate([[True], w[1:] != w[:-1]])
        runs = np.cumsum(start) - 1
        red = ufunc.reduceat(vals.astype(np.int64) if op == "add" else vals, np.flatnonzero(start))
        d(m, np.asarray(red[runs]).astype(np.int64).astype(dt) if op == "add" else red[runs])
    return run


@executes(ElectSync)
def elect(insn, c: Compiler):
    member = c.read(insn.operands[1], U32)
    dst = insn.operands[0]
    d = c.write(dst.first, U32) if isinstance(dst, PredicatePair) else None
    p = c.write(dst.second if isinstance(dst, PredicatePair) else dst, BOOL)

    def run(m):
        t = m.active()
        bits = check_members(m, t, member(m), insn.full_opcode) & np.broadcast_to(
            np.asarray(member(m), np.uint32), t.shape)
        low = bits & (~bits + np.uint32(1))
        leader = (np.bitwise_count(low - np.uint32(1))).astype(np.uint32)
        leader = np.where(bits == 0, np.uint32(0), leader)
        if d is not None:
            d(m, leader)
        p(m, (m.lane[t] == leader) & (bits != 0))
    return run


@executes(BarWarpSync)
def bar_warp_sync(insn, c: Compiler):
    member = c.read(insn.member_mask, U32)

    def run(m):
        check_members(m, m.active(), member(m), insn.full_opcode, "warp-barrier")
    return run
