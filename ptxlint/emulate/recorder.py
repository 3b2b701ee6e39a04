"""Collects `Observations` while a kernel runs (see `observe.py` for what they mean).

Lanes are reported per warp: `block` is the block's `(ctaid.x, ctaid.y, ctaid.z)`, `warp`
its warp index inside the block and `lanes` the lane ids (0-31) involved.
"""
from __future__ import annotations

from itertools import pairwise

import numpy as np

from .layout import WINDOW_BITS
from .observe import AccessStats, Event, Observations, warp_bank_ways, warp_sectors

SHARED_WINDOW = 1


class Recorder:
    def __init__(self, program, observe: bool = True, trace: bool = False, event_limit: int = 32):
        self.program = program
        self.observe = observe
        self.trace = trace
        self.event_limit = event_limit
        self.obs = Observations()
        # pc -> space -> [lowest, highest] address any lane used there (`run_kernel`'s
        # `watch`); shared addresses as offsets in the block's window
        self.extents: dict[int, dict[str, list[int]]] = {}
        self.hazards = None  # `hazards.Hazards` when the run observes them

    # ---- helpers ------------------------------------------------------------------------------------
    def _where(self, pc: int | None) -> tuple[int | None, str]:
        insn = self.program.instructions[pc] if pc is not None else None
        if insn is None:
            return None, "(end of function)" if pc is not None else ""
        return (insn.span.line if insn.span else None), str(insn)

    def _block(self, m, thread: int) -> tuple[int, int, int]:
        b = int(m.block_of[thread]) + m.first_block
        gx, gy, _ = m.grid
        return (b % gx, b // gx % gy, b // (gx * gy))

    def warp_groups(self, m, threads: np.ndarray):
        """(block, warp in block, lanes, positions) for each warp among `threads`."""
        w = m.warp[threads]
        cuts = np.flatnonzero(np.concatenate([[True], w[1:] != w[:-1], [True]]))
        for s, e in pairwise(cuts):
            t0 = int(threads[s])
            yield (self._block(m, t0), int(m.linear[t0] // 32),
                   [int(x) for x in m.lane[threads[s:e]]], np.arange(s, e))

    def event(self, kind: str, m, message: str, threads: np.ndarray | None = None,
              per_lane: dict | None = None, **details) -> None:
        """Record `kind` at the current pc; with `threads`, one event per warp involved.
        `per_lane` values are lists aligned with `threads`, or callables giving the list
        for an array of positions (only called for the events kept)."""
        pc = m.pc if m is not None else None
        line, text = self._where(pc)
        if threads is None:
            self._add(Event(kind, pc, line, text, message, details))
            return
        key = (kind, pc)
        room = self.event_limit - self.obs.event_counts[key]
        w = m.warp[threads]
        n_warps = int(np.count_nonzero(w[1:] != w[:-1])) + 1 if len(w) else 0
        if room <= 0:
            self.obs.event_counts[key] += n_warps
            return
        for k, (block, warp, lanes, pos) in enumerate(self.warp_groups(m, threads)):
            if k >= room:
                self.obs.event_counts[key] += n_warps - k
                break
            extra = {name: (v(pos) if callable(v) else [v[i] for i in pos])
                     for name, v in (per_lane or {}).items()}
            self._add(Event(kind, pc, line, text, message,
                            {"block": block, "warp": warp, "lanes": lanes, **details, **extra}))

    def _add(self, ev: Event) -> None:
        key = (ev.kind, ev.pc)
        self.obs.event_counts[key] += 1
        if self.obs.event_counts[key] <= self.event_limit:
            self.obs.events.append(ev)

    # ---- memory ------------------------------------------------------------------------------------
    def access(self, m, kind: str, width: int, addr: np.ndarray, threads: np.ndarray,
               spaces: list[tuple[str, np.ndarray]], bad: np.ndarray) -> None:
        if self.hazards is not None:
            self.hazards.access(m, kind, width, addr, threads, spaces, bad)
        spans = self.extents.get(m.pc)
        if spans is not None:
            for space, pos in spaces:
                if len(pos):
                    a = addr[pos]
                    if space == "shared":
                        a = a & np.uint64((1 << 32) - 1)
                    lo, hi = int(a.min()), int(a.max())
                    span = spans.setdefault(space, [lo, hi])
                    span[0], span[1] = min(span[0], lo), max(span[1], hi)
        if bad.any():
            self._out_of_bounds(m, kind, width, addr, threads, spaces, bad)
        if not self.observe or all(space in ("param", "const") for space, _ in spaces):
            return
        stats = self.obs.accesses.get(m.pc)
        if stats is None:
            line, text = self._where(m.pc)
            stats = self.obs.accesses[m.pc] = AccessStats(m.pc, line, text, kind, width)
        stats.lanes += len(threads)
        for space, pos in spaces:
            stats.spaces[space] += len(pos)
            if space not in ("global", "shared") or not len(pos):
                continue
            t, a = threads[pos], addr[pos]
            if space == "shared":
                a = a & np.uint64((1 << 32) - 1)  # generic shared: the window's low bits
                prev = stats.max_ways if stats.ways else -1
                warps, ways = warp_bank_ways(m.warp[t], m.lane[t], a, width)
                if ways.max() > prev:
                    stats.worst_ways = self._worst(m, warps, ways, t, a)
                self._histogram(stats.ways, ways)
            else:
                prev = stats.max_sectors if stats.sectors else -1
                warps, secs = warp_sectors(m.warp[t], a, width)
                if secs.max() > prev:
                    stats.worst_sectors = self._worst(m, warps, secs, t, a)
                self._histogram(stats.sectors, secs)
            stats.requests += len(warps)
            if self.trace:
                for block, warp, lanes, p in self.warp_groups(m, t):
                    self.obs.traces.append({"pc": m.pc, "block": block, "warp": warp,
                                            "space": space, "lanes": lanes,
                                            "addresses": [int(x) for x in a[p]]})

    @staticmethod
    def _histogram(counter, values: np.ndarray) -> None:
        vals, n = np.unique(values, return_counts=True)
        for v, k in zip(vals, n):
            counter[int(v)] += int(k)

    def _worst(self, m, warps, values, t, a) -> dict:
        i = int(np.argmax(values))
        sel = np.flatnonzero(m.warp[t] == warps[i])
        t0 = int(t[sel[0]])
        return {"value": int(values[i]), "block": self._block(m, t0),
                "warp": int(m.linear[t0] // 32), "lanes": [int(x) for x in m.lane[t[sel]]],
                "addresses": [int(x) for x in a[sel]]}

    def _out_of_bounds(self, m, kind, width, addr, threads, spaces, bad) -> None:
        pos = np.flatnonzero(bad)
        names = [s for s, _ in spaces]
        which = np.zeros(len(addr), np.int64)
        for k, (_space, p) in enumerate(spaces):
            which[p] = k
        a, sp = addr[pos], which[pos]

        def objects(ix):
            return [m.mem.name_near(names[sp[i]], int(a[i])) if m.mem is not None else None
                    for i in ix]
        self.event("out-of-bounds", m, f"{kind} of {width} bytes outside every object",
                   threads[pos], per_lane={
                       "addresses": lambda ix: [int(a[i]) for i in ix],
                       "objects": objects,
                       "spaces": lambda ix: [names[sp[i]] for i in ix]})

    def misaligned(self, m, width: int, addr: np.ndarray, threads: np.ndarray) -> None:
        off = np.flatnonzero(addr % np.uint64(max(width, 1)) != 0)
        if len(off):
            self.event("misaligned", m, f"{width}-byte access at an address not a multiple of "
                       f"{width}", threads[off], per_lane={"addresses": [int(x) for x in addr[off]]})


def is_shared(addr: np.ndarray) -> np.ndarray:
    return (addr >> np.uint64(WINDOW_BITS)) == SHARED_WINDOW
