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

from collections import defaultdict

from ..cfg import CFG


class SyncDependence:
    def __init__(self, cfg: CFG):
        self.cfg = cfg
        # merge block -> [(branch block, register keys defined in its region)]
        self.at_merge: dict[int, list[tuple[int, frozenset[str]]]] = defaultdict(list)
        # branch block -> the merge blocks its divergence affects
        self.merges_of: dict[int, set[int]] = {}
        ipdom = cfg.ipdom
        self._succs = [b.succs for b in cfg.blocks]
        block_defs = [frozenset(key for i in b.instructions for key in i.def_keys)
                      for b in cfg.blocks]
        joins = {b.index for b in cfg.blocks if len(b.preds) > 1}
        for block in cfg.blocks:
            if len(block.succs) < 2:
                continue
            stop = ipdom[block.index]
            reached = [self._region(s, stop) for s in block.succs if s != stop]
            region = set().union(*reached)
            defs = frozenset().union(*[block_defs[b] for b in region])
            # paths from different arms meet here (a loop head reached only through the
            # arm that stays in the loop is not such a point: the lanes there agree)
            merges = {b for b in region & joins if sum(b in r for r in reached) > 1}
            if stop is not None:
                merges.add(stop)
            for m in merges:
                self.at_merge[m].append((block.index, defs))
            self.merges_of[block.index] = merges

    def _region(self, start: int, stop: int | None) -> set[int]:
        """Blocks reachable from `start` without passing `stop`."""
        seen: set[int] = {stop}
        todo = [start]
        succs = self._succs
        while todo:
            b = todo.pop()
            if b not in seen:
                seen.add(b)
                todo.extend(succs[b])
        seen.discard(stop)
        return seen

    def tainted(self, merge: int, divergent: set[int]) -> set[str]:
        """Registers that are varying on entry to `merge`, given the divergent branches."""
        out: set[str] = set()
        for branch, defs in self.at_merge.get(merge, ()):
            if branch in divergent:
                out |= defs
        return out

    def branches_at(self, merge: int, divergent: set[int]) -> list[int]:
        """The divergent branches whose arms meet at `merge`."""
        return [branch for branch, _ in self.at_merge.get(merge, ()) if branch in divergent]
