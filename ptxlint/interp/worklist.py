"""The fixpoint: a worklist over basic blocks in reverse postorder.

- States join at merge points; at a loop head the first `join_visits` visits join,
  later ones widen, to thresholds read from the loop's exit comparisons and links (so
  a loop `for (i = tid; i < n; i += 256)` keeps `i < n` rather than jumping to
  infinity; `loops.thresholds`); a head visited `max_visits` times goes to top
  (termination by construction). The joins on back edges already move a grown bound
  to its threshold, leaving out only the classic triggers (`eager=False`): the loop
  settles a round sooner, and a short loop without thresholds stays exact. Edges into
  a loop link its counters (`loops.py`).
- One descending (narrowing) pass follows, recomputing every block from its
  predecessors, which recovers bounds that widening overshot.
- Each edge of a conditional branch refines the state by the branch predicate
  (`refine.assume`); an infeasible edge carries nothing. A back edge also narrows the
  registers its block computed from the compared ones (`_follow`: `j = i + c; if (i <
  n)` bounds j, the register carried round the loop).
- Where lanes of a divergent branch rejoin, registers written under the branch, and
  those its edges narrowed, become varying (`divergence.SyncDependence`).
- Guarded instructions run on a state refined by the guard; when the guard may be
  false, results join with the old values, and a non-uniform guard makes them varying.
- The kernel's `Deadline` (`deadline.py`) is checked at every block visit, also in
  the narrowing pass; past it `DeadlineExceeded` leaves the fixpoint unfinished
  and the caller reports that (no iterate short of the fixpoint reaches a rule).
- With `FixpointParams.rules_only` (the lint's setting), the instructions outside the
  rules' slice (`relevance.py`) are not interpreted: their destinations stay unknown.
"""
from __future__ import annotations

import heapq
from typing import NamedTuple

from ..cfg import CFG, is_brx
from ..deadline import Deadline
from ..domains.lattice import Tri
from ..domains.relation import Link
from ..domains.state import Condition, State
from ..domains.value import Value, tri_of
from ..ir.instruction import Instruction
from ..ir.instructions.integer import Add, Sub
from ..ir.traits import Branch, Call, MemoryAccess, Terminator
from .transfer import memory  # noqa: F401 - registers its transfer functions (as arith does)
from .transfer.arith import CARRY
from .context import Ctx
from .links import narrow_by
from .loops import counter_step, counters_linked, shifted, thresholds
from .refine import assume, assume_cached, written_keys
from .relevance import sliced_out
from .facts import FixpointParams
from .prepass import Prepass
from .transfer.table import transfer_for, unmodelled

#: Modules whose transfer functions read and write registers only (never .param cells).
_REGISTER_ONLY = __package__ + ".transfer.arith"



class Memo(NamedTuple):
    """One instruction's last run (`Interpreter._run`): the inputs it read and what it
    did, replayed when the inputs are the same again."""

    values: tuple  # of the registers the plan says it may read
    comparisons: tuple  # their recorded comparisons (`State.conds`)
    params_before: dict | None  # the .param cells, when they matter to it
    written: tuple  # the registers it wrote
    written_values: tuple
    touched: tuple  # registers whose comparisons it changed (the written ones too)
    touched_comparisons: tuple
    params_after: dict | None  # the .param cells after it, None when unchanged


class WorkExceeded(Exception):
    """The fixpoint interpreted `FixpointParams.max_work` instructions."""


_NONE: frozenset = frozenset()
_NOTHING: tuple[frozenset, frozenset] = (_NONE, _NONE)
_COUNTING = (Add, Sub)
# passes of relational narrowing where a loop with counters is entered (`_entry_narrowed`):
# a guard's bound reaches a counter's start through a chain of definitions, a step a pass
ENTRY_PASSES = 4
# how an instruction runs (`_plan`); a stateful one reads registers beyond its operands,
# a counter update (`i += c`) also shifts the links that read i
_PLAIN, _CALL, _CONTROL, _STATEFUL, _COUNTER = "plain", "call", "control", "stateful", "counter"
_SKIPPED = (None,)  # the plan of an instruction outside the rules' slice
# instruction class -> (kind, transfer function, whether .param cells matter); transfer
# functions are registered at import, before any analysis
_CLASS_PLANS: dict[type, tuple] = {}


def _plan(insn: Instruction, ctx: Ctx) -> tuple:
    """(kind, transfer function or None, registers it may read, whether .param cells
    matter, the `counter_step` of a counter update or None). A transfer function may read
    the registers the operands and the guard name
    and the carry flag (`add.cc`, `addc`...); the `arith*` families compute on registers
    only, while loads, stores and the rest may also read .param cells."""
    cls = insn.__class__
    by_class = _CLASS_PLANS.get(cls)
    if by_class is None:
        fn = transfer_for(cls)
        kind = _CALL if isinstance(insn, Call) else \
            _CONTROL if isinstance(insn, (Branch, Terminator)) else _PLAIN
        registers_only = fn is not None and fn.__module__.startswith(_REGISTER_ONLY) \
            and not isinstance(insn, MemoryAccess)
        # per instruction: whether it may read more than its operands, or count
        special = getattr(fn, "reads_state", None) if kind is _PLAIN else None
        counts = kind is _PLAIN and issubclass(cls, _COUNTING)
        by_class = _CLASS_PLANS[cls] = (kind, fn, not registers_only, special, counts)
    defs, uses = insn.register_keys()
    keys = (*defs, *uses, CARRY)  # the guard is among the uses
    if len(set(keys)) < len(keys):
        keys = tuple(dict.fromkeys(keys))
    kind, fn, with_params, special, counts = by_class
    if special is not None and special(insn, ctx):
        kind = _STATEFUL
    elif counts and (counter := counter_step(insn)) is not None:
        return _COUNTER, fn, keys, with_params, counter
    return kind, fn, keys, with_params, None


class Interpreter:
    def __init__(self, cfg: CFG, ctx: Ctx, params: FixpointParams, calls=None,
                 deadline: Deadline | None = None, pre: Prepass | None = None):
        """`pre`: `cfg`'s function's prepass on `deadline` (`prepass.py`), shared with
        the other analyses of the function; by default one of its own."""
        self.cfg = cfg
        self.ctx = ctx
        self.params = params
        self.calls = calls
        self.deadline = deadline if deadline is not None else cfg.deadline
        if pre is None:
            pre = Prepass(cfg, self.deadline)
        self.sync = pre.sync
        ctx.relations = pre.relations
        self.divergent: set[int] = set()
        # divergent branch block -> registers its edges narrowed (`_note_refined`)
        self.refined: dict[int, set[str]] = {}
        self.refined_version = 0
        self._taint_cache: dict[int, tuple] = {}  # block -> (version, `_taints`)
        self._noted: dict[object, object] = {}  # edge -> the refinement `_note_refined` saw
        self.in_states: list[State | None] = [None] * len(cfg.blocks)
        self.out_states: list[State | None] = [None] * len(cfg.blocks)
        self.visits = [0] * len(cfg.blocks)
        # instructions interpreted: what the analysis cost, as a number that is the same
        # on every run (budgets for optional extra work are set in it, not in seconds)
        self.work = 0
        self.requeue: set[int] = set()
        self._order = cfg.rpo_index
        self._plans = pre.plans[params.rules_only]  # id(insn) -> how it runs (`_plan`)
        self._sliced_out = sliced_out(cfg.function) if params.rules_only else frozenset()
        self._memo: dict[int, Memo] = {}  # id(insn) -> its last inputs and effects
        self._refined: dict[object, tuple] = {}  # edge or guard -> its last refinement
        self.loops = pre.loops
        self._enters = pre.enters  # block -> whether an edge from it enters a loop
        # block -> (its out-state, the edge states computed from it)
        self._edges: dict[int, tuple[State, list[tuple[int, State]]]] = {}
        self._pre = pre  # `_follow`, `_wrapped`, `_keep_invariants`

    # ---- driver --------------------------------------------------------------------------
    def run(self, entry: State) -> list[State | None]:
        self.in_states[self.cfg.entry] = entry
        queue = [(self._order[self.cfg.entry], self.cfg.entry)]
        queued = {self.cfg.entry}
        check = self.deadline.check  # a visit costs microseconds, the clock nanoseconds
        max_work = self.params.max_work
        while queue:
            _, b = heapq.heappop(queue)
            queued.discard(b)
            check()
            if max_work is not None and self.work > max_work:
                raise WorkExceeded(self.cfg.function.name)
            for succ in self._visit(b):
                if succ not in queued and self._order[succ] >= 0:
                    queued.add(succ)
                    heapq.heappush(queue, (self._order[succ], succ))
        # blocks whose out-state the narrowing replaced, and what divergence the
        # fixpoint ended with (`_narrow` skips what neither touched)
        self._renarrowed: set[int] = set()
        self._settled = (len(self.divergent), self.refined_version)
        with self.deadline.phase("narrowing"):
            for _ in range(self.params.narrowing_passes):
                version = -1
                while version != self.refined_version:  # a merge point was computed early
                    version = self.refined_version  # (the sets only grow: this ends)
                    self._narrow()
        self._edges.clear()
        return self.in_states

    def _visit(self, b: int) -> list[int]:
        """Interpret block b; the successors whose in-state grew."""
        self.visits[b] += 1
        state = self.entry_state(b)
        out = self.interpret_block(b, state)
        self.out_states[b] = out
        changed = []
        edges = self.edges(b, out)
        self._edges[b] = (out, edges)
        for succ, edge_state in edges:
            if self._merge(succ, edge_state):
                changed.append(succ)
        if self.requeue:  # a branch turned divergent: its merge points must be redone
            changed.extend(m for m in self.requeue if self.in_states[m] is not None)
            self.requeue.clear()
        return changed

    def entry_state(self, b: int) -> State:
        state = self.in_states[b].copy()
        if not self.divergent or b not in self.sync.at_merge:
            return state
        regs = state.regs
        tainted, refined = self._taints(b)
        for key in tainted:
            v = regs.get(key)
            if v is not None and not v.aff.is_top:
                regs[key] = v.varying()
        for key in refined:
            v = regs.get(key)
            if v is not None and v.is_uniform and not v.is_bottom:
                regs[key] = v.varying()
        return state

    def _taints(self, b: int) -> tuple[set[str], set[str]]:
        """(registers written, registers narrowed) under the divergent branches whose
        arms meet at b: varying on entry to b (the latter only where uniform)."""
        if b not in self.sync.at_merge:
            return _NOTHING
        version = (len(self.divergent), self.refined_version)
        hit = self._taint_cache.get(b)
        if hit is None or hit[0] != version:
            refined: set[str] = set()
            branches = self.sync.branches_at(b, self.divergent)
            for branch in branches:
                refined |= self.refined.get(branch, _NONE)
            hit = self._taint_cache[b] = (version, self.sync.defined_by(branches), refined)
        return hit[1], hit[2]

    def _merge(self, succ: int, incoming: State) -> bool:
        old = self.in_states[succ]
        if old is None:
            self.in_states[succ] = incoming
            return True
        new = old.grown_by(incoming)  # one pass for `incoming.leq(old)` and the join
        if new is None:
            return False
        if succ in self.cfg.loop_heads:
            visits = self.visits[succ]
            if visits >= self.params.max_visits:
                new = State(params={})  # give up on this loop: everything unknown
            elif visits >= self.params.join_visits:
                joined = new
                new = old.widen(new, thresholds(self.cfg, self.out_states, succ, new))
                self._keep_invariants(succ, joined, new)
            elif visits:  # a back edge, before widening: a bound with a threshold meets it
                new = old.widen(new, thresholds(self.cfg, self.out_states, succ, new),
                                eager=False)
        self.in_states[succ] = new
        return True

    def _narrow(self) -> None:
        """One descending pass: recompute each block from its predecessors."""
        # edge states of a block, kept while its out-state stays the same object
        cached = self._edges
        divergent = (len(self.divergent), self.refined_version)
        visits, renarrowed, outs = self.visits, self._renarrowed, self.out_states
        check = self.deadline.check
        for b in self.cfg.rpo():
            if b == self.cfg.entry or self.in_states[b] is None:
                continue
            check()
            preds = self.cfg.blocks[b].preds
            # Predecessors interpreted once each, and not since: the in-state is already
            # the join of the states their edges bring (joins commute), so is the
            # out-state, as the comparison below would find.
            if outs[b] is not None and \
                    (len(self.divergent), self.refined_version) == self._settled and all(
                        visits[p] == 1 and p not in renarrowed for p in preds
                        if outs[p] is not None):
                continue
            incoming = None
            for p in preds:
                out = self.out_states[p]
                if out is None:
                    continue
                hit = cached.get(p)
                if hit is None or hit[0] is not out:
                    hit = cached[p] = (out, self.edges(p, out))
                for succ, st in hit[1]:
                    if succ == b:
                        incoming = st if incoming is None else incoming.join(st)
            if incoming is None:
                continue
            # At the fixpoint every out-state is its block's in-state interpreted; when the
            # recomputed in-state is the same (and no branch turned divergent since), so is
            # the out-state, and the block need not be interpreted again.
            if self.out_states[b] is not None and incoming == self.in_states[b] \
                    and (len(self.divergent), self.refined_version) == divergent:
                continue
            self.in_states[b] = incoming
            self.out_states[b] = self.interpret_block(b, self.entry_state(b))
            renarrowed.add(b)

    # ---- blocks and edges ----------------------------------------------------------------
    def interpret_block(self, b: int, state: State) -> State:
        step = self.step
        instructions = self.cfg.blocks[b].instructions
        self.work += len(instructions)
        for insn in instructions:
            step(insn, state)
        return state

    def step(self, insn: Instruction, s: State) -> None:
        plan = self._plans.get(id(insn))
        if plan is None:
            plan = self._plans[id(insn)] = _SKIPPED if id(insn) in self._sliced_out \
                else _plan(insn, self.ctx)
        if plan is _SKIPPED:
            return
        guard = insn.guard
        if guard is None:
            self._run(insn, plan, s)
            return
        if plan[0] is _CONTROL:
            return  # the edges carry the guard
        truth = tri_of(s[guard.register.key])
        if guard.negated:
            truth = truth.negate()
        if truth is Tri.FALSE:
            return
        if truth is Tri.TRUE:
            self._run(insn, plan, s)
            return
        uniform = s[guard.register.key].is_uniform
        taken = s.copy()
        if not self._assume(id(insn), taken, guard.register.key, not guard.negated):
            return
        self._run(insn, plan, taken)
        for reg in insn.defs:
            merged = s[reg.key].join(taken[reg.key])
            s.assign(reg.key, merged if uniform else merged.varying())
        for cell, v in taken.params.items():
            old = s.params.get(cell)
            if old is not v:
                s.params[cell] = v if old is None else old.join(v)

    def _run(self, insn: Instruction, plan: tuple, s: State) -> None:
        kind, fn, keys, with_params, counter = plan
        if kind is _CALL and self.calls is not None:
            self.calls.apply(insn, s, self.ctx)
            return
        if kind is _COUNTER:
            key, step, w = counter
            conds = s.conds
            if conds and (key in self.ctx.linked or conds.get(key).__class__ is Link):
                self._count(insn, (_PLAIN, fn, keys, with_params, None), s, key, step, w)
                return
            kind = _PLAIN
        if kind is not _PLAIN or not self.params.memoize:
            if fn is None:
                unmodelled(insn, s, self.ctx)
            else:
                fn(insn, s, self.ctx)
            return
        # Memo: a transfer function is a function of the values of the registers its
        # operands name (and the carry flag), their recorded comparisons and (outside the
        # register-only arith families) the .param cells; when those are what they were
        # last time, replay what it did then.
        regs, conds, params = s.regs, s.conds, s.params
        values = tuple(map(regs.get, keys))
        comparisons = tuple(map(conds.get, keys))
        last = self._memo.get(id(insn))
        if last is not None and last.values == values and last.comparisons == comparisons \
                and (not with_params or last.params_before == params):
            new_params = last.params_after
            s.replay(last.written, last.written_values, last.touched, last.touched_comparisons)
            if new_params is not None:
                params.clear()
                params.update(new_params)
            return
        before = dict(params) if with_params else None
        s.log = log = []
        try:
            if fn is None:
                unmodelled(insn, s, self.ctx)
            else:
                fn(insn, s, self.ctx)
        finally:
            s.log = None
        written = (log[0],) if len(log) == 1 else tuple(dict.fromkeys(log))
        # comparisons to restore: those of written registers, and any other it changed
        touched = written
        if tuple(map(conds.get, keys)) != comparisons:
            touched += tuple(k for k, c in zip(keys, comparisons)
                             if conds.get(k) is not c and k not in written)
        self._memo[id(insn)] = Memo(values, comparisons, before, written,
                                    tuple(map(regs.get, written)), touched,
                                    tuple(map(conds.get, touched)),
                                    None if not with_params or params == before else dict(params))

    def _count(self, insn: Instruction, plan: tuple, s: State, key: str, step: int,
               w: int) -> None:
        """`i += c` with links reading i: they shift by the step instead of ending
        (`loops.shifted`), and i's own link bounds its new value."""
        kept = shifted(s, key, step, w)
        self._run(insn, plan, s)
        for d, link in kept:
            if d == key:
                b = None if link.b is None else s[link.b].si
                v = s[key].restrict(link.forward(s[link.a].si, b), link.w, link.signed)
                if not v.is_bottom:
                    s.regs[key] = v
        s.conds.update(kept)

    def _assume(self, slot: object, s: State, key: str, truth: bool) -> bool:
        if self.params.memoize:
            return assume_cached(self._refined, slot, s, key, truth, self.ctx.linked)
        return assume(s, key, truth, self.ctx.linked)

    def edges(self, b: int, out: State) -> list[tuple[int, State]]:
        """Successor states, refined by the branch predicate on each edge."""
        block = self.cfg.blocks[b]
        term = block.terminator
        succs = block.succs
        if term is None or term.guard is None or len(succs) < 2:
            if term is not None and is_brx(term):
                self._note_divergence(b, term, out)
            edges = [(s, out) for s in succs]
            return self._entering_loops(b, edges) if self._enters[b] else edges
        key = term.guard.register.key
        if not out[key].is_uniform:
            self._note_divergence(b, term, out, force=True)
        if isinstance(term, Branch) and not is_brx(term):
            taken_block = self.cfg.by_label.get(term.targets[0]) if term.targets else None
        else:
            taken_block = self.cfg.exit
        result = []
        heads = self.cfg.loop_heads
        for s in succs:
            # refinement writes registers only: the comparisons and cells can be shared
            st = State(dict(out.regs), out.conds, out.params, out.unreachable)
            holds = s == taken_block
            if self._assume((b, s), st, key, holds != term.guard.negated):
                if s in heads and (follow := self._follow(b, s)) and \
                        not self._carry(follow, st):
                    continue  # no value left: the edge is infeasible
                result.append((s, st))
        if b in self.divergent:
            self._note_refined(b, out, result)
        return self._entering_loops(b, result) if self._enters[b] else result

    def _follow(self, b: int, head: int) -> tuple[Instruction, ...]:
        """On a back edge b -> head: the relations of b that carry the branch's bound on
        its compared registers to the registers computed from them
        (`Relations.follow_compared`), so a counter incremented before its test (``i' =
        i + c; if (i < n)``) is bounded where the loop comes round, and widening does
        not climb c at a time."""
        follows = self._pre.follows
        hit = follows.get((b, head))
        if hit is None:
            hit = follows[(b, head)] = \
                self.ctx.relations.follow_compared(b) \
                if b in self.cfg.loop(head).body else ()
        return hit

    def _carry(self, relations: tuple[Instruction, ...], st: State) -> bool:
        """Narrow `st` by `relations` in order; False when a register has no value left."""
        for insn in relations:
            if narrow_by(insn, st, self.ctx) is None:
                return False
        return True

    def _entering_loops(self, b: int, edges: list[tuple[int, State]]) -> list[tuple[int, State]]:
        """Edges from b into a loop carry the loop's counters linked (`loops.py`)."""
        heads = self.cfg.loop_heads
        for i, (succ, st) in enumerate(list(edges)):
            if succ in heads and b not in self.cfg.loop(succ).body:
                counters, compared = self.loops.counters(succ)
                if counters:
                    st = self._entry_narrowed(b, st, counters)
                    edges[i] = (succ, st)
                    linked = counters_linked(st, counters, compared)
                    if linked is not st:
                        edges[i] = (succ, linked)
                        self.ctx.linked.update(c[0] for c in counters)
        return edges

    def _keep_invariants(self, head: int, joined: State, widened: State) -> None:
        """Registers the loop of `head` never writes take the join at its head, not the
        widening: their value there is what the loop is entered with, which grows only
        as fast as an enclosing loop's (widened at its own head). Widened, a nested
        loop's copy of an outer counter (`level`, entered as 257, then 225...) jumped to
        the width limits and stayed there, the narrowing pass being unable to shrink a
        loop-carried value; the inner loop's counters then wrapped."""
        loop_writes = self._pre.loop_writes
        writes = loop_writes.get(head)
        if writes is None:
            writes = loop_writes[head] = frozenset(
                r.key for b in self.cfg.loop(head).body
                for insn in self.cfg.blocks[b].instructions for r in insn.defs)
        regs = widened.regs
        for key, v in joined.regs.items():
            if key not in writes and regs.get(key) is not v:
                regs[key] = v

    def _entry_narrowed(self, b: int, st: State, counters) -> State:
        """The state entering a loop from b, narrowed by the relations holding there
        around the loop's counters and the registers the branches on the way compared
        (the predicates the state knows): a count-down `n - n % 4` entered only when
        `min(level, 32) - 1 >= 3` starts at 4 or more, not at 0 (where it would wrap
        round the loop). Once per loop entry, not per iteration."""
        keys = [c[0] for c in counters]
        out = State(self._wrapped(st.regs), dict(st.conds), st.params, st.unreachable)
        for p, cond in st.conds.items():
            known = st.regs[p].singleton() if p in st.regs else None
            if cond.__class__ is Condition and known is not None:
                keys += [x for x in (cond.a, cond.b) if isinstance(x, str)]
                # what the branch said, again: on a set that fits no view it said nothing
                if not assume(out, p, bool(known), self.ctx.linked):
                    return st
        avail = self.ctx.relations.after(b)
        for _ in range(ENTRY_PASSES):
            changed = self.ctx.relations.narrow(out, keys, avail, self.ctx)
            if changed is None:
                return st  # no execution enters: left to the refinement that said so
            if not changed:
                break
        return out if out.regs != st.regs else st

    def _wrapped(self, regs: dict) -> dict:
        """`regs` with each number of a declared w-bit register whose set has an
        infinite bound (a loop head widened it) as the w-bit readings it stands for:
        the same bits, in a form a relation can narrow (`SI.restrict` keeps a set that
        fits neither view)."""
        widths = self._pre.reg_widths
        if widths is None:
            widths = self._pre.reg_widths = {}
            for v in self.ctx.function.variables:
                if v.space == "reg" and v.type.bits in (16, 32, 64):
                    names = [f"{v.name}{i}" for i in range(v.range_count)] \
                        if v.range_count is not None else [v.name]
                    widths.update((n, v.type.bits) for n in names)
        out = dict(regs)
        for key, v in regs.items():
            w = widths.get(key)
            if w is not None and v.region is None and not v.si.is_bottom and \
                    (v.si.lo is None or v.si.hi is None) and not v.si.fits(w, False) and \
                    not v.si.fits(w, True):
                # the lane form's base is as unbounded: the readings replace both
                out[key] = Value.of_set(v.si.wrap(w, False), uniform=v.is_uniform)
        return out

    def _note_refined(self, b: int, out: State, edges: list[tuple[int, State]]) -> None:
        """Record the registers the edges of divergent branch b narrowed from a varying
        value to a uniform one (one value among the arm's lanes): where its arms meet,
        they must not look uniform, each arm may hold another value. A register found
        only by the narrowing pass (narrower states) makes `run` narrow again."""
        before = out.regs
        seen = self.refined.setdefault(b, set())
        grew = False
        for s, st in edges:
            if self.params.memoize:
                # what the branch's own refinement wrote, unless it is the same as last
                # time, and what narrowing by the block's relations may have (`_follow`)
                keys = [i.dests[0].key for i in self._pre.follows.get((b, s), ())]
                last = self._refined.get((b, s))
                if self._noted.get((b, s)) is not last:
                    self._noted[(b, s)] = last
                    keys = [*written_keys(self._refined, (b, s)), *keys]
            else:
                keys = [k for k, v in st.regs.items() if before.get(k) is not v]
            regs = st.regs
            for key in keys:
                if key not in seen:
                    new, old = regs.get(key), before.get(key)
                    if new is not None and new.is_uniform and \
                            (old is None or not old.is_uniform):
                        seen.add(key)
                        grew = True
        if grew:
            self.refined_version += 1
            self.requeue.update(self.sync.merges_of(b))

    def _note_divergence(self, b: int, term: Instruction, out: State, force: bool = False) -> None:
        if not force:  # brx.idx: divergent when its index is not uniform
            index = term.operands[0]
            if not hasattr(index, "key") or out[index.key].is_uniform:
                return
        if b not in self.divergent:
            self.divergent.add(b)
            self.requeue.update(self.sync.merges_of(b))
