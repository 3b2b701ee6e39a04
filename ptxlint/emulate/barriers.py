"""CTA barriers: `bar`/`barrier` `.sync`, `.red` and `.arrive`, `barrier.cluster` (a
cluster is one block here).

Threads that reach a waiting barrier stop there. When no thread of the chunk can run any
more, the barriers whose arrivals are in complete (`release`): a block's barrier completes
when its arrivals (waiting threads plus `.arrive` calls) reach the thread count `b`, or,
without `b`, when every thread of the block that has not exited is waiting on it; the
others keep their threads waiting (warps released from a named barrier may still come to
them). Checks:

- `divergent-barrier`: an aligned barrier (`bar.sync`, `barrier.sync.aligned`) executed
  by part of a warp while other lanes of that warp, not exited, are elsewhere;
- `barrier-mismatch`: threads of one block wait on the same barrier at different
  instructions;
- `barrier-deadlock`: a barrier whose count is never reached (threads of the block are
  waiting on another barrier, or too few arrive); the waiting threads are released
  anyway, so the run goes on.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..ir.instructions.sync import BarrierCluster
from .operands import BOOL, UINT
from .semantics import BARRIER, PLAIN, Step
from .vec import full

U32 = UINT[32]
CLUSTER_ID = 16  # barrier.cluster: its own barrier resource


@dataclass
class BarrierSpec:
    barrier_id: object  # reader (u32) or None (cluster)
    count: object  # reader or None: every thread of the block
    aligned: bool
    red: str | None = None  # popc, and, or
    pred: object = None
    dest: object = None


def compile_barrier(program, pc: int, insn, guard) -> Step:
    ops = program.operands(pc)
    if isinstance(insn, BarrierCluster):
        if not insn.waits:
            return Step(pc, insn, PLAIN, lambda m: None)
        return Step(pc, insn, BARRIER, guard=guard,
                    data=BarrierSpec(None, None, insn.is_aligned))
    srcs = insn.sources
    bid = ops.read(insn.barrier_id, U32)
    count = ops.read(insn.thread_count, U32) if insn.thread_count is not None else None
    if not insn.waits:  # .arrive: count the arrival, go on
        return Step(pc, insn, PLAIN, _arrive(bid, count, guard))
    spec = BarrierSpec(bid, count, insn.is_aligned)
    if "red" in insn.mods:
        spec.red = next(op for op in ("popc", "and", "or") if op in insn.mods)
        spec.pred = ops.read(srcs[-1], BOOL)
        spec.dest = ops.write(insn.operands[0], U32 if spec.red == "popc" else BOOL)
    return Step(pc, insn, BARRIER, guard=guard, data=spec)


def _arrive(bid, count, guard):
    def run(m):
        t = m.active()
        ids = full(np.asarray(bid(m), np.int64), len(t))
        if guard is not None:
            keep = np.flatnonzero(np.broadcast_to(guard(m), t.shape))
            t, ids = t[keep], ids[keep]
        arrivals = m.scheduler.arrivals
        for key, k in Counter(zip(m.block_of[t].tolist(), ids.tolist())).items():
            arrivals[key] = arrivals.get(key, 0) + k
    return run


class BarrierState:
    """Per-thread barrier bookkeeping of the threads waiting in a chunk."""

    def __init__(self, n: int):
        self.ids = np.zeros(n, np.int64)
        self.counts = np.full(n, -1, np.int64)
        self.preds = np.zeros(n, bool)


def arrive(m, state: BarrierState, step: Step, threads: np.ndarray) -> None:
    """`threads` (the group, guard applied) stop at the barrier `step`."""
    spec: BarrierSpec = step.data
    saved = m.idx
    m.idx = threads
    n = len(threads)
    state.ids[threads] = CLUSTER_ID if spec.barrier_id is None else full(
        np.asarray(spec.barrier_id(m), np.int64), n)
    state.counts[threads] = -1 if spec.count is None else full(np.asarray(spec.count(m), np.int64), n)
    if spec.red is not None:
        state.preds[threads] = full(np.asarray(spec.pred(m)), n)
    m.idx = saved
    if spec.aligned:
        _check_aligned(m, threads)


def _check_aligned(m, t: np.ndarray) -> None:
    w = m.warp[t]
    here = np.bincount(w, minlength=m.n_warps)
    live = np.bincount(m.warp[m.live], minlength=m.n_warps)
    partial = np.flatnonzero((here > 0) & (here < live))
    if len(partial):
        sel = t[np.isin(w, partial)]
        m.obs.event("divergent-barrier", m, "aligned barrier executed by part of a warp; "
                    "the warp's other lanes have not exited", sel)


def release(m, state: BarrierState, waiting: dict[int, np.ndarray]) -> np.ndarray:
    """Complete the barriers whose arrivals are in (see the module docstring); returns
    the threads that go on at their pc + 1, the others keep waiting. When no barrier
    can complete, every short one is a deadlock and all waiting threads go on."""
    pcs = sorted(waiting)
    threads = np.concatenate([waiting[p] for p in pcs])
    at_pc = np.concatenate([np.full(len(waiting[p]), p) for p in pcs])
    blocks = m.block_of[threads]
    ids = state.ids[threads]
    live = np.bincount(m.block_of[m.live], minlength=m.n_blocks)
    sched = m.scheduler
    saved_pc = m.pc
    done = np.zeros(len(threads), bool)
    short = []  # (barrier id, block, pc, threads, expected, arrived)
    for bid in np.unique(ids):
        sel = np.flatnonzero(ids == bid)
        t, blk, pcs_here = threads[sel], blocks[sel], at_pc[sel]
        here = np.bincount(blk, minlength=m.n_blocks)
        counts = state.counts[t]
        expected = live.copy()
        has_count = counts >= 0
        if has_count.any():
            expected[blk[has_count]] = counts[has_count]
        arrived = here.copy()
        for (b, i), k in sched.arrivals.items():
            if i == bid:
                arrived[b] += k
        complete = arrived >= expected
        done[sel] = complete[blk]
        for b in np.flatnonzero((here > 0) & ~complete):
            mine = blk == b
            short.append((bid, b, int(pcs_here[mine][0]), t[mine], expected, arrived))
    if not done.any():  # nothing can complete: report, and let every thread go on
        for bid, b, pc, mine, expected, arrived in short:
            m.pc = pc
            _deadlock(m, bid, b, mine, expected, arrived)
        done[:] = True
    for bid in np.unique(ids[done]):
        sel = np.flatnonzero(done & (ids == bid))
        t, blk, pcs_here = threads[sel], blocks[sel], at_pc[sel]
        m.pc = int(pcs_here[0])
        if len(np.unique(pcs_here)) > 1:
            _mismatch(m, bid, t, blk, pcs_here)
        _reduce(m, state, t, blk, pcs_here)
        for b in np.unique(blk):
            sched.arrivals.pop((int(b), int(bid)), None)
    m.pc = saved_pc
    return threads[done]


def _deadlock(m, bid, b, mine, expected, arrived) -> None:
    m.obs.event("barrier-deadlock", m, f"barrier {int(bid)} waits for {int(expected[b])} "
                f"threads of the block but {int(arrived[b])} arrive", mine)


def _mismatch(m, bid, t, blk, pcs_here) -> None:
    for b in np.unique(blk):
        mine = blk == b
        if len(np.unique(pcs_here[mine])) > 1:
            for p in np.unique(pcs_here[mine]):
                m.pc = int(p)
                m.obs.event("barrier-mismatch", m, f"threads of one block wait on barrier "
                            f"{int(bid)} at different instructions", t[mine & (pcs_here == p)])


def _reduce(m, state: BarrierState, t, blk, pcs_here) -> None:
    for p in np.unique(pcs_here):
        step = m.program.steps[int(p)]
        spec = step.data
        if spec.red is None:
            continue
        sel = pcs_here == p
        tt, bb = t[sel], blk[sel]
        pred = state.preds[tt]
        yes = np.bincount(bb, weights=pred, minlength=m.n_blocks)
        tot = np.bincount(bb, minlength=m.n_blocks)
        if spec.red == "popc":
            value = yes[bb].astype(np.uint32)
        elif spec.red == "and":
            value = yes[bb] == tot[bb]
        else:
            value = yes[bb] > 0
        saved = m.idx
        m.idx = tt
        spec.dest(m, value)
        m.idx = saved
