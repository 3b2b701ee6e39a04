"""Hazards a run shows (`run_kernel(..., hazards=True)`): reads of undefined registers,
shared and local bytes read before anything wrote them, and races on global memory
between the threads the emulator runs. The events, recorded per warp like the others:

- `uninitialized-register`: a thread reads a register that holds no value, in the sense
  of `ir/reg_flow.py` (copies and selects pass definedness on, every other read is
  a use); after the read it counts as defined for that thread (one event per path, as
  the rule reports). Each call starts the callee's registers undefined, its `.reg`
  parameters defined; a call defines the registers it returns.
- `uninitialized-shared`: an `ld` reads a shared byte no thread of the block has
  written yet (stores, atomics, copies and mbarrier updates count as writes);
  `bytes` are offsets in the block's shared window.
- `uninitialized-local`: an `ld` reads a byte of the thread's frame that the thread has
  not written since the frame opened; `bytes` are offsets in the frame.
- `global-race`: an `ld`/`st` of a global byte another thread of the launch accessed
  before, one of the two a store, neither ordered before the other (threads of one
  block: no CTA barrier between, or for one warp no `bar.warp.sync` either; threads of
  two blocks: never), not both with memory-model semantics (`.relaxed`... `.volatile`),
  and for two stores not the same value. Atomics are not judged. Per byte the last
  store and the last load are kept, so some racing pairs go unseen; `other_pc` names the
  earlier access.
"""
from __future__ import annotations

import numpy as np

from ..ir.reg_flow import defined_at_entry, flows_of
from ..ir.instructions.control import CallInst
from ..ir.instructions.memory import Ld, Ldu, St
from ..ir.instructions.sync import BarWarpSync, CtaBarrier
from ..ir.operands import Symbol
from .layout import LOCAL, window_base

STRONG = frozenset({"relaxed", "acquire", "release", "acq_rel", "sc", "volatile"})
_LOW32 = np.uint64((1 << 32) - 1)


class Plan:
    """One instruction's register effect, as rows of the definedness matrix."""

    __slots__ = ("kind", "guard", "reads", "writes", "sources", "pred", "arms", "names",
                 "callee", "cta", "warp")

    def __init__(self) -> None:
        self.kind = "none"
        self.guard = None  # (row, storage key, negated)
        self.reads: list[int] = []
        self.writes: list[int] = []
        self.sources: list[list[int]] = []
        self.pred = None  # (row, storage key, negated)
        self.arms: tuple[list[int], list[int]] = ([], [])
        self.names: dict[int, str] = {}
        self.callee = None  # FnInfo of a direct call
        self.cta = self.warp = False


class Hazards:
    def __init__(self, program, recorder):
        self.program = program
        self.rec = recorder
        self.rows: dict[str, int] = {}
        self.fn_rows: dict[str, list[int]] = {}
        self.entry_rows: dict[str, list[int]] = {}
        self.plans: list[Plan | None] = [None] * len(program.instructions)
        for info in program.infos.values():
            self._compile(info)
        self.strong = [insn is not None and (getattr(insn, "semantics", "weak") in STRONG
                                             or "volatile" in insn.mods)
                       for insn in program.instructions]
        self.globals: dict[int, dict[str, np.ndarray]] = {}  # region start -> shadow
        self.m = None

    # ---- compiling ----------------------------------------------------------------------------
    def _row(self, prefix: str, key: str) -> int:
        full = prefix + key
        r = self.rows.get(full)
        if r is None:
            r = self.rows[full] = len(self.rows)
            self.fn_rows.setdefault(prefix, []).append(r)
        return r

    def _compile(self, info) -> None:
        fn = info.function
        prefix = f"{info.index}/"
        ctx = self.program.contexts[fn.name]
        flows = flows_of(fn)
        entry = defined_at_entry(fn)
        for pc in range(info.entry, info.end):
            insn = self.program.instructions[pc]
            if insn is None:
                continue
            f = flows[id(insn)]
            p = Plan()
            p.kind = f.kind
            row = lambda k: self._row(prefix, k)  # noqa: E731
            for k in (*f.reads, *f.writes):
                p.names[row(k)] = k.split("@", 1)[0]
            p.reads = [row(k) for k in f.reads]
            p.writes = [row(k) for k in f.writes]
            p.sources = [[row(k) for k in s] for s in f.sources]
            p.arms = ([row(k) for k in f.arms[0]], [row(k) for k in f.arms[1]])
            if insn.guard is not None and f.guard is not None:
                p.guard = (row(f.guard[0]), ctx.key(insn.guard.register), f.guard[1])
                p.names[p.guard[0]] = f.guard[0].split("@", 1)[0]
            if f.pred is not None:
                reg = insn.operands[3]
                reg = getattr(reg, "operand", reg)
                p.pred = (row(f.pred[0]), ctx.key(reg), f.pred[1])
                p.names[p.pred[0]] = f.pred[0].split("@", 1)[0]
            if isinstance(insn, CallInst) and isinstance(insn.callee, Symbol):
                p.callee = self.program.infos.get(
                    self.program.aliases.get(insn.callee.name, insn.callee.name))
            p.cta = isinstance(insn, CtaBarrier)
            p.warp = isinstance(insn, BarWarpSync)
            self.plans[pc] = p
        self.entry_rows[prefix] = [r for k, r in self.rows.items() if k.startswith(prefix)
                                   and (k[len(prefix):].split(".")[0] in entry)]

    # ---- a chunk of blocks -----------------------------------------------------------------------
    def start(self, m) -> None:
        self.m = m
        self.defined = np.zeros((max(1, len(self.rows)), m.n), bool)
        kernel = self.program.infos[self.program.kernel.name]
        self.defined[self.entry_rows.get(f"{kernel.index}/", []), :] = True
        self.shared = np.zeros(len(m.mem.shared), bool)
        self.local = np.zeros(m.frames.n * m.frames.cap, bool)
        self.cta_epoch = np.zeros(m.n, np.int64)
        self.warp_epoch = np.zeros(m.n, np.int64)

    # ---- registers (called before every step) ------------------------------------------------------
    def step(self, m, pc: int) -> None:
        p = self.plans[pc]
        if p is None:
            return
        t = m.active()
        d = self.defined
        if p.kind == "copy":
            for w, srcs in zip(p.writes, p.sources):
                d[w, t] = d[srcs][:, t].all(axis=0) if srcs else True
            return
        if p.kind == "select":
            self._use(m, [p.pred[0]], t)
            flags = np.asarray(m.regs[p.pred[1]][t], bool) != p.pred[2]
            a = d[p.arms[0]][:, t].all(axis=0) if p.arms[0] else np.ones(len(t), bool)
            b = d[p.arms[1]][:, t].all(axis=0) if p.arms[1] else np.ones(len(t), bool)
            for w in p.writes:
                d[w, t] = np.where(flags, a, b)
            return
        on = t
        if p.guard is not None:
            self._use(m, [p.guard[0]], t)
            flags = np.asarray(m.regs[p.guard[1]][t], bool) != p.guard[2]
            on = t[flags]
        if p.reads and len(on):
            self._use(m, p.reads, on)
        if p.writes and len(on):
            d[np.ix_(p.writes, on)] = True
        if p.callee is not None and len(on):
            self._enter(m, p.callee, on)
        if p.cta:
            self.cta_epoch[on] += 1
        if p.warp:
            self.warp_epoch[on] += 1

    def _use(self, m, rows: list[int], t: np.ndarray) -> None:
        d = self.defined
        for r in rows:
            bad = ~d[r, t]
            if bad.any():
                who = t[bad]
                name = self.plans[m.pc].names.get(r, "?")  # type: ignore[union-attr]
                self.rec.event("uninitialized-register", m,
                               f"`{name}` read before it is written", who, register=name)
                d[r, who] = True

    def _enter(self, m, info, t: np.ndarray) -> None:
        """A call: the callee's registers start undefined (its `.reg` parameters
        defined) and its frame starts unwritten."""
        prefix = f"{info.index}/"
        rows = self.fn_rows.get(prefix, []) if not info.recursive else []
        if rows:  # (a recursive function's activations share its rows: left as they are)
            self.defined[np.ix_(rows, t)] = False
        entry = self.entry_rows.get(prefix, [])
        if entry:
            self.defined[np.ix_(entry, t)] = True
        size = info.frame.size if info.frame is not None else 0
        if size:
            self._local_rows(m, t, m.frames.sp[t], size, False)

    # ---- memory (called by the recorder and the stores) ------------------------------------------
    def access(self, m, kind: str, nbytes: int, addr: np.ndarray, threads: np.ndarray,
               spaces, bad: np.ndarray) -> None:
        insn = self.program.instructions[m.pc]
        is_ld = isinstance(insn, (Ld, Ldu))
        writes = kind not in ("load", "prefetch")
        generic = insn is not None and getattr(insn, "space", "") == "generic"
        for space, pos in spaces:
            pos = pos[~bad[pos]]
            if not len(pos):
                continue
            t, a = threads[pos], addr[pos]
            if space == "shared":
                off = m.block_of[t] * m.mem.shared_size + (a & _LOW32).astype(np.int64)
                self._memory(m, self.shared, off, t, nbytes, writes, is_ld, "shared",
                             (a & _LOW32).astype(np.int64))
            elif space == "local":
                loc = (a - np.uint64(window_base(LOCAL)) if generic else a).astype(np.int64)
                self._sync_local(m)
                off = t.astype(np.int64) * m.frames.cap + loc
                self._memory(m, self.local, off, t, nbytes, writes, is_ld, "local",
                             loc - m.frames.fp[t])
            elif space == "global" and is_ld:
                self._global(m, t, a, nbytes, None)

    def _memory(self, m, shadow: np.ndarray, off: np.ndarray, t: np.ndarray, nbytes: int,
                writes: bool, is_ld: bool, what: str, shown: np.ndarray) -> None:
        cols = off[:, None] + np.arange(nbytes)[None, :]
        if writes:
            shadow[cols] = True
            return
        if not is_ld:
            return
        unset = ~shadow[cols]
        lanes = np.flatnonzero(unset.any(axis=1))
        if len(lanes):
            first = shown[lanes][:, None] + np.arange(nbytes)[None, :]
            self.rec.event(f"uninitialized-{what}", m, f"{what} memory read before it is "
                           "written", t[lanes], per_lane={
                               "bytes": lambda ix: [[int(b) for b, u in zip(first[i], unset[
                                   lanes[i]]) if u] for i in ix]})

    def _sync_local(self, m) -> None:
        """Follow the stacks when they grow (`Frames.ensure` doubles every row)."""
        f = m.frames
        if self.local.size != f.n * f.cap:
            old = self.local.reshape(f.n, -1)
            new = np.zeros((f.n, f.cap), bool)
            new[:, :old.shape[1]] = old
            self.local = new.reshape(-1)

    def _local_rows(self, m, t: np.ndarray, base: np.ndarray, size: int, value: bool) -> None:
        self._sync_local(m)
        f = m.frames
        if int(base.max(initial=0)) + size > f.cap:
            return  # the push grows the stack: the new bytes start unwritten anyway
        cols = (t.astype(np.int64) * f.cap + base)[:, None] + np.arange(size)[None, :]
        self.local[cols] = value

    # ---- global races ----------------------------------------------------------------------------
    def stored(self, m, space: str, addr: np.ndarray, threads: np.ndarray, nbytes: int,
               data: np.ndarray, hits_bad: np.ndarray) -> None:
        """A `st` of `data` (lanes x bytes) about to be written (global lanes only)."""
        insn = self.program.instructions[m.pc]
        if not isinstance(insn, St):
            return
        a = np.asarray(addr, np.uint64)
        if space == "generic":
            glob = (a >> np.uint64(48)) == 0
        else:
            glob = np.full(len(a), space == "global")
        keep = np.flatnonzero(glob & ~hits_bad)
        if len(keep):
            self._global(m, threads[keep], a[keep], nbytes, data[keep])

    def _global(self, m, t: np.ndarray, a: np.ndarray, nbytes: int, data) -> None:
        space = m.mem.global_space
        if not space.regions:
            return
        i = np.searchsorted(space.starts, a, side="right").astype(np.int64) - 1
        for k in np.unique(i):
            if k < 0:
                continue
            sel = np.flatnonzero(i == k)
            region = space.regions[int(k)]
            off = (a[sel] - np.uint64(region.start)).astype(np.int64)
            inside = off + nbytes <= region.size
            sel, off = sel[inside], off[inside]
            if len(sel):
                self._race(m, region, off, t[sel], nbytes,
                           None if data is None else data[sel])

    def _shadow(self, region) -> dict[str, np.ndarray]:
        sh = self.globals.get(region.start)
        if sh is None:
            n = region.size
            sh = self.globals[region.start] = {
                f"{x}_{f}": np.zeros(n, dt) for x in ("w", "r")
                for f, dt in (("gid", np.int64), ("cta", np.int64), ("warp", np.int64),
                              ("pc", np.int64), ("strong", bool))}
        return sh

    def _race(self, m, region, off: np.ndarray, t: np.ndarray, nbytes: int, data) -> None:
        sh = self._shadow(region)
        pc = m.pc
        cols = (off[:, None] + np.arange(nbytes)[None, :]).reshape(-1)
        lane = np.repeat(np.arange(len(t)), nbytes)
        tt = t[lane]
        gid = (m.block_of[tt] + m.first_block) * m.tpb + m.linear[tt] + 1
        cta, warp = self.cta_epoch[tt], self.warp_epoch[tt]
        strong = self.strong[pc]
        old = region.data[cols] if data is not None else None
        new = data.reshape(-1) if data is not None else None
        checks = [("w", None if data is None else old)] + ([("r", None)] if data is not None
                                                          else [])
        for side, old_vals in checks:
            g = sh[f"{side}_gid"][cols]
            race = (g != 0) & (g != gid) & self._unordered(m, g, gid, sh, side, cols, cta, warp)
            if strong:
                race &= ~sh[f"{side}_strong"][cols]
            if old_vals is not None:
                race &= old_vals != new
            if race.any():
                self._report(m, sh, side, cols, race, lane, t, data is not None)
        # this step's own lanes: two of them on one byte
        if data is not None and not strong:
            self._within_step(m, cols, gid, new, lane, t)
        side = "w" if data is not None else "r"
        sh[f"{side}_gid"][cols] = gid
        sh[f"{side}_cta"][cols] = cta
        sh[f"{side}_warp"][cols] = warp
        sh[f"{side}_pc"][cols] = pc
        sh[f"{side}_strong"][cols] = strong

    def _unordered(self, m, g, gid, sh, side, cols, cta, warp) -> np.ndarray:
        tpb = m.tpb
        other_block, this_block = (g - 1) // tpb, (gid - 1) // tpb
        same_block = other_block == this_block
        same_warp = same_block & (((g - 1) % tpb) // 32 == ((gid - 1) % tpb) // 32)
        same_cta = sh[f"{side}_cta"][cols] == cta
        same_warp_ep = sh[f"{side}_warp"][cols] == warp
        return ~same_block | (same_cta & (~same_warp | same_warp_ep))

    def _within_step(self, m, cols, gid, new, lane, t) -> None:
        order = np.lexsort((gid, cols))
        c, g, v = cols[order], gid[order], new[order]
        same = (c[1:] == c[:-1]) & (g[1:] != g[:-1]) & (v[1:] != v[:-1])
        hit = np.flatnonzero(same)
        if len(hit):
            k = order[hit[0] + 1]
            self._event(m, m.pc, t[lane[k]:lane[k] + 1], int(cols[k]), int(g[hit[0]]) - 1,
                        "write")

    def _report(self, m, sh, side, cols, race, lane, t, writing: bool) -> None:
        k = int(np.flatnonzero(race)[0])
        other = int(sh[f"{side}_gid"][cols[k]]) - 1
        self._event(m, int(sh[f"{side}_pc"][cols[k]]), t[lane[k]:lane[k] + 1], int(cols[k]),
                    other, "write" if side == "w" else "read")

    def _event(self, m, other_pc: int, who: np.ndarray, byte: int, other: int,
               other_kind: str) -> None:
        tpb = m.tpb
        gx, gy, _ = m.grid
        b = other // tpb
        self.rec.event("global-race", m, f"global-memory race with the {other_kind} at pc "
                       f"{other_pc}", who, other_pc=other_pc, byte=byte,
                       other_block=(b % gx, b // gx % gy, b // (gx * gy)),
                       other_thread=other % tpb)


__all__ = ["Hazards"]
