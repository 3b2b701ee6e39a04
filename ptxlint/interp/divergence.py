"""Control (sync) dependence: where divergent lanes rejoin, registers written on only
some of the paths differ between lanes even if each path wrote a uniform value.

For each block B ending in a conditional branch, its *region* is every block reachable
from B's successors before B's reconvergence point (its immediate post-dominator). A
register defined in the region may hold different values in different lanes wherever
paths from different arms of B meet: at the reconvergence point and at merge points
inside the region reachable from two arms. A loop exit is the reconvergence point of a
divergent exit branch: lanes leave at different iterations, so what the loop wrote is
varying after it (but not at the loop head, which only the staying lanes reach). When the interpreter finds B's
branch divergent, it marks those registers varying at those merge points. Marking every
register defined in the region (not only those defined on some paths) over-approximates
the phi nodes of the classic formulation, which is sound.

Refinement is the other way a branch makes its arms differ: each edge narrows the
predicate (and the registers its comparison read) to what holds on that arm, often one
value, which `reduce` reads as uniform among the arm's lanes (`%p` is 1 on one arm, 0 on
the other). Where the arms of a divergent branch meet, a register that was not uniform
at the branch but is uniform after the join is made varying again (the interpreter
records which registers each divergent branch's edges narrowed). A register uniform at
the branch stays uniform: narrowing it changed no lane's value.
"""
from __future__ import annotations

from functools import reduce
from operator import or_

from ..cfg import CFG
from ..deadline import Deadline


class SyncDependence:
    """Each branch's region, merge points and the registers its region defines, computed
    the first time it is asked for (`merges_of`): only for branches found divergent,
    while the fixpoint runs.

    A region is everything the branch reaches before its reconvergence point, so the
    regions of a kernel add up to branches x blocks where branches reconverge late (an
    early exit in every iteration of a chain of loops: each region is the rest of the
    kernel). So nothing is computed for a uniform branch; a divergent one's arms are
    searched once each, the registers its region writes are a bitset, and it keeps only
    its merge points: no sets per (branch, merge point) as when every branch's region was
    computed before the fixpoint (3 million entries and 450 MB for 5,000 blocks). The
    deadline is checked per branch (one search is linear in the blocks).
    """

    def __init__(self, cfg: CFG, deadline: Deadline | None = None):
        self.cfg = cfg
        self.deadline = deadline if deadline is not None else cfg.deadline
        self._succs = [b.succs for b in cfg.blocks]
        self._joins = frozenset(b.index for b in cfg.blocks if len(b.preds) > 1)
        self._bit: dict[str, int] = {}  # register key -> 1 << its index
        self._keys: list[str] = []  # index -> register key
        self._block_defs: list[int] | None = None  # per block, the registers it writes
        # branch block -> (registers its region defines, its merge blocks)
        self._branches: dict[int, tuple[int, tuple[int, ...]]] = {}
        # merge block -> the branches asked for so far whose arms meet there
        self.at_merge: dict[int, list[int]] = {}
        self._ensured: tuple[set | None, int] = (None, 0)  # a set all asked for, its size

    # ---- per branch ------------------------------------------------------------------
    def merges_of(self, branch: int) -> tuple[int, ...]:
        """The blocks where lanes that took different arms of `branch` meet (none when
        it is no branch)."""
        return self._branch(branch)[1]

    def defines(self, branch: int, key: str) -> bool:
        """Whether the region of `branch` writes register `key`."""
        bit = self._bit.get(key)
        return bit is not None and bool(self._branch(branch)[0] & bit)

    def defined_by(self, branches) -> set[str]:
        """The registers the regions of `branches` write."""
        known = self._branches
        bits = 0
        for b in branches:
            hit = known.get(b)
            bits |= (hit if hit is not None else self._branch(b))[0]
        return self._keys_of(bits)

    def _branch(self, branch: int) -> tuple[int, tuple[int, ...]]:
        hit = self._branches.get(branch)
        if hit is None:
            with self.deadline.phase("divergence regions"):
                hit = self._branches[branch] = self._region(branch)
            for m in hit[1]:
                self.at_merge.setdefault(m, []).append(branch)
        return hit

    def _region(self, branch: int) -> tuple[int, tuple[int, ...]]:
        """(registers defined in the region, merge blocks): blocks reachable from an arm
        without passing the reconvergence point (the branch's immediate post-dominator);
        a merge block is a join reached from two arms, or the reconvergence point. A
        loop head reached only through the arm that stays in the loop is not one: the
        lanes there agree."""
        if len(self._succs[branch]) < 2:
            return 0, ()
        stop = self.cfg.ipdom[branch]
        reached = [self._reach(s, stop) for s in self._succs[branch] if s != stop]
        once: set[int] = set()
        twice: set[int] = set()
        for r in reached:
            twice |= once & r
            once |= r
        merges = twice & self._joins
        if stop is not None:
            merges.add(stop)
        defs = reduce(or_, map(self._defs_per_block().__getitem__, once), 0)
        return defs, tuple(sorted(merges))

    def _reach(self, start: int, stop: int | None) -> set[int]:
        """Blocks reachable from `start` without passing `stop`."""
        succs = self._succs
        seen = {stop, start}
        add, todo = seen.add, [start]
        push, pop = todo.append, todo.pop
        while todo:
            for s in succs[pop()]:
                if s not in seen:
                    add(s)
                    push(s)
        seen.discard(stop)
        return seen

    def _defs_per_block(self) -> list[int]:
        if self._block_defs is None:
            self._block_defs = [self.bits(key for i in b.instructions for key in i.def_keys)
                                for b in self.cfg.blocks]
        return self._block_defs

    # ---- registers as bitsets ----------------------------------------------------------
    def bits(self, keys) -> int:
        out = 0
        table = self._bit
        for key in keys:
            bit = table.get(key)
            if bit is None:
                bit = table[key] = 1 << len(self._keys)
                self._keys.append(key)
            out |= bit
        return out

    def _keys_of(self, bits: int) -> set[str]:
        keys, out = self._keys, set()
        while bits:
            low = bits & -bits
            out.add(keys[low.bit_length() - 1])
            bits ^= low
        return out

    # ---- per merge block ---------------------------------------------------------------
    def branches_at(self, merge: int, divergent: set[int]) -> list[int]:
        """The divergent branches whose arms meet at `merge`. (`divergent` only grows,
        as the callers' sets do: one already seen at its size is all asked for.)"""
        seen, size = self._ensured
        if seen is not divergent or size != len(divergent):
            for b in divergent - self._branches.keys():
                self._branch(b)
            self._ensured = (divergent, len(divergent))
        return [b for b in self.at_merge.get(merge, ()) if b in divergent]

    def tainted(self, merge: int, divergent: set[int]) -> set[str]:
        """Registers that are varying on entry to `merge`, given the divergent branches."""
        return self.defined_by(self.branches_at(merge, divergent))
