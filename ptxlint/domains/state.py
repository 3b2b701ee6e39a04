"""The abstract state at a program point: a value per register, the relational facts
of some registers, and the `.param` cells written by `st.param` (call sequences pass
arguments and results through them).

Relational facts (`conds`, keyed by the register they describe) are of two kinds: the
comparison that defined a predicate (`Condition`, for branch refinement) and the affine
link of a data register to another register (`relation.Link`). Both read other
registers, and both are dropped when the register they describe or a register they
read is written; merges keep the facts both sides agree on.

A register missing from `regs` is unknown and may differ between lanes (top), which
is also what an uninitialised register holds. States are mutated in place while a
block is interpreted; the worklist copies them at block boundaries.
"""
from __future__ import annotations

from dataclasses import dataclass

from .value import BOTTOM, TOP, Value

@dataclass(frozen=True, slots=True)
class Condition:
    """`setp.<op>.<type> p, a, b`: p holds iff `a op b` (a and b: register keys or
    constants). `combine`/`other` record `.and/.or/.xor` with a third predicate;
    `negated` records `!` (from `not.pred` or the complementary setp output)."""

    op: str
    a: str | int
    b: str | int
    width: int
    signed: bool
    negated: bool = False
    combine: str | None = None
    other: str | None = None
    other_negated: bool = False
    is_float: bool = False  # float comparisons never refine (values are bit patterns)

    def __post_init__(self) -> None:
        _MENTIONED.update((self.a, self.b, self.other))

    def mentions(self, key: str) -> bool:
        return key == self.a or key == self.b or key == self.other

    # a comparison is a fact or not: two states keep it only when both record it
    def leq(self, other: object) -> bool:
        return self == other

    def join(self, other: object) -> "Condition | None":
        return self if self == other else None

    def widen(self, other: object) -> "Condition | None":
        return self.join(other)

    def inverted(self) -> "Condition":
        return Condition(self.op, self.a, self.b, self.width, self.signed, not self.negated,
                         self.combine, self.other, self.other_negated, self.is_float)


_MISSING = object()


#: Every register some relational fact ever read: writing any other register cannot
#: make a recorded fact stale, so `State.assign` skips the scan for it.
_MENTIONED: set = set()


def mention(*keys) -> None:
    """Record that a fact reads these registers (see `_MENTIONED`)."""
    _MENTIONED.update(keys)


def _changed(mine: dict, theirs: dict) -> list:
    """Keys of `mine` whose value in `theirs` is missing or another object (most values
    of related states are shared, so the joins and comparisons look at these only)."""
    get = theirs.get
    return [k for k, v in mine.items() if get(k) is not v]


class State:
    __slots__ = ("regs", "conds", "params", "unreachable", "log")

    def __init__(self, regs: dict[str, Value] | None = None,
                 conds: dict[str, Condition] | None = None,
                 params: dict[tuple[str, int], Value] | None = None,
                 unreachable: bool = False):
        self.regs = regs if regs is not None else {}
        self.conds = conds if conds is not None else {}
        self.params = params if params is not None else {}
        self.unreachable = unreachable
        self.log: list[str] | None = None  # when a list, `assign` appends the keys written

    @staticmethod
    def bottom() -> "State":
        return State(unreachable=True)

    def copy(self) -> "State":
        return State(dict(self.regs), dict(self.conds), dict(self.params), self.unreachable)

    def derived(self, regs: dict[str, Value]) -> "State":
        """A state with other register values and the same facts and cells, shared (for
        refinement, which writes registers only)."""
        return State(regs, self.conds, self.params, self.unreachable)

    def __getitem__(self, key: str) -> Value:
        return self.regs.get(key, TOP)

    def assign(self, key: str, value: Value) -> None:
        """Write a register; facts about it or that read its old value no longer hold."""
        if self.log is not None:
            self.log.append(key)
        if value.is_top:
            self.regs.pop(key, None)
        else:
            self.regs[key] = value
        conds = self.conds
        if conds:
            conds.pop(key, None)
            if conds and key in _MENTIONED:  # drop the facts that read the register
                for p in [p for p, c in conds.items()
                          if key == c.a or key == c.b or key == c.other]:
                    del conds[p]

    def replay(self, written: tuple, results: tuple, touched: tuple, outcomes: tuple) -> None:
        """`assign(k, v)` for each written register and result (None: unknown), then set
        (or, for None, drop) the fact of each touched register."""
        regs, conds = self.regs, self.conds
        for key, value in zip(written, results):
            if value is None:
                regs.pop(key, None)
            else:
                regs[key] = value
            if conds:
                conds.pop(key, None)
                if conds and key in _MENTIONED:
                    for p in [p for p, c in conds.items()
                              if key == c.a or key == c.b or key == c.other]:
                        del conds[p]
        for key, c in zip(touched, outcomes):
            if c is None:
                conds.pop(key, None)
            else:
                conds[key] = c

    def join(self, other: "State") -> "State":
        if self.unreachable:
            return other.copy()
        if other.unreachable:
            return self.copy()
        return self._join(other, _changed(self.regs, other.regs))

    def _join(self, other: "State", keys: list) -> "State":
        """`join` of reachable states; `keys`: `_changed(self.regs, other.regs)`."""
        regs = dict(self.regs)  # states copied from one another share most values
        theirs = other.regs
        for key in keys:
            w = theirs.get(key)
            if w is None:
                del regs[key]
                continue
            j = regs[key].join(w)
            if j.is_top:
                del regs[key]
            else:
                regs[key] = j
        # facts and cells: usually every one of ours is also theirs (a C-level test)
        mine_c, theirs_c = self.conds, other.conds
        if mine_c is theirs_c or mine_c.items() <= theirs_c.items():
            conds = dict(mine_c)
        else:
            conds = {}
            for k, c in mine_c.items():
                d = theirs_c.get(k)
                if d is c or (d is not None and d == c):
                    conds[k] = c
                elif d is not None and (j := c.join(d)) is not None:
                    conds[k] = j  # links of one shape: the offsets join
        mine_p, theirs_p = self.params, other.params
        if mine_p is theirs_p or mine_p.items() <= theirs_p.items():
            params = dict(mine_p)
        else:
            params = {}
            for k, v in mine_p.items():
                w = theirs_p.get(k, _MISSING)
                if w is not _MISSING:
                    params[k] = v if w is v else v.join(w)
        return State(regs, conds, params)

    def widen(self, newer: "State", thresholds: dict[str, tuple[int, ...]],
              eager: bool = True) -> "State":
        """Per register; `thresholds` gives each register's candidate bounds. With
        `eager=False` (`StridedInterval.widen`) the facts join rather than widen."""
        if self.unreachable:
            return newer.copy()
        regs = dict(newer.regs)
        mine = self.regs
        for key in _changed(regs, mine):
            old = mine.get(key)
            if old is None:
                continue
            w = old.widen(regs[key], thresholds.get(key, ()), eager)
            if w.is_top:
                del regs[key]
            else:
                regs[key] = w
        conds = dict(newer.conds)
        mine_c = self.conds
        for key, c in newer.conds.items():
            old_c = mine_c.get(key)
            if old_c is not None and old_c is not c:
                w_c = old_c.widen(c) if eager else old_c.join(c)
                if w_c is None:
                    del conds[key]
                else:
                    conds[key] = w_c
        return State(regs, conds, dict(newer.params))

    def grown_by(self, incoming: "State") -> "State | None":
        """`self.join(incoming)`, or None when `incoming.leq(self)` (nothing new)."""
        if incoming.unreachable:
            return None
        if self.unreachable:
            return incoming.copy()
        keys = _changed(self.regs, incoming.regs)
        if incoming._leq(self, keys):
            return None
        return self._join(incoming, keys)

    def leq(self, other: "State") -> bool:
        if self.unreachable:
            return True
        if other.unreachable:
            return False
        return self._leq(other, _changed(other.regs, self.regs))

    def _leq(self, other: "State", keys: list) -> bool:
        """`leq` of reachable states; `keys`: `_changed(other.regs, self.regs)`."""
        mine, theirs = self.regs, other.regs
        for key in keys:
            if not mine.get(key, TOP).leq(theirs[key]):
                return False
        mine_c, theirs_c = self.conds, other.conds
        if mine_c is not theirs_c and not theirs_c.items() <= mine_c.items():
            for key, c in theirs_c.items():
                d = mine_c.get(key)
                if d is not c and (d is None or not d.leq(c)):
                    return False
        mine_p, theirs_p = self.params, other.params
        if mine_p is not theirs_p and not theirs_p.items() <= mine_p.items():
            for key, w in theirs_p.items():
                v = mine_p.get(key, TOP)
                if v is not w and not v.leq(w):
                    return False
        return True

    def __eq__(self, other: object) -> bool:
        if self is other:  # (a dict compares every item even with itself)
            return True
        return isinstance(other, State) and self.unreachable == other.unreachable and \
            self.regs == other.regs and self.conds == other.conds and \
            self.params == other.params

    __hash__ = None  # type: ignore[assignment]


__all__ = ["State", "Condition", "TOP", "BOTTOM"]
