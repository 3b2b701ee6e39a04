"""The abstract state at a program point: a value per register, the comparison that
defined each predicate (for branch refinement), and the `.param` cells written by
`st.param` (call sequences pass arguments and results through them).

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

    def mentions(self, key: str) -> bool:
        return key in (self.a, self.b, self.other)

    def inverted(self) -> "Condition":
        return Condition(self.op, self.a, self.b, self.width, self.signed, not self.negated,
                         self.combine, self.other, self.other_negated, self.is_float)


class State:
    __slots__ = ("regs", "conds", "params", "unreachable")

    def __init__(self, regs: dict[str, Value] | None = None,
                 conds: dict[str, Condition] | None = None,
                 params: dict[tuple[str, int], Value] | None = None,
                 unreachable: bool = False):
        self.regs = regs if regs is not None else {}
        self.conds = conds if conds is not None else {}
        self.params = params if params is not None else {}
        self.unreachable = unreachable

    @staticmethod
    def bottom() -> "State":
        return State(unreachable=True)

    def copy(self) -> "State":
        return State(dict(self.regs), dict(self.conds), dict(self.params), self.unreachable)

    def __getitem__(self, key: str) -> Value:
        return self.regs.get(key, TOP)

    def assign(self, key: str, value: Value) -> None:
        """Write a register; comparisons that read its old value no longer hold."""
        if value.is_top:
            self.regs.pop(key, None)
        else:
            self.regs[key] = value
        self.conds.pop(key, None)
        if self.conds:
            stale = [p for p, c in self.conds.items() if c.mentions(key)]
            for p in stale:
                del self.conds[p]

    def join(self, other: "State") -> "State":
        if self.unreachable:
            return other.copy()
        if other.unreachable:
            return self.copy()
        regs = {}
        theirs = other.regs
        for key, v in self.regs.items():
            w = theirs.get(key)
            if w is None:
                continue
            if w is v:  # states copied from one another share most values
                regs[key] = v
                continue
            j = v.join(w)
            if not j.is_top:
                regs[key] = j
        conds = {k: c for k, c in self.conds.items() if other.conds.get(k) == c}
        params = {k: v.join(other.params[k]) for k, v in self.params.items()
                  if k in other.params}
        return State(regs, conds, params)

    def widen(self, newer: "State", thresholds: dict[str, tuple[int, ...]]) -> "State":
        """Per register; `thresholds` gives each register's candidate bounds."""
        if self.unreachable:
            return newer.copy()
        regs = {}
        for key, new in newer.regs.items():
            old = self.regs.get(key)
            if old is new:
                regs[key] = new
                continue
            w = new if old is None else old.widen(new, thresholds.get(key, ()))
            if not w.is_top:
                regs[key] = w
        return State(regs, dict(newer.conds), dict(newer.params))

    def leq(self, other: "State") -> bool:
        if self.unreachable:
            return True
        if other.unreachable:
            return False
        mine = self.regs
        for key, w in other.regs.items():
            v = mine.get(key, TOP)
            if v is not w and not v.leq(w):
                return False
        for key, c in other.conds.items():
            if self.conds.get(key) != c:
                return False
        for key, w in other.params.items():
            if not self.params.get(key, TOP).leq(w):
                return False
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.unreachable == other.unreachable and \
            self.regs == other.regs and self.conds == other.conds and \
            self.params == other.params

    __hash__ = None  # type: ignore[assignment]


__all__ = ["State", "Condition", "TOP", "BOTTOM"]
