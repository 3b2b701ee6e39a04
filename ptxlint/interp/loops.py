"""What the interpreter learns about loops: widening thresholds and loop counters.

**Thresholds.** At a loop head a growing bound jumps to the next candidate rather than
to infinity: the bounds a branch of the loop compares the register with (so `for (i =
tid; i < n; i += 256)` keeps `i < n`), the bounds a register's link gives in the head's
state, and for both kinds the limits of the 32- or 64-bit view the comparison or link
reads (`WIDTH_LIMITS`: widened to one, the value is still a set of readings the exit
test can narrow).

**Counters.** A register the loop only updates by `add r, r, c` (a basic induction
variable) moves in step with the loop's other counters. Where the loop is entered, each
that starts at one known value (a step count, not an index) is linked to one the loop
compares (``v = (step_v / step_c) * c + off``, `off` from their
values on entry); `r += c` shifts the offsets of the links that read r instead of ending
them (`shifted`), so the link is the same at the head on every iteration, and the bound
the exit test puts on c bounds v: the lattice's step counter, counted up beside a
count-down tested against 0, stays below the count.
"""
from __future__ import annotations

from dataclasses import replace

from ..cfg import CFG
from ..domains.relation import Link
from ..domains.state import State
from ..domains.strided import WIDTH_LIMITS, wrap_int
from ..ir.instructions.compare import Setp
from ..ir.instructions.integer import Add, Sub
from ..ir.operands import Immediate, Register
from .links import readings


# ---- widening thresholds -------------------------------------------------------------------
def thresholds(cfg: CFG, out_states: list, head: int, new: State) -> dict:
    """Candidate bounds for each register compared by a branch in the loop of `head`,
    and (on demand) for each linked register, the bounds its link gives in `new`."""
    loop = cfg.loop(head)
    blocks = loop.body if loop is not None else (head,)
    found: dict[str, tuple[set[int], set[int], set[int]]] = {}
    for b in blocks:
        term = cfg.blocks[b].terminator
        out = out_states[b]
        if term is None or term.guard is None or out is None:
            continue
        cond = out.conds.get(term.guard.register.key)
        if cond is None or cond.__class__ is Link:
            continue
        limits = view_limits(cond.width, cond.signed and cond.op not in _UNSIGNED_OPS)
        for mine, theirs in ((cond.a, cond.b), (cond.b, cond.a)):
            if not isinstance(mine, str):
                continue
            lower, upper, either = found.setdefault(mine, (set(), set(), set()))
            either.update(limits)
            if isinstance(theirs, int):
                either.update((theirs - 1, theirs, theirs + 1))
                continue
            other = out[theirs].si
            if other.lo is not None:
                lower.update((other.lo - 1, other.lo, other.lo + 1))
            if other.hi is not None:
                upper.update((other.hi - 1, other.hi, other.hi + 1))
    return Thresholds(found, new)


_UNSIGNED_OPS = frozenset({"lo", "ls", "hi", "hs"})


def view_limits(w: int, signed: bool) -> tuple[int, ...]:
    """The width limits of the view a comparison reads (those `WIDTH_LIMITS` has)."""
    out = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else ((1 << w) - 1,)
    return out if all(x in WIDTH_LIMITS for x in out) else ()


class Thresholds(dict):
    """A register's candidate bounds in the head's state: near the values it is compared
    with, and for a linked register the bounds its link gives (computed for the
    registers being widened only).

    A comparison with a register of values lo..hi bounds the other side from above
    near hi and from below near lo, whatever the operator (what refinement narrows it
    to on either edge): a candidate from hi is offered to a growing upper bound only,
    one from lo to a falling lower bound only. (Offered to both, ``i < n`` with n in
    1..4 would climb 2, 3, 4 a round at a time.) Constants and width limits serve
    both sides."""

    def __init__(self, found: dict, state: State):
        super().__init__(found)
        self.state = state

    def get(self, key, default=()):
        lower, upper, either = super().get(key) or ((), (), ())
        link = self.state.conds.get(key)
        if link.__class__ is Link:
            s = self.state
            span = link.forward(s[link.a].si, None if link.b is None else s[link.b].si)
            either = (*either, *view_limits(link.w, link.signed))
            if span.is_finite:
                lower, upper = (*lower, span.lo), (*upper, span.hi)
        elif not (lower or upper or either):
            return default
        si = self.state[key].si
        return (*either, *(t for t in lower if si.lo is None or t <= si.lo),
                *(t for t in upper if si.hi is None or t >= si.hi))


# ---- counters: `add r, r, c` ---------------------------------------------------------------
_COUNTERS: dict[int, tuple] = {}  # id(insn) -> (insn, `counter_step`): the entry keeps it


def counter_step(insn) -> tuple[str, int, int] | None:
    """(register, step, width) of `add r, r, c` / `sub r, r, c` with an immediate c: the
    update of a loop counter, which shifts the links that read r instead of ending them."""
    if not isinstance(insn, (Add, Sub)):
        return None
    hit = _COUNTERS.get(id(insn))
    if hit is None:
        if len(_COUNTERS) > 1 << 16:
            _COUNTERS.clear()
        hit = _COUNTERS[id(insn)] = (insn, _counter_step(insn))
    return hit[1]


def _counter_step(insn) -> tuple[str, int, int] | None:
    d, a, b = _key(insn.dests[0]), insn.a, insn.b
    if d is None or (d != _key(a) and d != _key(b)) or insn.type is None \
            or insn.type.is_float or insn.saturate or insn.writes_carry:
        return None
    w, signed = insn.type.bits, insn.type.is_signed
    for reg, imm, sign in ((a, b, 1), (b, a, 1)) if isinstance(insn, Add) else ((a, b, -1),):
        if _key(reg) == d and isinstance(imm, Immediate) and isinstance(imm.value, int):
            return d, sign * wrap_int(imm.value, w, True), w
    return None


def shifted(s: State, key: str, step: int, w: int) -> list[tuple[str, Link]]:
    """The links that still hold once `key` becomes ``key + step`` at w bits: for d's
    own link the offset grows by step, for a link reading key it shrinks by k * step.
    Each needs the update not to wrap in the link's view of key, judged on key's values
    narrowed by its own link. (`State.assign` drops them all; the caller puts these
    back.)"""
    conds = s.conds
    own = conds.get(key)
    value = s[key].si
    if own.__class__ is Link:
        b = None if own.b is None else s[own.b].si
        value = own.forward(s[own.a].si, b).meet(value.wrap(own.w, own.signed))
    out = []
    for d, c in conds.items():
        if c.__class__ is not Link:
            continue
        if d == key:
            if c.w == w and value.shift(step).fits(c.w, c.signed):
                out.append((d, replace(c, off=c.off.shift(step))))
        elif c.a == key and c.b != key:
            if c.xw == w and value.wrap(c.xw, c.xsigned).shift(step).fits(c.xw, c.xsigned):
                out.append((d, replace(c, off=c.off.shift(-c.k * step))))
        elif c.b == key and c.a != key:
            if c.w == w and value.wrap(c.w, c.bsigned).shift(step).fits(c.w, c.bsigned):
                out.append((d, replace(c, off=c.off.shift(-c.kb * step))))
    return out


def counters_linked(s: State, counters: list[tuple[str, int, int]], compared: set[str]
                    ) -> State:
    """`s` with each counter of a loop that starts at one value linked to one that the
    loop compares (``v = (step_v / step_c) * c + off``, off from their values on entry;
    an index starting at `tid.x` is left alone: bounding it is what its own comparisons
    do, and linking it only makes the loop take longer to settle): each iteration shifts
    the link's offset by the same amount twice over, so the link is the same at the loop
    head on every iteration, and the bound the exit test puts on c bounds v.
    `s` is not modified."""
    added: dict[str, Link] = {}
    for v, dv, w in counters:
        if v in added or s.conds.get(v) is not None or not s[v].si.is_singleton:
            continue  # v: a step counter, starting at one value (`step = 1`)
        for c, dc, cw in counters:
            if c == v or c not in compared or dv % dc or c in added:
                continue  # c may be narrower than v (a 32-bit index beside a pointer)
            k = dv // dc
            vs, vsigned = readings(s[v], w, True)
            cs, csigned = readings(s[c], cw, True)
            # v may be a pointer into a named object (its set is the offset: `p += 4`
            # beside `i += 1`, a table walked by a strength-reduced loop); c is a number
            region = s[v].region
            if (region is not None and region.obj is None) or s[c].region is not None \
                    or vs.is_top or cs.is_top:
                continue
            link = Link.make(c, k, cs, vs.math_add(cs.scale(-k)), w, vsigned, cw, csigned)
            if link is not None:
                added[v] = link.kept()
                break
    if not added:
        return s
    return State(s.regs, {**s.conds, **added}, s.params, s.unreachable)


_COUNTING = (Add, Sub)


class LoopCounters:
    """The counters of each loop of a CFG (`counters`), found once per loop."""

    def __init__(self, cfg: CFG):
        self.cfg = cfg
        self._found: dict[int, tuple] = {}

    def counters(self, head: int) -> tuple[list[tuple[str, int, int]], set[str]]:
        """(register, step, width) of each register the loop only updates by `add r, r,
        c` (the basic induction variables), and those of them a `setp` in the loop reads;
        nothing when no counter is compared or there is no other one."""
        hit = self._found.get(head)
        if hit is not None:
            return hit
        body = [self.cfg.blocks[b].instructions for b in self.cfg.loop(head).body]
        found = {}
        for insns in body:
            for insn in insns:
                if isinstance(insn, _COUNTING) and (c := counter_step(insn)) is not None:
                    found[c[0]] = None if c[0] in found else (c, insn)
        found = {k: v for k, v in found.items() if v is not None}
        counters, compared = [], set()
        if len(found) > 1:  # rare: check that each is updated once, unguarded, in the loop
            others = {k: 0 for k in found}
            for insns in body:
                for insn in insns:
                    for reg in insn.defs:
                        if reg.key in found:
                            others[reg.key] += insn is not found[reg.key][1] or \
                                insn.guard is not None
                    if isinstance(insn, Setp):
                        compared.update(r.key for r in insn.uses if r.key in found)
            counters = [c for k, (c, _) in found.items() if not others[k]]
            compared &= {c[0] for c in counters}
        self._found[head] = hit = (counters, compared) if compared and \
            len(counters) > 1 else ([], set())
        return hit


def _key(op) -> str | None:
    return op.key if op is not None and op.__class__ is Register else None


__all__ = ["thresholds", "Thresholds", "counter_step", "shifted", "counters_linked",
           "LoopCounters"]
