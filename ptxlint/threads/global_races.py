"""Global-memory races between the threads of one launch (the engine of
`global-memory-race`).

Two `ld`/`st` of the same kernel buffer race when two threads of the launch may touch a
common byte, one of them writing, with nothing ordering them: threads of *different
blocks* are never ordered (short of a grid-wide synchronisation), threads of one block
only by a barrier (`Intervals`, as for shared memory). Atomics never race, nor two
accesses that both carry memory-model semantics (`.relaxed`, `.acquire`, `.release`,
`.volatile`), nor two writes of a value both threads certainly agree on (`value_sources`).

Each access is evaluated for every thread of a block (`RaceFinder.evaluated`), the
block index `%ctaid` being a small leaf enumerated row by row when the launch gives the
grid. A block dimension the address does not read is *free*: every block along it
touches the same bytes (`out[threadIdx.x] = ...`), and with more than one block there
(or an unknown grid: the finding says "when the grid has more than one block") the same
thread of two blocks collides. Bytes are compared modulo the coefficients of what stays
symbolic: a grid-stride loop's trip count `k` in `i + k * gridDim.x * blockDim.x` never
makes two threads meet; a collision found only modulo a symbol is not reported.

A cross-block pair is taken as synchronised when a gpu-scope fence (`membar.gl`,
`fence.*.gpu`) lies on a path between the two accesses: the threadfence-reduction
pattern (write, fence, atomic counter, the last block reads everyone's result).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..ir.instruction import Instruction
from ..ir.instructions.memory import Ld, Ldu, St
from ..ir.instructions.sync import Fence, Membar
from ..ir.module import Module
from ..ir.operands import Immediate, registers_in
from .barrier_intervals import control_closure, intervals
from ..interp.facts import Access, Facts
from .races import RaceFinder
from .thread_eval import Unevaluable
from .global_bytes import (blocks_meet, differ, fill, group_keys, group_spans, linear,
                           same_starts, spans_meet, thread_groups, threads_meet, unit,
                           warp_groups)
from .thread_pairs import enumerable, symbol_gap
from .value_sources import ValueSources

STRONG = frozenset({"relaxed", "acquire", "release", "acq_rel", "sc", "volatile"})
CTAID = ("%ctaid.x", "%ctaid.y", "%ctaid.z")
MAX_PAIRS = 2000
MAX_ENTRIES = 1 << 20  # units one access may expand to; more: not checked
# (thread, row) entries of one access (threads x blocks x other leaves): a grid of 32 x 32
# blocks of 256 threads is 2^18 and costs a fifth of a second per pair; beyond this the
# pair is not checked (the kernel's time budget matters more)
MAX_THREAD_ROWS = 1 << 17


@dataclass(frozen=True)
class Collision:
    t1: int  # thread (linear id in its block)
    b1: tuple[int, int, int]  # block
    t2: int
    b2: tuple[int, int, int]
    byte: int  # first common byte offset in the object (when exact)


@dataclass(frozen=True)
class GlobalRace:
    i: int
    j: int
    hit: Collision
    cross_block: bool
    sure: bool
    grid_known: bool  # False: "when the grid has more than one block"


def participates(acc: Access) -> bool:
    r = acc.address.region
    return isinstance(acc.insn, (Ld, Ldu, St)) and acc.width > 0 and r is not None \
        and r.space == "global" and r.obj is not None


def _strong(acc: Access) -> bool:
    insn = acc.insn
    return getattr(insn, "semantics", "weak") in STRONG or "volatile" in insn.mods


class GlobalRaceFinder:
    def __init__(self, facts: Facts, module: Module, accesses: list[Access]):
        self.facts = facts
        self.accs = accesses
        self.finder = RaceFinder(facts, module, accesses)
        self.space = self.finder.space
        launch = facts.ctx.launch
        self.grid = launch.grid if launch is not None else None
        self.unchecked: set[int] = set()
        self.reach = intervals(facts, module, "any")
        self._fences = [i for b in facts.cfg.blocks for i in b.instructions if _gpu_fence(i)]
        self._sources: ValueSources | None = None
        self._block_ids: dict[int, np.ndarray] = {}
        self._group_spans: dict[tuple, tuple] = {}  # `_spans`
        self._unit_memo: dict[tuple, tuple] = {}  # `_units`
        self._decided_memo: dict[int, bool] = {}

    @cached_property
    def block_aware(self) -> bool:
        """The kernel tells blocks apart somewhere (`%ctaid`, `%nctaid`): it is meant for a
        grid of several blocks (asked only of a finding that needs it)."""
        return any(r.is_special and r.name.startswith(("%ctaid", "%nctaid"))
                   for b in self.facts.cfg.blocks for i in b.instructions for r in i.uses)

    # ---- pairs -------------------------------------------------------------------------------
    def races(self) -> list[GlobalRace]:
        found: dict[tuple, GlobalRace] = {}
        if not self.space.exact and self.finder.rows_only:
            self.unchecked.update(range(len(self.accs)))
            return []
        info = [(a.insn.access_kind == "store", _obj(a), _strong(a), a.address.si.lo,
                 a.address.si.hi, a.width) for a in self.accs]
        usable: dict[int, bool] = {}  # asked only of accesses some cheap test pairs up

        def ok(k: int) -> bool:
            if k not in usable:
                usable[k] = self._usable(k)
            return usable[k]

        by_obj: dict[str | None, list[int]] = {}
        for k, x in enumerate(info):
            by_obj.setdefault(x[1], []).append(k)
        pairs = []
        for i, (w1, obj, st1, lo1, hi1, wd1) in enumerate(info):
            if not w1:
                continue
            for j in by_obj[obj]:
                w2, _, st2, lo2, hi2, wd2 = info[j]
                if j < i and w2 or st1 and st2:
                    continue
                if None not in (lo1, hi1, lo2, hi2) and not (lo1 < hi2 + wd2 and
                                                             lo2 < hi1 + wd1):
                    continue  # the offsets the facts allow never meet
                if not (ok(i) and ok(j)):
                    self.unchecked.update((i, j))
                    continue
                pairs.append((i, j))
        if not pairs:
            return []
        insns = [a.insn for a in self.accs]
        branches = sorted(self.finder.variance.divergent)
        cta = self.finder.cta.concurrent(insns, branches)
        warp = self.finder.warp.concurrent(insns, branches)
        check = self.facts.deadline.check
        for n, (i, j) in enumerate(pairs):
            check()
            if n >= MAX_PAIRS:
                self.unchecked.update((i, j))
                continue
            race = self.decide(i, j, bool(cta[i] >> j & 1), bool(warp[i] >> j & 1))
            if race is None:
                continue
            key = _group(self.accs[i].insn)
            best = found.get(key)
            if best is None or (race.sure, race.cross_block) > (best.sure, best.cross_block):
                found[key] = race
        return sorted(found.values(), key=lambda r: (_line(self.accs[r.i].insn) or 0, r.j))

    def _usable(self, k: int) -> bool:
        """Access k is evaluated per thread, its block index enumerated or absent, within
        the size bounds, and the threads that run it are known."""
        side = self.finder.side(k)
        if side is None or any(_unknown_block(leaf) for leaf in side.address.leaves):
            return False  # checked before evaluating: without a grid, most addresses
        e = self.finder.evaluated(k)
        return e is not None and not _block_symbols(e) and e.row.size <= MAX_THREAD_ROWS \
            and self._decided(k)

    def decide(self, i: int, j: int, cta: bool, warp: bool) -> GlobalRace | None:
        """Both accesses `_usable`."""
        ea, eb = self.finder.evaluated(i), self.finder.evaluated(j)
        shared = self._grid_uniform(i, j)
        gap = symbol_gap(ea, eb, shared)
        try:
            hit = self._collide(i, j, ea, eb, cta, warp, shared, gap)
        except Unevaluable:
            self.unchecked.update((i, j))
            return None
        if hit is None:
            return None
        if gap:  # met only modulo what the analysis does not know: not checked
            self.unchecked.update((i, j))
            return None
        cross = hit.b1 != hit.b2
        grid_known = self.grid is not None
        sure = self.space.exact and not _other_rows(ea, eb) and (
            grid_known if cross else i == j or self.finder._ordered(i, j))  # noqa: SLF001
        return GlobalRace(i, j, hit, cross, sure, grid_known)

    def _decided(self, k: int) -> bool:
        """The threads (and rows) the constraints select are exactly those that run access
        `k`: its guard and every block-varying branch on the way compare values the
        evaluation knows per thread and row (thread indices, enumerated leaves such as
        the block index or a loop's trip), and the facts know each one's outcome there."""
        hit = self._decided_memo.get(k)
        if hit is None:
            hit = self._decided_memo[k] = self._decide_threads(k)
        return hit

    def _decide_threads(self, k: int) -> bool:
        acc = self.accs[k]
        e = self.finder.evaluated(k)
        cfg = self.finder.cfg
        conds = [acc.insn] if acc.insn.guard is not None else []
        conds += [cfg.blocks[d].terminator for d in control_closure(cfg, cfg.block_of(acc.insn))
                  if d in self.finder.variance.divergent]
        view = self.finder.builder.at(acc.insn, acc.state)
        for insn in conds:
            if insn is None or insn.guard is None or e is None:
                return False
            node = view.register(insn.guard.register, insn)
            v = acc.state.regs.get(insn.guard.register.key)
            if node.opaque or v is None or v.singleton() is None or \
                    any(leaf.ident not in e.values for leaf in node.leaves):
                return False
        return True

    # ---- the search ----------------------------------------------------------------------------
    def _collide(self, i: int, j: int, ea, eb, cta: bool, warp: bool, shared: frozenset,
                 gap: int) -> Collision | None:
        """Two entries, one of each side, on a common byte (modulo `gap`) from two threads
        the launch does not order and whose values may differ: first across blocks, then
        within one block between the same two barriers."""
        across = not self._fenced(i, j)
        within = cta or warp
        free = sorted(self._free(ea) | self._free(eb))
        if not gap:  # cheap tests on each block's and each thread's span of bytes
            wa, wb = self.accs[i].width, self.accs[j].width
            across = across and (spans_meet(ea, wa, eb, wb) if free else blocks_meet(
                self._spans(ea, wa, warp_groups), self._spans(eb, wb, warp_groups)))
            within = within and threads_meet(self._spans(ea, wa, thread_groups),
                                             self._spans(eb, wb, thread_groups))
        if not (across or within):
            return None
        deps = self._value_deps(i, j)
        if deps is not None and not same_starts(ea, self.accs[i].width, eb,
                                                self.accs[j].width):
            deps = None  # overlapping at different starts: the bytes differ anyway
        if deps is not None and not deps:
            return None  # both write a value every thread agrees on
        by_tid = deps is not None and not deps & {"block", "any"}  # values differ by tid
        within = within and (deps is None or bool(deps & {"tid", "any"}))
        if not (across or within):
            return None
        u = unit(ea, self.accs[i].width, eb, self.accs[j].width, gap)
        (ua, ta, ba), ka = self._units(ea, self.accs[i].width, shared, gap, u)
        (ub, tb, bb), kb = self._units(eb, self.accs[j].width, shared, gap, u)
        if not ua.size or not ub.size:
            return None
        key_a, key_b = group_keys([ka, ua], [kb, ub])
        if across:
            found = self._across(key_a, ta, ba, ua, key_b, tb, bb, free, by_tid)
            if found is not None:
                return Collision(found.t1, found.b1, found.t2, found.b2, found.byte * u)
        if not within:
            return None
        # one block: key on the block too (and on the warp when only `bar.warp.sync` is
        # missing between them)
        cols_a, cols_b = [key_a, linear(ba)], [key_b, linear(bb)]
        if not cta:
            cols_a.append(ta // 32)
            cols_b.append(tb // 32)
        ga, gb = group_keys(cols_a, cols_b)
        pq = differ(ga, ta, gb, tb)
        if pq is None:
            return None
        p, q = pq
        return Collision(int(ta[p]), fill(ba[p]), int(tb[q]), fill(ba[p]), int(ua[p]) * u)

    @staticmethod
    def _across(key_a, ta, ba, ua, key_b, tb, bb, free: list[int],
                by_tid: bool) -> Collision | None:
        """Two entries on one byte from different blocks (and, `by_tid`, different
        thread indices: the written values depend on nothing else)."""
        if free:  # the same bytes in every block along a free dimension
            pq = differ(key_a, ta, key_b, tb) if by_tid else \
                differ(key_a, np.zeros_like(key_a), key_b, np.ones_like(key_b))
            if pq is not None:
                p, q = pq
                b1, b2 = fill(ba[p]), list(fill(bb[q]))
                b2[free[0]] = 1 if b1[free[0]] == 0 else 0
                return Collision(int(ta[p]), b1, int(tb[q]), tuple(b2), int(ua[p]))
        la, lb = linear(ba), linear(bb)
        pq = differ(key_a, la, key_b, lb)
        if pq is None:
            return None
        p, q = pq
        if by_tid and ta[p] == tb[q]:
            alt = np.flatnonzero((key_b == key_a[p]) & (lb != la[p]) & (tb != ta[p]))
            if not alt.size:
                return None
            q = int(alt[0])
        return Collision(int(ta[p]), fill(ba[p]), int(tb[q]), fill(bb[q]), int(ua[p]))

    def _units(self, e, w: int, shared: frozenset, gap: int, u: int):
        """Per unit of `u` bytes an entry covers: (unit, thread, block coordinates, -1
        where free), and a key of its row's values of the grid-uniform leaves; made once
        per access and question (an access meets several others)."""
        key = (id(e), w, shared, gap, u)
        hit = self._unit_memo.get(key)
        if hit is None:
            hit = self._unit_memo[key] = self._units_of(e, w, shared, gap, u)
        return hit

    def _units_of(self, e, w: int, shared: frozenset, gap: int, u: int):
        n = w // u
        if e.row.size * n > MAX_ENTRIES:
            raise Unevaluable("too many bytes")
        rows = e.row
        units = ((e.start // u)[:, None] + np.arange(n)[None, :]).ravel()
        if gap:
            units %= gap // u
        blk = np.full((rows.size, 3), -1, np.int64)
        for d, name in enumerate(CTAID):
            vals = e.values.get(("special", name))
            pinned = self._pinned(name)
            if vals is not None:
                blk[:, d] = vals[rows]
            elif pinned is not None:
                blk[:, d] = pinned
        key = np.zeros(rows.size, np.int64)
        for k, ident in enumerate(sorted((x for x in shared if x in e.values), key=str)):
            key = key * np.int64(1000003) + e.values[ident][rows] + k + 1
        rep = np.repeat
        return (units, rep(e.thread, n), rep(blk, n, axis=0)), rep(key, n)

    def _blocks(self, e) -> np.ndarray:
        """Per entry of `e`, its block as one number (free coordinates as 0)."""
        hit = self._block_ids.get(id(e))
        if hit is None:
            blk = np.zeros((e.row.size, 3), np.int64)
            for d, name in enumerate(CTAID):
                vals = e.values.get(("special", name))
                pinned = self._pinned(name)
                if vals is not None:
                    blk[:, d] = vals[e.row]
                elif pinned is not None:
                    blk[:, d] = pinned
            hit = self._block_ids[id(e)] = linear(blk)
        return hit

    def _spans(self, e, w: int, groups) -> tuple:
        """`group_spans` of an access by `groups` (its warps or threads), once per access."""
        key = (id(e), w, groups)
        hit = self._group_spans.get(key)
        if hit is None:
            hit = self._group_spans[key] = group_spans(groups(self._blocks(e), e), e, w)
        return hit

    def _pinned(self, name: str) -> int | None:
        entry = self.facts.in_states[self.facts.cfg.entry]
        v = entry.regs.get(name) if entry is not None else None
        return v.singleton() if v is not None else None

    def _free(self, e) -> set[int]:
        """Block dimensions the access does not read and along which the grid may have
        more than one block."""
        out = set()
        for d, name in enumerate(CTAID):
            if ("special", name) in e.values or self._pinned(name) is not None:
                continue
            if self.grid is None or self.grid[d] > 1:
                out.add(d)
        return out

    def _grid_uniform(self, i: int, j: int) -> frozenset:
        """Leaves every thread of the launch agrees on (kernel parameters, the launch
        shape) that both sides read: they cancel, or rows are matched on them."""
        sides = [self.finder.side(k) for k in (i, j)]
        if None in sides:
            return frozenset()
        ids = [{leaf.ident for leaf in s.leaves if _grid_leaf(leaf)} for s in sides]
        return frozenset(ids[0] & ids[1])

    # ---- what orders or excuses a pair -----------------------------------------------------------
    def _value_deps(self, i: int, j: int) -> frozenset[str] | None:
        """For two writes: what their values may depend on (`value_sources`: the empty
        set when every thread writes the same value); None when one is a read or the
        two values are unrelated."""
        a, b = self.accs[i], self.accs[j]
        if b.insn.access_kind != "store":
            return None
        va, vb = a.insn.operands[1], b.insn.operands[1]
        if isinstance(va, Immediate) and isinstance(vb, Immediate):
            return frozenset() if va.value == vb.value else None
        if i != j and str(va) != str(vb):
            return None
        if self._sources is None:
            self._sources = ValueSources(self.facts)
        if i != j and any(len(self._sources.defs_of(r)) != 1 for r in registers_in(va)):
            return None  # the same register, maybe written again between the two
        deps = self._sources.of_operand(va)
        if "iter" in deps:
            if self._in_loop(a.insn) or self._in_loop(b.insn):
                return None  # two threads on different trips store different values
            deps = deps - {"iter"}
        return deps

    def _in_loop(self, insn: Instruction) -> bool:
        b = self.finder.cfg.block_of(insn)
        return any(b in loop.body for loop in self.finder.cfg.natural_loops().values())

    def _fenced(self, i: int, j: int) -> bool:
        x, y = self.accs[i].insn, self.accs[j].insn
        reach = self.reach.reaches
        return any(reach(x, f) and reach(f, y) or reach(y, f) and reach(f, x)
                   for f in self._fences)


def _obj(acc: Access) -> str | None:
    return acc.address.region.obj if acc.address.region is not None else None


def _unknown_block(leaf) -> bool:
    """A block index leaf too large to enumerate (no grid given): it stays a symbol."""
    if leaf.ident[0] != "special" or leaf.ident[1] not in CTAID:
        return False
    return enumerable(leaf.si) is None


def _block_symbols(e) -> bool:
    """The address keeps a symbol standing on the block index: not comparable."""
    return any(any(x[0] == "special" and x[1] in CTAID for x in idents)
               for _, _, idents in e.sym)


def _other_rows(ea, eb) -> bool:
    """Rows enumerate something besides the block index (a loop count, a loaded value)."""
    return any(ident[0] != "special" or ident[1] not in CTAID
               for e in (ea, eb) for ident in e.values)


def _grid_leaf(leaf) -> bool:
    ident = leaf.ident
    if ident[0] == "special":
        return ident[1] not in CTAID
    if ident[0] != "reg" or not leaf.defs:
        return False
    # kernel parameters, also converted in place (`cvta.to.global.u64 %rd1, %rd1`)
    return all(isinstance(d, Ld) and d.space == "param" or d.opcode in ("cvta", "mov") and
               all(r.key == ident[1] for r in d.uses) for d in leaf.defs)


def _gpu_fence(insn: Instruction) -> bool:
    if isinstance(insn, Membar):
        return "gl" in insn.mods or "sys" in insn.mods
    return isinstance(insn, Fence) and any(m in ("gpu", "sys") for m in insn.mods)


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


def _group(insn: Instruction) -> tuple:
    """One finding per written instruction (the report groups the copies of one CUDA
    line; the soundness suite matches each instruction's own races)."""
    return ("ptx", id(insn))


__all__ = ["GlobalRaceFinder", "GlobalRace", "Collision", "participates"]
