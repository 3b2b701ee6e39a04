"""Branch and guard refinement: what a predicate's truth says about the registers
its defining comparison read.

`setp.lt.s32 %p, %r1, %r2` records `Condition(lt, %r1, %r2)` on %p. On the edge where
%p holds, %r1 is narrowed to values below some %r2 and %r2 to values above some %r1;
on the other edge, to the complement. `.and`/`.or` combinations refine both parts when
the combination forces them (p AND q true: both true; p OR q false: both false).
"""
from __future__ import annotations

from ..domains.lattice import Tri
from ..domains.state import Condition, State
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value, tri_of

_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le",
           "lo": "hi", "ls": "hs", "hi": "lo", "hs": "ls"}
_INTEGER_OPS = frozenset(_MIRROR)
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def assume(s: State, pred_key: str, truth: bool, depth: int = 0) -> bool:
    """Narrow `s` in place to the executions where predicate `pred_key` is `truth`.
    Returns False when no execution remains (the edge is infeasible)."""
    value = s[pred_key]
    known = tri_of(value)
    if known is not Tri.MAYBE:
        return (known is Tri.TRUE) == truth
    s.regs[pred_key] = value.meet_si(SI.const(1 if truth else 0))
    cond = s.conds.get(pred_key)
    if cond is None or depth > 8:
        return True
    holds = truth != cond.negated
    if cond.combine is None:
        return _compare(s, cond, holds)
    other_truth = holds != cond.other_negated
    if cond.combine == "and" and holds:
        return _compare(s, cond, True) and _other(s, cond, other_truth, depth)
    if cond.combine == "or" and not holds:
        return _compare(s, cond, False) and _other(s, cond, other_truth, depth)
    return True


def _other(s: State, cond: Condition, truth: bool, depth: int) -> bool:
    return cond.other is None or assume(s, cond.other, truth, depth + 1)


def _operand(s: State, x: str | int) -> Value:
    return Value.const(x) if isinstance(x, int) else s[x]


def _compare(s: State, cond: Condition, holds: bool) -> bool:
    if cond.is_float or cond.op not in _INTEGER_OPS:
        return True
    op = _UNSIGNED.get(cond.op, cond.op)
    signed = cond.signed and cond.op not in _UNSIGNED
    a, b = _operand(s, cond.a), _operand(s, cond.b)
    if a.region is not None or b.region is not None:
        return True  # offsets are not the compared numbers
    a_true, a_false = a.si.refine(op, b.si, cond.width, signed)
    b_true, b_false = b.si.refine(_UNSIGNED.get(_MIRROR[cond.op], _MIRROR[cond.op]), a.si,
                                  cond.width, signed)
    new_a = a.meet_si(a_true if holds else a_false)
    new_b = b.meet_si(b_true if holds else b_false)
    if new_a.is_bottom or new_b.is_bottom:
        return False
    for key, new in ((cond.a, new_a), (cond.b, new_b)):
        if isinstance(key, str) and not new.is_top:
            s.regs[key] = new
    return True
