"""Branch and guard refinement: what a predicate's truth says about the registers
its defining comparison read.

`setp.lt.s32 %p, %r1, %r2` records `Condition(lt, %r1, %r2)` on %p. On the edge where
%p holds, %r1 is narrowed to values below some %r2 and %r2 to values above some %r1;
on the other edge, to the complement. `.and`/`.or` combinations refine both parts when
the combination forces them (p AND q true: both true; p OR q false: both false).

A narrowed register narrows the registers linked to it (`relation.Link`, made by the
arithmetic transfer functions): the register it was computed from (``x`` of ``d = k*x
+ off``, to ``(d - off) / k``) and those computed from it, transitively, within
`PROPAGATION_STEPS`. So `if (i < n)` bounds `a + 4*i` computed before the branch, and
`if (t + step < 256)` bounds `t` when step's range is known.
"""
from __future__ import annotations

from ..domains.lattice import Tri
from ..domains.relation import Link
from ..domains.state import Condition, State
from ..domains.strided import StridedInterval as SI
from ..domains.value import TOP, Value, tri_of

_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le",
           "lo": "hi", "ls": "hs", "hi": "lo", "hs": "ls"}
_INTEGER_OPS = frozenset(_MIRROR)
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_TRUE, _FALSE = SI.const(1), SI.const(0)
#: Registers narrowed through links per refinement, at most (chains are short: an
#: index, its scaled and extended copies, the addresses made from them).
PROPAGATION_STEPS = 32


def assume(s: State, pred_key: str, truth: bool, linked: set | None = None) -> bool:
    """Narrow `s` in place to the executions where predicate `pred_key` is `truth`
    (`linked`: the registers some `Link` of the state may read). Returns False when no
    execution remains (the edge is infeasible)."""
    return _assume(s, pred_key, truth, 0, None, linked)


def assume_cached(memo: dict, slot: object, s: State, pred_key: str, truth: bool,
                  linked: set | None = None) -> bool:
    """`assume`, replayed from `memo[slot]` when the registers and comparisons it read
    the last time it ran there are what they were (it is a function of those)."""
    last = memo.get(slot)
    if last is not None and last[0] == pred_key and last[1] == truth:
        log = last[3]
        regs, conds = s.regs, s.conds
        written = set()
        for kind, key, value in log:
            if kind == _SET:
                written.add(key)
            elif kind == _DEPS:
                if _dependents(s, key) != value:
                    break
            elif key not in written:
                now = regs.get(key) if kind == _REG else conds.get(key)
                if now is not value and now != value:
                    break
        else:
            for kind, key, value in log:
                if kind == _SET:
                    regs[key] = value
            return last[2]
    log: list = []
    ok = _assume(s, pred_key, truth, 0, log, linked)
    memo[slot] = (pred_key, truth, ok, log)
    return ok


# what the log records: a register read (its value or None), a comparison read, a write,
# the links to a register (`_dependents`)
_REG, _COND, _SET, _DEPS = 0, 1, 2, 3


def written_keys(memo: dict, slot: object) -> list[str]:
    """The registers the last `assume_cached` at `slot` wrote."""
    last = memo.get(slot)
    return [] if last is None else [key for kind, key, _ in last[3] if kind == _SET]


def _read(s: State, key: str, log: list | None) -> Value:
    v = s.regs.get(key)
    if log is not None:
        log.append((_REG, key, v))
    return TOP if v is None else v


def _cond(s: State, key: str, log: list | None) -> Condition | None:
    c = s.conds.get(key)
    if log is not None:
        log.append((_COND, key, c))
    return c


def _write(s: State, key: str, v: Value, log: list | None) -> None:
    s.regs[key] = v
    if log is not None:
        log.append((_SET, key, v))


def _assume(s: State, pred_key: str, truth: bool, depth: int, log: list | None,
            linked: set | None) -> bool:
    value = _read(s, pred_key, log)
    known = tri_of(value)
    if known is not Tri.MAYBE:
        return (known is Tri.TRUE) == truth
    _write(s, pred_key, value.meet_si(_TRUE if truth else _FALSE), log)
    cond = _cond(s, pred_key, log)
    if cond.__class__ is not Condition or depth > 8:
        return True
    holds = truth != cond.negated
    if cond.op in ("and", "or"):  # `and.pred`/`or.pred` of two predicates
        if (cond.op == "and") == holds:  # a AND b true, or a OR b false: both parts known
            return all(_assume(s, part, holds, depth + 1, log, linked)
                       for part in (cond.a, cond.b) if isinstance(part, str))
        return True
    if cond.combine is None:
        return _compare(s, cond, holds, log, linked)
    other_truth = holds != cond.other_negated
    if cond.combine == "and" and holds:
        return _compare(s, cond, True, log, linked) and \
            _other(s, cond, other_truth, depth, log, linked)
    if cond.combine == "or" and not holds:
        return _compare(s, cond, False, log, linked) and \
            _other(s, cond, other_truth, depth, log, linked)
    return True


def _other(s: State, cond: Condition, truth: bool, depth: int, log: list | None,
           linked: set | None) -> bool:
    return cond.other is None or _assume(s, cond.other, truth, depth + 1, log, linked)


def _operand(s: State, x: str | int, log: list | None) -> Value:
    return Value.const(x) if isinstance(x, int) else _read(s, x, log)


def _compare(s: State, cond: Condition, holds: bool, log: list | None,
             linked: set | None) -> bool:
    if cond.is_float or cond.op not in _INTEGER_OPS:
        return True
    op = _UNSIGNED.get(cond.op, cond.op)
    signed = cond.signed and cond.op not in _UNSIGNED
    a, b = _operand(s, cond.a, log), _operand(s, cond.b, log)
    if a.region is not None or b.region is not None:
        return True  # offsets are not the compared numbers
    # the refined sets are readings in the comparison's view, perhaps not the registers';
    # a constant side is not refined (it stays itself exactly when the other side has
    # values left, which the other side's refinement says)
    new_a = new_b = None
    if isinstance(cond.a, str):
        a_true, a_false = a.si.refine(op, b.si, cond.width, signed)
        new_a = a.restrict(a_true if holds else a_false, cond.width, signed)
        if new_a.is_bottom:
            return False
    if isinstance(cond.b, str):
        b_true, b_false = b.si.refine(_UNSIGNED.get(_MIRROR[cond.op], _MIRROR[cond.op]),
                                      a.si, cond.width, signed)
        new_b = b.restrict(b_true if holds else b_false, cond.width, signed)
        if new_b.is_bottom:
            return False
    narrowed = []
    for key, old, new in ((cond.a, a, new_a), (cond.b, b, new_b)):
        if new is not None and not new.is_top:
            _write(s, key, new, log)
            if new != old:
                narrowed.append(key)
    # no register of the function is in a state Link (`linked` empty): nothing to follow
    return _propagate(s, narrowed, log, linked) if narrowed and linked else True


def _dependents(s: State, key: str) -> tuple:
    """The links of other registers to `key`, as (register, link) pairs."""
    return tuple((d, c) for d, c in s.conds.items()
                 if c.__class__ is Link and (c.a == key or c.b == key))


def _narrow(s: State, key: str, new: Value, old: Value, work: list, log: list | None) -> bool:
    """Write a narrowed value (and queue the register); False when it is empty."""
    if new.is_bottom:
        return False
    if new != old:
        _write(s, key, new, log)
        work.append(key)
    return True


def _propagate(s: State, keys: list[str], log: list | None, linked: set | None) -> bool:
    """Narrow the registers linked to `keys` (just narrowed), and on; False when one
    becomes empty (no execution takes this edge)."""
    work, steps = list(keys), 0
    while work and steps < PROPAGATION_STEPS:
        key = work.pop()
        steps += 1
        v = _read(s, key, log)
        link = _cond(s, key, log)
        if link.__class__ is Link:  # key = k*a + kb*b + off: a and b from what is left
            a = _read(s, link.a, log)
            b = None if link.b is None else _read(s, link.b, log)
            new = a.restrict(link.backward(v.si, None if b is None else b.si),
                             link.xw, link.xsigned)
            if not _narrow(s, link.a, new, a, work, log):
                return False
            if b is not None and not _narrow(s, link.b, b.restrict(
                    link.backward_b(v.si, new.si), link.w, link.bsigned), b, work, log):
                return False
        if linked and key in linked:  # d = k*key + ...: d narrows with key
            deps = _dependents(s, key)
            if log is not None:
                log.append((_DEPS, key, deps))
            for d, c in deps:
                a = _read(s, c.a, log)
                b = None if c.b is None else _read(s, c.b, log).si
                old = _read(s, d, log)
                if not _narrow(s, d, old.restrict(c.forward(a.si, b), c.w, c.signed), old,
                               work, log):
                    return False
    return True
