"""Which registers may be read before they are written (the register part of
`uninitialized-read`): a forward dataflow over the CFG, per thread, predicates
considered. Registers move as `reg_flow.py` says (copies and selects pass definedness on,
every other read is a *use*).

The state before an instruction holds, for every register,

- **may**: some path from the entry writes it (a union over paths): a use of a register
  no path writes reads an undefined value in every execution that gets there;
- **defined**: a *condition* under which it certainly holds a value, as a set of
  predicate literals `(%p, True)` ("whenever `%p` is true"), or *always*. `@%p mov %r1`
  makes `%r1` defined when `%p`; `@!%p mov %r1` next makes it always defined. A literal
  lasts until its predicate is written again;
- **known**: literals that hold on every path to here (`@%p bra` taken: `%p`).

A use under `@%p` (its guard, or a literal known on the way) of a register defined when
`%p` is fine. Where paths meet, a literal stays when on every incoming path the register
is defined under it, always, or the path knows the literal to be false there (vacuously
true): `if (c) x = 1; ...; if (c) use(x);` joins "x always defined" (c held) with "c did
not hold", so x is defined when c; the second branch's edge, knowing c, makes it defined.

Unreachable blocks (for the analysis) are left out. The fixpoint starts optimistic
(unvisited predecessors ignored) and only ever loses definedness, so it terminates.

After a use, the register counts as defined on that path: one finding per path and
register, not one per read (the emulator marks a thread's register the same way).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..cfg import CFG
from ..ir.instruction import Instruction
from ..ir.operands import Immediate, Register
from .pred_conditions import Conditions
from ..ir.reg_flow import Flow, defined_at_entry, flow_key, flows_of

Lit = tuple[int, bool]  # (predicate index, value it has)
MAX_KNOWN = 8  # literals known on a path (the most recent kept)


@dataclass
class RegState:
    must: int = 0  # bit r: always defined
    may: int = 0  # bit r: written on some path
    cond: dict[Lit, int] = field(default_factory=dict)  # literal -> defined when it holds
    known: frozenset[Lit] = frozenset()

    def copy(self) -> "RegState":
        return RegState(self.must, self.may, dict(self.cond), self.known)

    def same(self, o: "RegState") -> bool:
        return self.must == o.must and self.may == o.may and self.known == o.known \
            and self._cond() == o._cond()

    def _cond(self) -> dict[Lit, int]:
        return {k: v & ~self.must for k, v in self.cond.items() if v & ~self.must}

    def defined(self, r: int, under) -> bool:
        if self.must >> r & 1:
            return True
        cond = self.cond
        return any(cond.get(lit, 0) >> r & 1 for lit in under)

    def defined_mask(self, srcs: list[int]) -> tuple[bool, bool, dict[Lit, bool]]:
        """(always, written on some path, literal -> defined when it holds) for all
        of `srcs` together."""
        mask = 0
        for s in srcs:
            mask |= 1 << s
        may = self.may & mask == mask
        if self.must & mask == mask:
            return True, may, {}
        return False, may, {lit: True for lit, bits in self.cond.items()
                            if (self.must | bits) & mask == mask}


@dataclass(frozen=True)
class UndefinedUse:
    """`insn` reads register `key` where it may hold no value; `never`: no path to the
    read writes it (every execution that runs the read reads an undefined value)."""

    insn: Instruction
    key: str
    never: bool
    guarded_writes: bool  # the register's only writes on the way are predicated


class Definedness:
    def __init__(self, cfg: CFG, reachable, deadline=None, facts=None):
        self.cfg = cfg
        self.facts = facts
        fn = cfg.function
        self.reachable = reachable  # block -> bool
        self.deadline = deadline
        self.index: dict[str, int] = {}
        self.flows: dict[int, Flow] = flows_of(fn)
        index = self.index  # numbered as met: reads, writes, sources, arms, guard, predicate
        for b in cfg.blocks:
            for insn in b.instructions:
                f = self.flows[id(insn)]
                guard = (f.guard[0],) if f.guard is not None else ()
                pred = (f.pred[0],) if f.pred is not None else ()
                for keys in (f.reads, f.writes, *f.sources, *f.arms, guard, pred):
                    for k in keys:
                        if k not in index:
                            index[k] = len(index)
        entry = 0
        for name in defined_at_entry(fn):
            for k, i in self.index.items():
                if k == name or k.startswith(name + "."):
                    entry |= 1 << i
        self.entry_mask = entry
        self._before: dict[int, dict] = {}
        self.conds = Conditions([i for b in cfg.blocks for i in b.instructions],
                                self._idx, self._non_negative if facts else None,
                                self._low_zero if facts else None)
        self.names = {i: k for k, i in self.index.items()}
        self._vacuous_memo: dict[frozenset, frozenset] = {}

    def _non_negative(self, setp) -> bool:
        """An operand of `setp` (the index) is known below 2^(bits-1) and not negative;
        the other (the count it is compared with) is assumed so (see `pred_conditions`)."""
        bits = setp.type.bits
        for op in (setp.a, setp.b):
            v = self._value_before(setp, op) if isinstance(op, Register) else None
            if v is not None:
                si = v.si.as_signed(bits)
                if si.lo is not None and si.hi is not None and si.lo >= 0:
                    return True
            elif isinstance(op, Immediate) and 0 <= int(op.value) < 1 << (bits - 1):
                return True
        return False

    def _low_zero(self, insn, reg: Register, n: int) -> bool:
        v = self._value_before(insn, reg)
        if v is None:
            return False
        cong = v.cong
        return cong.bits >= n and cong.residue % (1 << n) == 0

    def _value_before(self, insn, reg: Register):
        """The facts' value of `reg` before `insn`: each block is replayed once, keeping
        the register operands of its `setp`s and `or`s (what the conditions ask about)."""
        if id(insn) not in self._before:
            b = self.cfg.block_of(insn)
            if self.facts.in_states[b] is None:
                return None
            state = self.facts.entry_state(b)
            for x in self.cfg.blocks[b].instructions:
                if x.opcode in ("setp", "or"):
                    self._before[id(x)] = {r.key: state[r.key] for r in x.uses
                                           if not r.is_special and r.key in state.regs}
                self.facts.step(x, state)
        return self._before.get(id(insn), {}).get(reg.key)

    def _idx(self, key: str) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.index)
        return i

    # ---- the fixpoint ----------------------------------------------------------------------------
    @cached_property
    def entry_states(self) -> dict[int, RegState]:
        return self._fixpoint[0]

    @cached_property
    def _fixpoint(self) -> tuple[dict[int, RegState], dict[int, RegState], dict[int, list]]:
        """(state at each block's start, at its end, the undefined uses in it). A block's
        last visit starts from its final state, so what that visit found is final: the
        uses need no second pass over the kernel."""
        cfg = self.cfg
        order = [b for b in cfg.rpo() if self.reachable(b)]
        rank = {b: i for i, b in enumerate(order)}
        ins: dict[int, RegState] = {}
        outs: dict[int, RegState] = {}
        uses: dict[int, list] = {}
        start = RegState(self.entry_mask, self.entry_mask)
        todo = set(order[:1])
        while todo:
            b = min(todo, key=rank.__getitem__)
            todo.discard(b)
            if self.deadline is not None:
                self.deadline.check()
            state = start.copy() if b == cfg.entry else self._join(b, outs)
            if b in ins and ins[b].same(state):
                continue
            ins[b] = state
            out = state.copy()
            found: list = []
            for insn in cfg.blocks[b].instructions:
                self.step(insn, out, found)
            outs[b] = out
            uses[b] = found
            todo.update(s for s in cfg.blocks[b].succs if s in rank)
        return ins, outs, uses

    def _edge(self, b: int, s: int, out: RegState) -> RegState:
        """`out` on the edge b -> s: a guarded branch's predicate is known on each."""
        block = self.cfg.blocks[b]
        term = block.terminator
        if term is None or term.guard is None or len(block.succs) < 2 \
                or term.guard.register.is_special:
            return out
        key = self.index.get(flow_key(term.guard.register))
        if key is None:
            return out
        taken = s == block.succs[0]
        lit = self.conds.lit(key, taken != term.guard.negated)
        st = out.copy()
        _learn(st, lit)
        return st

    def _join(self, b: int, outs: dict[int, RegState]) -> RegState:
        preds = [p for p in self.cfg.blocks[b].preds if p in outs]
        if len(preds) == 1:
            one = self._edge(preds[0], b, outs[preds[0]])
            return one.copy() if one is outs[preds[0]] else one  # `_edge` copies to learn
        paths = [self._edge(p, b, outs[p]) for p in preds]
        must, may, known = -1, 0, None
        for p in paths:
            must &= p.must
            may |= p.may
            known = p.known if known is None else known & p.known
        out = RegState(must, may, {}, known or frozenset())
        vacuous = [self._vacuous(p.known) for p in paths]
        lits = set().union(*(p.cond for p in paths), *vacuous)
        fresh = (1 << len(self.index)) - 1 & ~must  # what a literal may add
        sides = [(p.must, p.cond, vac) for p, vac in zip(paths, vacuous)]
        for lit in lits:
            bits = fresh
            for p_must, p_cond, vac in sides:
                if lit not in vac:
                    bits &= p_must | p_cond.get(lit, 0)
                    if not bits:
                        break
            if bits:
                out.cond[lit] = bits
        return out

    def _vacuous(self, known: frozenset) -> frozenset:
        """The literals a path that knows `known` makes vacuously true: their negations."""
        hit = self._vacuous_memo.get(known)
        if hit is None:
            hit = self._vacuous_memo[known] = frozenset((k, not v) for k, v in known)
        return hit

    # ---- one instruction -------------------------------------------------------------------------
    def step(self, insn: Instruction, st: RegState, uses: list | None = None) -> None:
        """Apply `insn` to `st`; with `uses`, append (instruction, register index, never)
        for each use of a register that may be undefined there."""
        f = self.flows[id(insn)]
        idx = self.index
        if f.kind == "copy":
            for w, srcs in zip(f.writes, f.sources):
                self._assign(st, idx[w], [idx[s] for s in srcs])
        elif f.kind == "select":
            p = idx[f.pred[0]]  # type: ignore[index]
            self._use(st, p, st.known, uses, insn)
            lit = self.conds.lit(p, not f.pred[1])  # type: ignore[index]
            a, b = ([idx[k] for k in arm] for arm in f.arms)
            for w in f.writes:
                self._select(st, idx[w], lit, a, b)
        else:
            guard = None
            if f.guard is not None:
                g = idx[f.guard[0]]
                self._use(st, g, st.known, uses, insn)
                guard = self.conds.lit(g, not f.guard[1])
                if (guard[0], not guard[1]) in st.known:
                    return  # the guard is false on this path: nothing runs
            under = st.known | {guard} if guard is not None else st.known
            must = st.must  # most reads are of registers always defined: no call for them
            for k in f.reads:
                r = idx[k]
                if not must >> r & 1:
                    self._use(st, r, under, uses, insn)
            if guard is None:
                for k in f.writes:
                    bit = 1 << idx[k]
                    st.may |= bit
                    st.must |= bit
            else:
                for k in f.writes:
                    self._write(st, idx[k], guard)
        deps = self.conds.deps
        for k in f.writes:
            for c in deps.get(idx[k], ()):
                _forget(st, c)

    @staticmethod
    def _use(st: RegState, r: int, under, uses, insn: Instruction) -> None:
        if st.defined(r, under):
            return
        if uses is not None:
            uses.append((insn, r, not st.may >> r & 1))
        st.must |= 1 << r  # reported once per path
        st.may |= 1 << r

    @staticmethod
    def _write(st: RegState, r: int, guard: Lit | None) -> None:
        bit = 1 << r
        st.may |= bit
        if guard is None or guard in st.known:
            st.must |= bit
            return
        if st.must & bit:
            return
        if st.cond.get((guard[0], not guard[1]), 0) & bit:
            st.must |= bit
        else:
            st.cond[guard] = st.cond.get(guard, 0) | bit

    @staticmethod
    def _assign(st: RegState, w: int, srcs: list[int]) -> None:
        """w takes the definedness of all of `srcs` together."""
        _set(st, w, *st.defined_mask(srcs))

    @staticmethod
    def _select(st: RegState, w: int, lit: Lit, a: list[int], b: list[int]) -> None:
        neg = (lit[0], not lit[1])
        if lit in st.known or neg in st.known:
            _set(st, w, *st.defined_mask(a if lit in st.known else b))
            return
        ma, ya, ca = st.defined_mask(a)
        mb, yb, cb = st.defined_mask(b)
        # d is defined when `lit` holds if `a` is then, when it fails if `b` is then
        on_a = ma or lit in ca
        on_b = mb or neg in cb
        cond = {k: True for k in ca if k in cb}
        if on_a:
            cond[lit] = True
        if on_b:
            cond[neg] = True
        _set(st, w, on_a and on_b, ya or yb, cond)

    # ---- the findings --------------------------------------------------------------------------
    def writes_of(self, key: str) -> list[Instruction]:
        """The instructions that write register `key` (copies included)."""
        return [insn for b in self.cfg.blocks for insn in b.instructions
                if key in self.flows[id(insn)].writes]

    def witness(self, use: UndefinedUse, limit: int = 64) -> list[tuple[Instruction, bool]]:
        """Branches (instruction, taken) on a path from the entry to the use along which
        the register stays undefined, nearest last; empty when none needs naming."""
        r = self.index[use.key]
        cfg = self.cfg
        b = cfg.block_of(use.insn)
        outs = self._outs()
        path: list[tuple[Instruction, bool]] = []
        seen = {b}
        for _ in range(limit):
            if b == cfg.entry:
                break
            preds = [p for p in cfg.blocks[b].preds if p in outs and p not in seen]
            bad = [p for p in preds if not self._edge(p, b, outs[p]).must >> r & 1]
            if not bad:
                break
            p = bad[0]
            block = cfg.blocks[p]
            if block.terminator is not None and block.terminator.guard is not None \
                    and len(block.succs) > 1:
                path.append((block.terminator, b == block.succs[0]))
            seen.add(p)
            b = p
        return path[::-1]

    def _outs(self) -> dict[int, RegState]:
        return self._fixpoint[1]

    def undefined_uses(self) -> list[UndefinedUse]:
        names = self.names
        return [UndefinedUse(insn, names[r], never, False)
                for found in self._fixpoint[2].values() for insn, r, never in found]


def _set(st: RegState, w: int, must: bool, may: bool, cond: dict[Lit, bool]) -> None:
    bit = 1 << w
    st.may = st.may | bit if may else st.may & ~bit
    if must:  # the literals' bits of w say nothing while w is always defined
        st.must |= bit
        return
    st.must &= ~bit
    for lit in list(st.cond):
        bits = st.cond[lit]
        if cond.get(lit):
            st.cond[lit] = bits | bit
        elif bits & bit:
            st.cond[lit] = bits & ~bit
    for lit, yes in cond.items():
        if yes and lit not in st.cond:
            st.cond[lit] = bit


def _learn(st: RegState, lit: Lit) -> None:
    """`lit` holds from here on: registers defined under it are defined (and the entry
    says nothing more)."""
    st.must |= st.cond.pop(lit, 0)
    known = st.known - {(lit[0], not lit[1])}
    if len(known) >= MAX_KNOWN:
        known = frozenset(list(known)[1:])
    st.known = known | {lit}


def _forget(st: RegState, p: int) -> None:
    """A register condition `p` reads was written: its literals no longer say anything."""
    if any(k == p for k, _ in st.known):
        st.known = frozenset(x for x in st.known if x[0] != p)
    st.cond.pop((p, True), None)
    st.cond.pop((p, False), None)


__all__ = ["Definedness", "UndefinedUse", "RegState"]
