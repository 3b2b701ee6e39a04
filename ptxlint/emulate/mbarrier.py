"""mbarrier objects (PTX ISA 9.7.13.15) and the bulk copies that complete on them.

An mbarrier's state (expected arrivals, pending arrivals, pending transaction bytes,
phase) is kept beside the 8 bytes of shared memory it lives in, keyed by their storage
offset; lanes act on it in thread order. `arrive` returns a state token: the phase in
bits 32 and up, the pending count after the arrival below. A phase completes when its
pending arrivals and transaction bytes are both zero.

`test_wait`/`try_wait` are scheduling points (`Step.kind == MBWAIT`): lanes whose phase
has completed go on with `p = true`; the others are parked at the instruction and tried
again once some mbarrier has changed (waiting is a legal schedule for both forms). A
parked lane that can never succeed is reported (`mbarrier-deadlock`) and stopped.
`cp.async.bulk` copies at once and completes its transaction bytes on the mbarrier.
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.async_copy import CpAsyncBulk, CpAsyncMbarrierArrive
from ..ir.instructions.sync import (
    MbarrierArrive,
    MbarrierArriveDrop,
    MbarrierCompleteTx,
    MbarrierExpectTx,
    MbarrierInit,
    MbarrierInval,
    MbarrierPendingCount,
)
from ..ir.operands import Address
from .memops import load, store
from .operands import BOOL, UINT
from .semantics import Compiler, executes

U64 = UINT[64]


class MBar:
    __slots__ = ("expected", "pending", "phase", "tx")

    def __init__(self, count: int):
        self.expected, self.pending, self.tx, self.phase = count, count, 0, 0

    def settle(self) -> None:
        if self.pending <= 0 and self.tx == 0:
            self.phase += 1
            self.pending = self.expected

    def token(self) -> int:
        return (self.phase << 32) | (self.pending & 0xFFFFFFFF)


def _objects(m, space: str, addr: np.ndarray, threads: np.ndarray, kind: str):
    """Per lane: the key of its mbarrier (None when out of bounds), in lane order."""
    hits, bad, spaces = m.mem.locate(space, addr, threads, 8)
    m.obs.access(m, kind, 8, addr, threads, spaces, bad)
    keys: list = [None] * len(addr)
    for h in hits:
        pos = range(len(addr)) if h.pos is None else h.pos
        for p, off in zip(pos, h.off):
            keys[int(p)] = (id(h.flat), int(off))
    return keys


def _table(m) -> dict:
    if not hasattr(m.mem, "mbarriers"):
        m.mem.mbarriers, m.mem.mbar_changes = {}, 0
    return m.mem.mbarriers


def _changed(m) -> None:
    m.mem.mbar_changes += 1


def _addr(insn, c: Compiler):
    a = insn.address
    if not isinstance(a, Address):
        raise c.unsupported()
    space = insn.space
    return c.ops.address(a, "shared" if space == "shared" else space)


@executes(MbarrierInit)
def init(insn, c: Compiler):
    addr, count = _addr(insn, c), c.read(insn.operands[1], UINT[32])

    def run(m):
        t = m.active()
        table = _table(m)
        counts = np.broadcast_to(np.asarray(count(m), np.int64), t.shape)
        for key, n in zip(_objects(m, insn.space, addr(m), t, "store"), counts):
            if key is not None:
                table[key] = MBar(int(n))
        _changed(m)
    return run


@executes(MbarrierInval)
def inval(insn, c: Compiler):
    addr = _addr(insn, c)

    def run(m):
        table = _table(m)
        for key in _objects(m, insn.space, addr(m), m.active(), "store"):
            table.pop(key, None)
    return run


def _missing(m, t, what: str) -> None:
    m.obs.event("mbarrier-uninitialised", m, f"{what} on memory that holds no initialised "
                "mbarrier", t)


@executes(MbarrierArrive, MbarrierArriveDrop)
def arrive(insn, c: Compiler):
    addr = _addr(insn, c)
    d = c.write(insn.operands[0], U64)
    expect_tx = "expect_tx" in insn.mods
    extra = c.read(insn.operands[2], UINT[32]) if len(insn.operands) > 2 else None
    drop = insn.opcode == "mbarrier.arrive_drop"

    def run(m):
        t = m.active()
        table = _table(m)
        n = np.broadcast_to(np.asarray(extra(m) if extra else 1, np.int64), t.shape)
        tokens = np.zeros(len(t), np.uint64)
        keys = _objects(m, insn.space, addr(m), t, "atomic")
        lost = [t[i] for i, key in enumerate(keys) if key is not None and key not in table]
        for i, key in enumerate(keys):
            bar = table.get(key)
            if bar is None:
                continue
            if expect_tx:
                bar.tx += int(n[i])
            tokens[i] = bar.token()
            bar.pending -= 1 if expect_tx else int(n[i])
            if drop:
                bar.expected -= 1
            bar.settle()
        if lost:
            _missing(m, np.array(lost), insn.opcode)
        _changed(m)
        d(m, tokens)
    return run


@executes(MbarrierExpectTx, MbarrierCompleteTx)
def transactions(insn, c: Compiler):
    addr, count = _addr(insn, c), c.read(insn.operands[1], UINT[32])
    sign = 1 if insn.opcode == "mbarrier.expect_tx" else -1

    def run(m):
        t = m.active()
        table = _table(m)
        n = np.broadcast_to(np.asarray(count(m), np.int64), t.shape)
        for i, key in enumerate(_objects(m, insn.space, addr(m), t, "atomic")):
            bar = table.get(key)
            if bar is not None:
                bar.tx += sign * int(n[i])
                bar.settle()
        _changed(m)
    return run


@executes(MbarrierPendingCount)
def pending_count(insn, c: Compiler):
    state, d = c.read(insn.operands[1], U64), c.write(insn.operands[0], UINT[32])
    return lambda m: d(m, (np.asarray(state(m), np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32))


@executes(CpAsyncMbarrierArrive)
def cp_async_arrive(insn, c: Compiler):
    """cp.async copies are done at once: the arrive happens now; without `.noinc` the
    pending count is raised first, a net change of zero."""
    addr = _addr(insn, c)
    noinc = "noinc" in insn.mods

    def run(m):
        table = _table(m)
        for key in _objects(m, insn.space, addr(m), m.active(), "atomic"):
            bar = table.get(key)
            if bar is not None and noinc:
                bar.pending -= 1
                bar.settle()
        _changed(m)
    return run


def compile_wait(program, pc: int, insn):
    """`f(m)` -> per active lane, whether its phase has completed (and writes `p` for
    those lanes)."""
    ops = program.operands(pc)
    c = Compiler(program, pc, insn)
    addr = _addr(insn, c)
    state = ops.read(insn.operands[2], U64)
    p = ops.write(insn.operands[0], BOOL)
    parity = "parity" in insn.mods

    def check(m):
        t = m.active()
        table = _table(m)
        s = np.broadcast_to(np.asarray(state(m), np.uint64), t.shape)
        done = np.zeros(len(t), bool)
        for i, key in enumerate(_objects(m, insn.space, addr(m), t, "load")):
            bar = table.get(key)
            if bar is None:
                done[i] = True  # reported by the access check or as uninitialised below
                continue
            if parity:
                done[i] = (bar.phase & 1) != (int(s[i]) & 1)
            else:
                done[i] = bar.phase > (int(s[i]) >> 32)
        return done, p
    return check


@executes(CpAsyncBulk)
def cp_async_bulk(insn, c: Compiler):
    """`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src],
    size, [mbar]` (and shared -> global `.bulk_group`): copied at once."""
    ops = insn.operands
    spaces = [m for m in insn.mods if m.split("::")[0] in ("shared", "global")]
    if len(ops) < 3 or len(spaces) < 2 or not isinstance(ops[0], Address) or any(
            x.startswith("multicast") for x in insn.mods):
        raise c.unsupported()
    dst_space, src_space = (s.split("::")[0] for s in spaces[:2])
    dst, src = c.ops.address(ops[0], dst_space), c.ops.address(ops[1], src_space)
    size = c.read(ops[2], UINT[32])
    mbar = c.ops.address(ops[3], "shared") if len(ops) > 3 and isinstance(ops[3], Address) else None
    u8 = np.dtype(np.uint8)

    def run(m):
        t = m.active()
        n = np.broadcast_to(np.asarray(size(m), np.int64), t.shape)
        sa, da = src(m), dst(m)
        saved = m.idx
        for i in range(len(t)):  # sizes differ per lane: one lane at a time
            m.idx = t[i:i + 1]
            data = load(m, src_space, sa[i:i + 1], m.idx, u8, int(n[i]), align=16)
            store(m, dst_space, da[i:i + 1], m.idx, u8, data, align=16)
        m.idx = saved
        if mbar is not None:
            table = _table(m)
            for i, key in enumerate(_objects(m, "shared", mbar(m), t, "atomic")):
                bar = table.get(key)
                if bar is not None:
                    bar.tx -= int(n[i])
                    bar.settle()
            _changed(m)
    return run
