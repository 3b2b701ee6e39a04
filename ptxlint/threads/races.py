"""Shared-memory races, decided pair by pair (the engine of `shared-memory-race`).

Pairs are pruned cheaply first: same `.shared` object, at least one write (two atomics
never race, nor two accesses with explicit memory-model semantics), ranges of offsets
that meet (from the final facts), and barrier intervals (`Intervals.concurrent`: the two
may run side by side, for threads of different warps or of one warp). The survivors are
decided thread by thread (`thread_pairs`): each address as a function of the thread
index, evaluated over the block, with the registers the facts narrowed at the access
(guards, branch conditions) telling which threads get there.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..ir.instruction import Instruction
from ..ir.module import Module
from ..ir.operands import Register
from .barrier_intervals import _bits, control_closure, intervals
from .block_uniform import block_variance
from ..interp.facts import Access, Facts
from .thread_eval import ThreadSpace, Unevaluable, pure_values
from .thread_exprs import Anchored, compared_by, expr_builder
from .loaded_words import loaded_words
from .thread_pairs import (Evaluated, Hit, Side, evaluate, first_overlap, hulls_meet, kept,
                           shifted)

STRONG = frozenset({"relaxed", "acquire", "release", "acq_rel", "sc"})
MAX_PAIRS = 4000  # pairs decided thread by thread per kernel; the rest are "unchecked"
NEAREST = 6  # branches around an access whose conditions select its threads


def is_write(acc: Access) -> bool:
    return acc.insn.access_kind in ("store", "atomic", "reduce")


def is_atomic(acc: Access) -> bool:
    return acc.insn.access_kind in ("atomic", "reduce")


def _strong(acc: Access) -> bool:
    return getattr(acc.insn, "semantics", "weak") in STRONG


def object_of(acc: Access) -> str | None:
    region = acc.address.region
    return region.obj if region is not None else None


@dataclass(frozen=True)
class Race:
    """Access `i` in thread `hit.t1` and access `j` in thread `hit.t2` touch a common
    byte; `sure`: in every execution that runs them (see `RaceFinder.decide`)."""

    i: int
    j: int
    hit: Hit
    same_warp: bool
    sure: bool


class RaceFinder:
    """`accesses`: the shared-memory accesses to consider (`ld`, `st`, `atom`, `red`)."""

    def __init__(self, facts: Facts, module: Module, accesses: list[Access]):
        self.accs = accesses
        self.facts = facts
        self.cfg = facts.cfg
        self.space = ThreadSpace.of(facts)
        self.cta = intervals(facts, module, "warps")
        self.warp = intervals(facts, module, "lanes")
        self.builder = expr_builder(facts)
        self.variance = block_variance(facts)
        self._sides: dict[int, Side | None] = {}
        self._evals: dict[int, Evaluated | None] = {}
        self._unstable: dict[tuple, list[int]] = {}
        self._based: dict[int, tuple[Evaluated | None, int]] = {}  # access: base, offset
        self._meets: dict[tuple, bool] = {}  # `_hulls_meet`
        self._memo = facts.derived("race accesses", _PerAccess)
        self.unchecked: set[int] = set()
        self.grouped: dict[tuple, list[Race]] = {}  # `races`: every race per statement
        # the reason the unchecked accesses are not checked (for the note)
        self.why = "whose addresses the analysis cannot relate"
        self.rows_only = not self.space.exact and self._multi_dimensional()
        if self.rows_only:
            self.why = ("of a kernel indexed by `%tid.y` or `%tid.z`: the block shape is not "
                        "known")

    def _multi_dimensional(self) -> bool:
        """The kernel reads `%tid.y`/`%tid.z` and the launch does not pin them: with the
        block shape unknown, one row of threads is no model of it."""
        entry = self.facts.in_states[self.cfg.entry]
        for name in ("%tid.y", "%tid.z"):
            v = entry.regs.get(name) if entry is not None else None
            if v is not None and v.singleton() is None:
                return True
        return False

    def races(self) -> list[Race]:
        """One race per written statement (`_group`), in order: the definite one if any,
        else the one where most threads meet another."""
        groups: dict[tuple, Race] = {}
        check = self.facts.deadline.check  # deciding a pair evaluates every thread
        for n, (i, j, same_warp) in enumerate(self.pairs()):
            check()
            if n >= MAX_PAIRS or self.rows_only:
                self.unchecked.update((i, j))
                continue
            found = self.decide(i, j, same_warp)
            if found is None:
                continue
            key = self._group(i, j)
            self.grouped.setdefault(key, []).append(found)
            best = groups.get(key)
            if best is None or (found.sure, found.hit.threads) > (best.sure, best.hit.threads):
                groups[key] = found
        return sorted(groups.values(), key=lambda r: (_line(self.accs[r.i].insn) or 0, r.j))

    def group_of(self, r: Race) -> list[Race]:
        """Every race found for the written statement of `r` (`races` reports one)."""
        return self.grouped.get(self._group(r.i, r.j), [r])

    def pairs(self) -> Iterator[tuple[int, int, bool]]:
        """(i, j, same_warp): candidate pairs, i a write, in program order."""
        insns = [a.insn for a in self.accs]
        branches = sorted(self.variance.divergent)
        cta = self.cta.concurrent(insns, branches)
        warp = self.warp.concurrent(insns, branches)
        info = [(is_write(a), is_atomic(a), _strong(a), object_of(a), a.address.si.lo,
                 a.address.si.hi, a.width) for a in self.accs]
        by_obj: dict[str | None, int] = {}
        writes = atomics = strong = 0  # bitsets
        for k, x in enumerate(info):
            by_obj[x[3]] = by_obj.get(x[3], 0) | 1 << k
            writes |= x[0] << k
            atomics |= x[1] << k
            strong |= x[2] << k
        tick = self.facts.deadline.tick
        for i, (w1, at1, st1, obj, lo1, hi1, wd1) in enumerate(info):
            if not w1 or obj is None:
                continue
            # a write before i was paired with i already; two atomics, two strong never race
            cand = cta[i] & by_obj[obj] & ~(writes & ((1 << i) - 1))
            cand &= ~(atomics if at1 else 0) & ~(strong if st1 else 0)
            while cand:
                tick()
                low = cand & -cand
                j = low.bit_length() - 1
                cand ^= low
                _, _, _, _, lo2, hi2, wd2 = info[j]
                if None not in (lo1, hi1, lo2, hi2) and not (lo1 < hi2 + wd2 and lo2 < hi1 + wd1):
                    continue  # the offsets the facts allow never meet
                yield i, j, bool(warp[i] >> j & 1)

    def _group(self, i: int, j: int) -> tuple:
        """One defect per write: its CUDA line (the copies of an unrolled loop are one
        statement), or the PTX instruction without line information."""
        loc = self.accs[i].insn.loc
        return ("cuda", loc.file, loc.line) if loc is not None else ("ptx", i)

    # ---- one pair ----------------------------------------------------------------------------
    def decide(self, i: int, j: int, same_warp: bool) -> Race | None:
        if self._base(i)[0] is None or self._base(j)[0] is None:
            self.unchecked.update((i, j))
            return None
        if not self._hulls_meet(i, j, same_warp):
            return None
        ea, eb = self.evaluated(i), self.evaluated(j)
        a, b = self.side(i), self.side(j)
        shared = self._shared(i, j)
        try:  # threads of two warps first: then only a CTA barrier is the fix
            hit = first_overlap(self.space, ea, a.width, eb, b.width, False, shared)
            if hit is None and same_warp:
                hit = first_overlap(self.space, ea, a.width, eb, b.width, True, shared)
        except Unevaluable:
            self.unchecked.update((i, j))
            return None
        if hit is None:
            return None
        if not hit.exact:  # the addresses differ by a value the analysis does not know
            self.unchecked.update((i, j))
            return None
        sure = self.space.exact and hit.exact and not ea.enumerated and not eb.enumerated \
            and self._ordered(i, j) and self._all_run(i) and self._all_run(j)
        return Race(i, j, hit, same_warp, sure)

    def _hulls_meet(self, i: int, j: int, same_warp: bool) -> bool:
        """`hulls_meet` once per pair of evaluations and distance between their offsets
        (an unrolled loop's copies ask the same question many times)."""
        (ba, oa), (bb, ob) = self._base(i), self._base(j)
        key = (id(ba), id(bb), oa - ob, same_warp)
        hit = self._meets.get(key)
        if hit is None:
            hit = self._meets[key] = hulls_meet(self.space, ba, bb, same_warp, oa - ob)
        return hit

    def _shared(self, i: int, j: int) -> frozenset:
        """The leaves both accesses read with one value for both threads."""
        ids_a = {leaf.ident for leaf in self.side(i).leaves}
        ids_b = {leaf.ident for leaf in self.side(j).leaves}
        return frozenset(x for x in ids_a & ids_b if self._stable(x, i, j))

    def smallest_block(self, r: Race) -> int:
        """The fewest threads a row-shaped block needs for the race of `r` (its pair of
        accesses, any two threads): 2 when the first two threads already race. Every
        value of the launch's other unknowns (`%ntid.x` among them) stays allowed, so
        no smaller block of the row races."""
        ea, eb = self.evaluated(r.i), self.evaluated(r.j)
        wa, wb = self.side(r.i).width, self.side(r.j).width
        shared = self._shared(r.i, r.j)

        def races_within(n: int) -> bool:
            fa, fb = first_threads(ea, n), first_threads(eb, n)
            try:
                hit = first_overlap(self.space, fa, wa, fb, wb, False, shared)
                if hit is None and r.same_warp:
                    hit = first_overlap(self.space, fa, wa, fb, wb, True, shared)
            except Unevaluable:
                return True  # not decided: it may
            return hit is not None  # inexact (an unknown gap between the addresses): it may

        low, high = 1, max(r.hit.t1, r.hit.t2) + 1  # one thread never races; `high` does
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (low, mid) if races_within(mid) else (mid, high)
        return high

    def evaluated(self, k: int) -> Evaluated | None:
        """Access k for every thread; accesses that differ only in the constant offset
        (an unrolled loop's `[%r4]`, `[%r4+128]`...) share the evaluation (`_base`)."""
        if k not in self._evals:
            acc = self.accs[k]
            hit = self._memo.evals.get(id(acc))
            if hit is None:
                base, offset = self._base(k)
                hit = self._memo.evals[id(acc)] = \
                    (acc, None if base is None else shifted(base, offset))
            self._evals[k] = hit[1]
        return self._evals[k]

    def _base(self, k: int) -> tuple[Evaluated | None, int]:
        """Access k for every thread as (the evaluation of its address without the
        constant offset, the offset): `evaluated` shifts it only when asked."""
        if k not in self._based:
            acc = self.accs[k]
            hit = self._memo.based.get(id(acc))
            if hit is None:
                hit = self._memo.based[id(acc)] = (acc, self._evaluate(k))
            self._based[k] = hit[1]
        return self._based[k]

    def _evaluate(self, k: int) -> tuple[Evaluated | None, int]:
        side = self.side(k)
        if side is None:
            return None, 0
        key = (id(side.address), side.width,
               tuple((n.skey, si, bits) for n, si, bits in side.constraints),
               tuple(sorted(side.sis.items(), key=str)), tuple(map(id, side.words)))
        bases = self._memo.bases
        if key not in bases:
            try:
                bases[key] = evaluate(self.space, side)
            except Unevaluable:
                bases[key] = None
        return bases[key], side.offset

    def side(self, k: int) -> Side | None:
        if k not in self._sides:
            acc = self.accs[k]
            hit = self._memo.sides.get(id(acc))
            if hit is None:
                hit = self._memo.sides[id(acc)] = (acc, self._side(acc))
            self._sides[k] = hit[1]
        return self._sides[k]

    def _side(self, acc: Access) -> Side | None:
        view = self.builder.at(acc.insn, acc.state)
        addr, offset = view.address()
        if addr.opaque:
            return None
        constraints, words = self._constraints(acc, view)
        side = Side(addr, acc.width, object_of(acc), constraints, offset=offset, words=words)
        for leaf in side.leaves:
            resolve = leaf.op == "leaf" and leaf.si is None and not leaf.pinned \
                and leaf.ident[0] == "reg"
            v = acc.state.regs.get(leaf.value) if resolve else None
            if v is not None and v.region is None:
                side.sis[leaf.ident] = v.si
        return side

    def _constraints(self, acc: Access, view: Anchored) -> list:
        """What the facts know at the access about the registers that decide whether a
        thread gets there: the guards of the branches it depends on (and its own) and
        the registers those guards compare."""
        out, words = [], []
        for reg, is_pred in self._deciding(acc.insn):
            v = acc.state.regs.get(reg.key)
            if v is None or v.region is not None or (
                    v.singleton() is None if is_pred else v.si.lo is None and v.si.hi is None):
                continue  # a predicate that may go either way, a register with no bound
            node = view.register(reg, acc.insn)
            if node.opaque or not node.threads:  # perhaps a word of memory nobody writes
                loads = loaded_words(self.builder)
                word = loads.from_predicate(view, reg, v.singleton(), acc.insn) if is_pred \
                    else loads.word(view, reg, v.si, acc.insn) if node.opaque else None
                if word is not None:
                    words.append(word)
                continue
            if node.opaque or not node.threads or v.si.lo is None or v.si.hi is None:
                continue
            # a predicate is one bit (`not.pred` nodes carry bits=1, `not.b32` its width)
            out.append((node, v.si, 1 if node.op == "setp" else node.bits))
        return out, words

    def _deciding(self, insn: Instruction) -> list[tuple[Register, bool]]:
        b = self.cfg.block_of(insn)
        regs = self._memo.deciding.get(b)
        if regs is None:
            near = control_closure(self.cfg, b)[:NEAREST]
            guards = [self.cfg.blocks[d].terminator for d in near]
            regs = self._memo.deciding[b] = self._compared_by(
                [g.guard.register for g in guards if g is not None and g.guard is not None])
        if insn.guard is not None:
            regs = regs + self._compared_by([insn.guard.register])
        return regs

    def _compared_by(self, preds: list[Register]) -> list[tuple[Register, bool]]:
        return compared_by(self.builder.defs, preds)

    def stable(self, ident: tuple, i: int, j: int) -> bool:
        return self._stable(ident, i, j)

    def _stable(self, ident: tuple, i: int, j: int) -> bool:
        """A leaf both accesses read has one value for both threads: no definition of it
        can run between them (`_unstable`)."""
        kind = ident[0]
        if kind == "special":
            return True
        if kind not in ("reg", "count"):
            return False
        partners = self._unstable.get(ident)
        if partners is None:
            partners = self._unstable[ident] = self._unstable_pairs(ident[1])
        return not (partners[i] >> j & 1 or partners[j] >> i & 1)

    def _unstable_pairs(self, key: str) -> list[int]:
        """Per access i, the accesses j such that a definition of `key` is reachable from
        i and reaches j with no separator on the way (bitsets)."""
        insns = [a.insn for a in self.accs]
        defs = self.builder.defs.get(key, [])
        out = [0] * len(insns)
        if not defs:
            return out
        self.facts.deadline.check()
        after = [0] * len(defs)  # per definition: the accesses it reaches
        for j, reached_by in enumerate(self.cta.reaching(defs, insns)):
            for d in _bits(reached_by):
                after[d] |= 1 << j
        for d, before in enumerate(self.cta.reaching(insns, defs)):
            if after[d]:
                for i in _bits(before):
                    out[i] |= after[d]
        return out

    def _ordered(self, i: int, j: int) -> bool:
        """Every execution of one runs the other in the same interval: the same
        instruction, or one block with no separator between."""
        if i == j:
            return True
        (b1, k1), (b2, k2) = (self.cfg.position(self.accs[k].insn) for k in (i, j))
        return b1 == b2 and self.cta.no_separator(b1, min(k1, k2) + 1, max(k1, k2))

    def _all_run(self, k: int) -> bool:
        """The threads the constraints select are exactly those that run the access:
        every condition on the way splits by the thread index alone."""
        acc = self.accs[k]
        conds = [acc.insn] if acc.insn.guard is not None else []
        conds += [self.cfg.blocks[d].terminator for d in
                  control_closure(self.cfg, self.cfg.block_of(acc.insn))
                  if d in self.variance.divergent]
        for insn in conds:
            if insn is None or insn.guard is None:
                return False
            view = self.builder.at(acc.insn, acc.state)
            node = view.register(insn.guard.register, insn)
            v = acc.state.regs.get(insn.guard.register.key)
            if pure_values(node, self.space) is None or v is None or v.singleton() is None:
                return False
        return True



class _PerAccess:
    """What a `RaceFinder` works out per access (by identity, the access kept alive with
    it) and per block, made once per facts: both race rules and `uninit_memory` build
    finders over the same accesses."""

    def __init__(self, facts: Facts):
        self.sides: dict[int, tuple[Access, Side | None]] = {}
        self.evals: dict[int, tuple[Access, Evaluated | None]] = {}  # access -> (access, it)
        self.based: dict[int, tuple[Access, tuple[Evaluated | None, int]]] = {}  # `_base`
        self.bases: dict[tuple, Evaluated | None] = {}  # see `RaceFinder._evaluate`
        self.deciding: dict[int, list[tuple[Register, bool]]] = {}  # `_deciding`


def first_threads(e: Evaluated, n: int) -> Evaluated:
    """`e` for the threads below n only."""
    return kept(e, e.thread < n)


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


__all__ = ["RaceFinder", "Race", "is_write", "is_atomic", "object_of"]
