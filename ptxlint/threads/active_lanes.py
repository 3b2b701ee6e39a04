"""Which threads of a block run one memory access, and the address each of them uses:
the per-thread questions behind the warp rules (`rules/sites.py`), asked on the final
facts with the expressions of `thread_exprs` evaluated over the block (`thread_eval`).

A thread runs an access only when it passes every condition that decides the access:
its own guard and the branches its block is control dependent on (`control_closure`),
each read as the facts narrowed it at the access (the predicate known true there, the
compared index in 0..15), as `races` selects threads. Small uniform leaves (a loop
counter, `%ctaid.x`, a buffer parity) are enumerated, one row per assignment, so one
evaluation covers every value they take; larger ones stay symbols, the same in every
thread, which cancel between lanes.

The selected threads are a superset of those that run the access (a condition the
evaluator cannot compute selects every thread), so a cost counted over them is an upper
bound. `BlockLanes.exact` says more: every condition that can split the threads of a
warp or of a block (the access's guard unless it is uniform, and each branch deciding
it that may send threads different ways, `warp == 0` included) was evaluated exactly,
thread by thread, in every row, so each row's selection is the set of threads that run
the access when the leaves take that row's values. Such a branch that leaves a loop
around the access is not exact: a thread that left in an earlier trip may pass the
condition again in a later one.

Accesses of one basic block that nothing between them can tell apart share one answer
(`_Twins`): a warp reduction's shuffles, a tile's loads at consecutive offsets.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..ir.operands import Address, Register, Symbol
from .barrier_intervals import control_closure
from .block_uniform import block_variance
from ..interp.facts import Access, Facts
from .thread_eval import I64, Evaluator, ThreadSpace, Unevaluable, members, modulus, signed
from .thread_exprs import Anchored, Node, compared_by, expr_builder
from .thread_pairs import enumerable, grid
from .toggles import toggle_groups

CELLS = 1 << 18  # rows x threads per access: every access of a kernel may ask
NEAREST = 6  # branches around an access whose compared registers narrow its threads


@dataclass(frozen=True, eq=False)
class BlockLanes:
    """One access over the block: `mask[row, thread]` whether the thread may run it when
    the enumerated leaves take the row's values (`values`: per leaf identity, its value
    in each row), `start[row, thread]` the byte offset it accesses (into the access's
    object when it has one; None when only the threads were asked), apart from a
    warp-uniform symbolic part that is a multiple of `sym_gcd` (0: none)."""

    space: ThreadSpace
    mask: np.ndarray
    start: np.ndarray | None
    exact: bool
    sym_gcd: int
    values: dict[tuple, np.ndarray]
    names: dict[tuple, str]  # leaf identity -> what to call it in a note

    @property
    def rows(self) -> int:
        return self.mask.shape[0]

    def active(self) -> np.ndarray:
        """Per thread of the block, whether it may run the access in some row."""
        return self.mask.any(axis=0)


def block_lanes(facts: Facts, acc: Access, address: bool = True,
                cells: int = CELLS) -> BlockLanes | None:
    """The threads (and with `address`, the offsets) of `acc`; None when the address is
    not a computable function of the thread, when the block shape is unknown and an
    address is asked (with no shape only the threads are answered, over one row of as
    many threads as the bounds allow, when the kernel reads no `%tid.y`/`%tid.z`)."""
    space = ThreadSpace.of(facts)
    if not space.exact and (address or _reads_rows(facts)):
        return None
    view = expr_builder(facts).at(acc.insn, acc.state)
    return facts.derived("active_lanes.twins", _Twins).lanes(acc, view, space, address, cells)


class _Twins:
    """`block_lanes` answers, shared between accesses of one basic block that ask the
    same question (same guard, object and address base) with nothing in between
    writing a register the answer could follow, and the same values in the registers
    it read: their conditions and addresses are then the same expressions of the same
    values, so only the constant offset of the address may differ."""

    def __init__(self, facts: Facts):
        self.facts = facts
        self.builder = expr_builder(facts)
        self.done: dict[tuple, list[_Answer]] = {}
        self._slices: dict[tuple, frozenset[str]] = {}
        self._counts: dict[tuple, list[int]] = {}

    def lanes(self, acc: Access, view: Anchored, space: ThreadSpace, address: bool,
              cells: int) -> BlockLanes | None:
        insn = acc.insn
        addr = insn.address if address else None  # type: ignore[attr-defined]
        base = addr.base if isinstance(addr, Address) else None
        offset = addr.offset if isinstance(addr, Address) else 0
        guard = insn.guard
        key = (acc.block, address, cells, acc.guard_uniform, acc.address.region,
               None if guard is None else (guard.register.key, guard.negated),
               ("reg", base.key) if isinstance(base, Register) else
               ("sym", base.name) if isinstance(base, Symbol) else None,
               None if not address else type(addr))
        pos = self.builder.cfg.position(insn)[1]
        unrefined = self.builder.state(insn) if guard is not None else None
        found = self.done.setdefault(key, [])
        for a in reversed(found):
            if self._same(a, pos, acc.state, view.anchor_state, unrefined, key):
                if a.lanes is None or offset == a.offset:
                    return a.lanes
                return replace(a.lanes, start=a.lanes.start + (offset - a.offset))
        lanes, reads = _compute(self.facts, acc, view, space, address, cells)
        found.append(_Answer(pos, acc.state, view.anchor_state, unrefined, reads, offset,
                             lanes))
        return lanes

    def _same(self, a: _Answer, pos: int, state, anchor_state, unrefined, key: tuple) -> bool:
        for mine, theirs in ((state, a.state), (anchor_state, a.anchor_state),
                             (unrefined, a.unrefined)):
            if mine is theirs:
                continue
            if mine is None or theirs is None:
                return False
            mine, theirs = mine.regs, theirs.regs
            if any(mine.get(k) != theirs.get(k) for k in a.reads):
                return False
        writes = self._writes(key)
        return writes[pos] == writes[a.pos]

    def _writes(self, key: tuple) -> list[int]:
        """Per place in block `key[0]`, how many instructions before it write a register
        an answer there may follow (`_slice`)."""
        hit = self._counts.get(key)
        if hit is None:
            follows = self._slice(key)
            hit = self._counts[key] = [0]
            for insn in self.builder.cfg.blocks[key[0]].instructions:
                hit.append(hit[-1] + any(k in follows for k in insn.def_keys))
        return hit

    def _slice(self, key: tuple) -> frozenset[str]:
        """The registers an answer at block `key[0]` may follow: those the guards of
        the branches deciding it, the access's guard and its address base are computed
        from, through every definition, with the other members of their toggle groups."""
        hit = self._slices.get(key)
        if hit is None:
            block, guard, base = key[0], key[5], key[6]
            cfg, defs = self.builder.cfg, self.builder.defs
            todo = [t.guard.register.key for d in _splitting(self.facts, block)[0]
                    if (t := cfg.blocks[d].terminator) is not None and t.guard is not None]
            todo += [guard[0]] if guard is not None else []
            todo += [base[1]] if base is not None and base[0] == "reg" else []
            groups = toggle_groups(self.builder)
            seen = set(todo)
            while todo:
                k = todo.pop()
                group = groups.get(k)
                more = [u for d in defs.get(k, ()) for u in d.use_keys]
                more += [m.key for m in group.members] if group is not None else []
                for u in more:
                    if u not in seen:
                        seen.add(u)
                        todo.append(u)
            hit = self._slices[key] = frozenset(seen)
        return hit


@dataclass(frozen=True, eq=False)
class _Answer:
    pos: int  # the access's place in its block
    state: object  # the states it was computed from
    anchor_state: object
    unrefined: object  # before the guard's refinement (guarded accesses only)
    reads: tuple[str, ...]  # the registers whose values it read
    offset: int  # the address's constant offset
    lanes: BlockLanes | None


def _compute(facts: Facts, acc: Access, view: Anchored, space: ThreadSpace, address: bool,
             cells: int) -> tuple[BlockLanes | None, tuple[str, ...]]:
    """`block_lanes`, and the registers whose values at the access it read."""
    builder = view.b
    node, offset = None, 0
    if address:
        node, offset = view.address()
        if node.opaque or not _uniform_counts(builder, node):
            return None, ()
    conds, exact, compared = _conditions(facts, acc, view)
    nodes = ([node] if node is not None else []) + [c.node for c in conds]
    leaves = {leaf.ident: leaf for n in nodes for leaf in n.leaves}
    reads = tuple(compared) + tuple(leaf.value for leaf in leaves.values()
                                    if isinstance(leaf.value, str))
    first = frozenset(x.ident for x in node.leaves) if node is not None else frozenset()
    values = grid({i: _leaf_si(leaf, acc) for i, leaf in leaves.items()},
                  max(1, cells // space.n), first)
    rows = next(iter(values.values())).size if values else 1
    region = acc.address.region
    ev = Evaluator(space, {i: v[:, None] for i, v in values.items()}, frozenset(leaves),
                   region.obj if region is not None else None)
    start, sym_gcd = None, 0
    if node is not None:
        try:
            addr = ev.eval(node)
        except Unevaluable:
            return None, reads
        start = np.broadcast_to(signed(np.asarray(addr.conc, I64), node.bits) + offset,
                                (rows, space.n))
        sym_gcd = modulus(addr.sym)
    mask, exact = _select(ev, conds, (rows, space.n), exact)
    return BlockLanes(space, mask, start, exact, sym_gcd, values,
                      {i: _leaf_name(leaf) for i, leaf in leaves.items()}), reads


def _select(ev: Evaluator, conds: list[_Condition], shape: tuple[int, int],
            exact: bool) -> tuple[np.ndarray, bool]:
    """The threads every condition lets through, per row; a condition the evaluator
    cannot compute lets every thread through, and if it splits lanes, the selection is
    no longer exact."""
    mask = np.ones(shape, bool)
    for c in conds:
        try:
            v = ev.eval(c.node)
        except Unevaluable:
            exact &= not c.decisive
            continue
        if v.sym:
            exact &= not c.decisive
            continue
        mask &= np.broadcast_to(members(v.conc, c.si, c.bits), shape)
    return mask, exact


def splits_lanes(facts: Facts, acc: Access) -> bool:
    """Some condition may run the access in only part of the block: a guard that is not
    uniform, or a branch deciding the access's block that may send the threads of one
    warp, or of one block (`warp == 0`), different ways."""
    return bool(_splitting(facts, acc.block)[1]) or _guard_splits(facts, acc)


def _guard_splits(facts: Facts, acc: Access) -> bool:
    guard = acc.insn.guard
    return guard is not None and (not acc.guard_uniform or block_variance(facts).is_varying(
        guard.register.key, acc.insn))


def _splitting(facts: Facts, block: int) -> tuple[list[int], list[int]]:
    """The branches deciding `block`, nearest first, and those of them that may split a
    warp or a block (once per block: every access of it asks)."""
    memo = facts.derived("active_lanes.splitting", lambda _: {})
    hit = memo.get(block)
    if hit is None:
        closure = control_closure(facts.cfg, block)
        varying = block_variance(facts).divergent
        hit = memo[block] = (closure, [d for d in closure
                                       if d in varying or facts.branch_is_divergent(d)])
    return hit


# ---- conditions ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Condition:
    node: Node
    si: object  # the values the facts allow at the access
    bits: int
    decisive: bool  # a lane-splitting predicate: must be evaluated exactly


def _conditions(facts: Facts, acc: Access, view: Anchored
                ) -> tuple[list[_Condition], bool, list[str]]:
    """What selects the threads at `acc` (see the module docstring), whether the
    lane-splitting ones are all there to be evaluated exactly, and the registers whose
    values at the access were read."""
    cfg, insn = facts.cfg, acc.insn
    closure, splitting = _splitting(facts, acc.block)
    branches = [cfg.blocks[d].terminator for d in closure[:NEAREST]]
    preds = [t.guard.register for t in branches if t is not None and t.guard is not None]
    if insn.guard is not None:
        preds.append(insn.guard.register)
    decisive, exact = _decisive(facts, acc, view, splitting)
    out: dict[str, _Condition] = {}
    asked = preds + list(decisive.values())
    memo = facts.derived("active_lanes.compared", lambda _: {})  # the same per block
    compared = memo.get(key := tuple(r.key for r in asked))
    if compared is None:
        compared = memo[key] = compared_by(view.b.defs, asked)
    for reg, is_pred in compared:
        v = acc.state.regs.get(reg.key)
        if v is None or v.region is not None or (
                v.singleton() is None if is_pred else v.si.lo is None or v.si.hi is None):
            continue  # a predicate that may go either way, a register with no bound
        node = view.register(reg, insn)
        if node.opaque or not (node.threads or node.leaves):
            continue
        # a predicate is one bit (`not.pred` nodes carry bits=1, `not.b32` its width)
        out[reg.key] = _Condition(node, v.si, 1 if node.op == "setp" else node.bits,
                                  reg.key in decisive)
    return list(out.values()), exact and all(k in out for k in decisive), \
        [reg.key for reg, _ in compared]


def _decisive(facts: Facts, acc: Access, view: Anchored,
              splitting: list[int]) -> tuple[dict[str, Register], bool]:
    """The predicates that may split a warp or a block at `acc` (its own guard unless
    uniform, the `splitting` branches deciding it), and whether each can be evaluated as
    it was when the threads took their ways: known at the access, not written since the
    branch, not the exit of a loop around the access."""
    cfg, insn = facts.cfg, acc.insn
    found: dict[str, Register] = {}
    exact = True
    if _guard_splits(facts, acc):
        found[insn.guard.register.key] = insn.guard.register  # type: ignore[union-attr]
    loops = [lp for lp in cfg.natural_loops().values() if acc.block in lp.body]
    for d in splitting:
        term = cfg.blocks[d].terminator
        if term is None or term.guard is None:
            exact = False
            continue
        reg = term.guard.register
        if view.b.defined_between(reg.key, term, insn) or any(
                e[0] == d for lp in loops for e in lp.exits):
            exact = False
        found[reg.key] = reg
    return found, exact


# ---- leaves -------------------------------------------------------------------------------------
def _leaf_si(leaf: Node, acc: Access):
    """The values a leaf takes: its own set, else the facts' at the access for a leaf
    not pinned to another point; a pointer into the access's own object counts as its
    offset there (the object is address 0 in the evaluation)."""
    if leaf.si is not None:
        return leaf.si
    if leaf.op != "leaf" or leaf.pinned or leaf.ident[0] != "reg":
        return None
    v = acc.state.regs.get(leaf.value)  # type: ignore[arg-type]
    if v is None:
        return None
    if v.region is None:
        return v.si
    mine = acc.address.region
    if mine is not None and mine.obj is not None and v.region.obj == mine.obj and \
            v.region.space == mine.space and enumerable(v.si) is not None:
        return v.si
    return None


def _leaf_name(leaf: Node) -> str:
    kind = leaf.ident[0] if leaf.ident else ""
    if kind == "count":
        return f"the trips of the loop that steps `{leaf.value}`"
    return f"`{leaf.value}`"


def _uniform_counts(builder, node: Node) -> bool:
    """Loop counts in the address are the same in every lane of a request: their step
    runs on every trip of its loop (its block dominates the latches), so lanes in the
    same trip made the same number of steps."""
    cfg = builder.cfg
    for leaf in node.leaves:
        if leaf.op != "count":
            continue
        for step in leaf.defs:
            b = cfg.block_of(step)
            loops = [lp for lp in cfg.natural_loops().values() if b in lp.body]
            inner = min(loops, key=lambda lp: len(lp.body)) if loops else None
            if inner is None or not all(cfg.dominates(b, t) for t in inner.latches):
                return False
    return True


def _reads_rows(facts: Facts) -> bool:
    """The kernel reads `%tid.y` or `%tid.z` and they are not pinned: one row of threads
    is no model of its block when the shape is unknown."""
    entry = facts.in_states[facts.cfg.entry]
    for name in ("%tid.y", "%tid.z"):
        v = entry.regs.get(name) if entry is not None else None
        if v is not None and v.singleton() is None:
            return True
    return False


__all__ = ["BlockLanes", "block_lanes", "splits_lanes", "CELLS"]
