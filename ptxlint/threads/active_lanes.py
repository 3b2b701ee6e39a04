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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.operands import Register
from .barrier_intervals import control_closure
from .block_uniform import block_variance
from ..interp.facts import Access, Facts
from .thread_eval import I64, Evaluator, ThreadSpace, Unevaluable, members, modulus, signed
from .thread_exprs import Anchored, Node, compared_by, expr_builder
from .thread_pairs import enumerable, grid

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
    builder = expr_builder(facts)
    view = builder.at(acc.insn, acc.state)
    node, offset = None, 0
    if address:
        node, offset = view.address()
        if node.opaque or not _uniform_counts(builder, node):
            return None
    conds, exact = _conditions(facts, acc, view)
    nodes = ([node] if node is not None else []) + [c.node for c in conds]
    leaves = {leaf.ident: leaf for n in nodes for leaf in n.leaves}
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
            return None
        start = np.broadcast_to(signed(np.asarray(addr.conc, I64), node.bits) + offset,
                                (rows, space.n))
        sym_gcd = modulus(addr.sym)
    mask, exact = _select(ev, conds, (rows, space.n), exact)
    return BlockLanes(space, mask, start, exact, sym_gcd, values,
                      {i: _leaf_name(leaf) for i, leaf in leaves.items()})


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
    return bool(_splitting(facts, acc)[1]) or _guard_splits(facts, acc)


def _guard_splits(facts: Facts, acc: Access) -> bool:
    guard = acc.insn.guard
    return guard is not None and (not acc.guard_uniform or block_variance(facts).is_varying(
        guard.register.key, acc.insn))


def _splitting(facts: Facts, acc: Access) -> tuple[list[int], list[int]]:
    """The branches deciding the access's block, nearest first, and those of them that
    may split a warp or a block."""
    closure = control_closure(facts.cfg, acc.block)
    varying = block_variance(facts).divergent
    return closure, [d for d in closure if d in varying or facts.branch_is_divergent(d)]


# ---- conditions ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Condition:
    node: Node
    si: object  # the values the facts allow at the access
    bits: int
    decisive: bool  # a lane-splitting predicate: must be evaluated exactly


def _conditions(facts: Facts, acc: Access, view: Anchored) -> tuple[list[_Condition], bool]:
    """What selects the threads at `acc` (see the module docstring), and whether the
    lane-splitting ones are all there to be evaluated exactly."""
    cfg, insn = facts.cfg, acc.insn
    closure, splitting = _splitting(facts, acc)
    branches = [cfg.blocks[d].terminator for d in closure[:NEAREST]]
    preds = [t.guard.register for t in branches if t is not None and t.guard is not None]
    if insn.guard is not None:
        preds.append(insn.guard.register)
    decisive, exact = _decisive(facts, acc, view, splitting)
    out: dict[str, _Condition] = {}
    for reg, is_pred in compared_by(view.b.defs, preds + list(decisive.values())):
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
    return list(out.values()), exact and all(k in out for k in decisive)


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
