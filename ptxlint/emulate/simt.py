"""SIMT control flow by *min-position scheduling* over groups of threads.

A thread's position is its *call path*: the pcs of the calls it is inside, outermost
first, then its own pc (steps are laid out function by function, in source order). Paths
compare lexicographically, which is pc order in the program with every call inlined at
its call site: a thread inside a callee is before a thread past the call, whatever pcs
the callee's steps have. Every live thread sits in exactly one group: the set of threads
at one path. The scheduler always runs the group at the smallest path, straight through
until a branch, a call, a return or a barrier, or until it reaches the path of another
group, which it joins. A divergent branch splits a group in two; the part that jumps
backwards (a loop) runs again first, the part that goes forward waits at its target until
everything before it has caught up, callees included. In the structured layouts
compilers emit, the first pc that both sides of a branch reach is the branch's immediate
post-dominator, so lanes reconverge there, as with a reconvergence stack; the difference
shows only for unusual layouts (a join placed before the branch), where lanes stay apart
longer. Lanes of one warp that call a function from different call sites run it apart,
as they would inlined. Observations are per warp: the lanes of one warp executing an
instruction together are those of its group.

Because threads only meet at barriers and in warp-synchronous instructions, running one
group ahead of another is a legal interleaving; a thread spinning on a value another
thread has yet to write never yields, so runs have a budget of steps and seconds
(`limits.Budget`).
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.sync import is_silent
from .barriers import BarrierState, arrive, release
from .calls import enter, leave
from .groups import Group
from .limits import Budget
from .semantics import BARRIER, BRANCH, BRX, CALL, EXIT, MBWAIT, PLAIN, RET, TRAP
from .warpops import lane_bits

CallPath = tuple[int, ...]  # the pcs of the calls a group is inside, then its own pc


class Scheduler:
    def __init__(self, m, program, budget: Budget, probe=None):
        self.m, self.program = m, program
        self.probe = probe  # called as probe(m, pc) before each step (differential testing)
        self.steps = program.steps
        self.budget = budget  # the whole launch's, shared by the schedulers of its chunks
        self.thread_instructions = 0
        self.ready: dict[CallPath, Group] = {}
        self.waiting: dict[CallPath, Group] = {}
        self.barriers = BarrierState(m.n)
        self.arrivals: dict[tuple[int, int], int] = {}
        self.parked: dict[CallPath, Group] = {}  # lanes waiting on an mbarrier phase
        self.park_mark = 0
        m.scheduler = self

    # ---- groups -----------------------------------------------------------------------------------
    def push(self, path: CallPath, g: Group | None, into: dict | None = None) -> None:
        if g is None:
            return
        into = self.ready if into is None else into
        have = into.get(path)
        into[path] = g if have is None else have.merge(g)

    def run(self) -> None:
        self.push((self.program.infos[self.program.kernel.name].entry,), Group(self.m.n))
        while self.ready or self.waiting or self.parked:
            if not self.ready:
                self._quiescent()
                continue
            path = min(self.ready)
            self._execute(path, self.ready.pop(path))

    def _quiescent(self) -> None:
        """Nothing can run: retry mbarrier waits if an mbarrier changed since they parked,
        else complete the CTA barriers, else the parked lanes can never go on."""
        changes = getattr(self.m.mem, "mbar_changes", 0)
        if self.parked and changes != self.park_mark:
            for path, g in self.parked.items():
                self.push(path, g)
            self.parked = {}
            self.park_mark = changes
        elif self.waiting:
            self._release()
        else:
            for path, g in self.parked.items():
                self.m.pc = path[-1]
                self.m.obs.event("mbarrier-deadlock", self.m, "waits for an mbarrier phase "
                                 "that can no longer complete: the threads stop", g.threads())
                self.retire(g.threads())
            self.parked = {}

    def _execute(self, path: CallPath, g: Group) -> None:
        m, steps = self.m, self.steps
        m.idx = g.idx
        count = g.count
        probe, budget = self.probe, self.budget
        stack, pc = path[:-1], path[-1]
        # the pcs of this activation where other groups wait (plain steps push nothing)
        stops = {p[-1] for p in self.ready if len(p) == len(path) and p[:-1] == stack}
        while True:
            step = steps[pc]
            m.pc = pc
            if probe is not None:
                probe(m, pc)
            self.thread_instructions += count
            budget.steps += 1  # inlined: this loop is the emulator's hot path
            if budget.steps > budget.next_check:
                budget.check(step.insn.span if step.insn else None)
            if step.kind == PLAIN:
                step.run(m)
                pc += 1
                if pc in stops:
                    self.push((*stack, pc), g)
                    return
                continue
            self._control(stack, pc, step, g)
            return

    # ---- control steps ------------------------------------------------------------------------------
    def _guard(self, step, g: Group) -> tuple[Group | None, Group | None]:
        """(threads whose guard holds, the others)."""
        if step.guard is None:
            return g, None
        v = step.guard(self.m)
        if np.ndim(v) == 0:
            return (g, None) if v else (None, g)
        return g.split(np.asarray(v, bool))

    def _control(self, stack: CallPath, pc: int, step, g: Group) -> None:
        m = self.m
        kind = step.kind
        if kind == BRANCH:
            if step.uni and step.guard is not None:
                self._check_uniform(g, step.guard(m), "branch")
            taken, rest = self._guard(step, g)
            self.push((*stack, step.data), taken)
            self.push((*stack, pc + 1), rest)
            return
        if step.uni and step.guard is not None and kind in (CALL, BRX):
            self._check_uniform(g, step.guard(m), "call" if kind == CALL else "brx.idx")
        on, off = self._guard(step, g)
        self.push((*stack, pc + 1), off)
        if on is None:
            return
        m.idx = on.idx
        t = on.threads()
        if kind == BRX:
            self._brx(stack, step, on, t)
        elif kind == CALL:
            self._call(stack, pc, step, on, t)
        elif kind == RET:
            self._return(stack, pc, on, t)
        elif kind in (EXIT, TRAP):
            if kind == TRAP:
                m.obs.event("trap", m, "trap: the launch would fail here", t)
            self.retire(t)
        elif kind == BARRIER:
            arrive(m, self.barriers, step, t)
            self.push((*stack, pc), on, self.waiting)
        elif kind == MBWAIT:
            done, p = step.data(m)
            yes, no = on.split(done)
            if yes is not None:
                m.idx = yes.idx
                p(m, np.True_)
                self.push((*stack, pc + 1), yes)
            if no is not None:
                self.push((*stack, pc), no, self.parked)
                self.park_mark = getattr(m.mem, "mbar_changes", 0)

    def leaving(self) -> np.ndarray:
        """Per thread of the chunk: waiting, in the kernel itself, where every path only
        leaves the kernel without running anything another lane could wait for
        (`is_silent`). A warp collective waits only for the lanes of its mask that have
        not exited, so these count as exited (`warpops.check_members`)."""
        out = np.zeros(self.m.n, bool)
        for into in (self.ready, self.waiting, self.parked):
            for path, g in into.items():
                if len(path) == 1 and self._exits_silently(path[0]):
                    out[g.threads()] = True
        return out

    def _exits_silently(self, pc: int) -> bool:
        memo = self.__dict__.setdefault("_silent", {})
        hit = memo.get(pc)
        if hit is None:
            hit = memo[pc] = _exits_silently(self.steps, pc)
        return hit

    def retire(self, t: np.ndarray) -> None:
        m = self.m
        m.live[t] = False
        m.n_live -= len(t)

    def _check_uniform(self, g: Group, flags, what: str) -> None:
        m = self.m
        if np.ndim(flags) == 0:
            return
        t = g.threads()
        run, yes = lane_bits(m, t, np.asarray(flags, bool))
        _, every = lane_bits(m, t, True)
        split = np.flatnonzero((yes != 0) & (yes != every))
        if len(split):
            sel = np.isin(run, split)
            m.obs.event("divergent-uniform", m, f"'.uni' {what} whose active lanes disagree",
                        t[sel], per_lane={"taken": [bool(x) for x in np.asarray(flags)[sel]]})

    def _brx(self, stack: CallPath, step, g: Group, t: np.ndarray) -> None:
        m = self.m
        index_of, targets = step.data
        idx = np.broadcast_to(np.asarray(index_of(m), np.int64), t.shape)
        if step.uni:
            self._check_uniform_values(g, idx, "brx.idx")
        bad = (idx < 0) | (idx >= len(targets))
        if bad.any():
            m.obs.event("brx-out-of-range", m, f"brx.idx index outside its {len(targets)} "
                        "targets: the threads stop", t[bad])
            self.retire(t[bad])
        table = np.asarray(targets, np.int64)
        dest = table[np.where(bad, 0, idx)]
        for target in np.unique(dest[~bad]):
            self.push((*stack, int(target)),
                      Group.of(m.n, t[np.flatnonzero((dest == target) & ~bad)]))

    def _check_uniform_values(self, g: Group, values: np.ndarray, what: str) -> None:
        m = self.m
        t = g.threads()
        w = m.warp[t]
        start = np.concatenate([[True], w[1:] != w[:-1]])
        first_val = values[np.flatnonzero(start)][np.cumsum(start) - 1]
        differs = values != first_val
        if differs.any():
            bad_warps = np.unique(w[differs])
            m.obs.event("divergent-uniform", m, f"'.uni' {what} whose active lanes disagree",
                        t[np.isin(w, bad_warps)])

    def _call(self, stack: CallPath, pc: int, step, g: Group, t: np.ndarray) -> None:
        """Enter the callee: its steps run at paths below `stack + (pc,)`, so before any
        group of this frame past the call."""
        m, program = self.m, self.program
        data = step.data
        if data.callee is not None:
            enter(m, program, data.callee, data, t, pc + 1)
            self.push((*stack, pc, data.callee.entry), g)
            return
        addr = np.broadcast_to(np.asarray(data.target(m), np.uint64), t.shape)
        if step.uni:
            self._check_uniform_values(g, addr, "call")
        by_addr = {v: k for k, v in program.layout.functions.items()}
        for a in np.unique(addr):
            sel = t[np.flatnonzero(addr == a)]
            name = by_addr.get(int(a))
            if name is None:
                m.obs.event("bad-call", m, f"indirect call to {int(a):#x}, not a function: the "
                            "threads stop", sel)
                self.retire(sel)
                continue
            info = program.infos[name]
            enter(m, program, info, data, sel, pc + 1)
            self.push((*stack, pc, info.entry), Group.of(m.n, sel))

    def _return(self, stack: CallPath, pc: int, g: Group, t: np.ndarray) -> None:
        m, program = self.m, self.program
        info = program.owner[pc]
        if info.function.is_entry:
            self.retire(t)
            return
        back = leave(m, program, info, t)
        # a group's threads share its path, so they all resume after the same call
        assert stack and (back == stack[-1] + 1).all(), "call stacks out of step"
        self.push((*stack[:-1], stack[-1] + 1), g)

    def _release(self) -> None:
        by_pc: dict[int, list[np.ndarray]] = {}
        for path, g in self.waiting.items():
            by_pc.setdefault(path[-1], []).append(g.threads())
        waiting = {pc: np.sort(np.concatenate(ts)) for pc, ts in by_pc.items()}
        go_on = release(self.m, self.barriers, waiting)
        n = self.m.n
        groups = self.waiting
        self.waiting = {}
        for (*stack, pc), g in groups.items():
            t = g.threads()
            done = np.isin(t, go_on, assume_unique=True)
            if done.all():
                self.push((*stack, pc + 1), g)
                continue
            if done.any():
                self.push((*stack, pc + 1), Group.of(n, t[done]))
            self.push((*stack, pc), Group.of(n, t[~done]), self.waiting)


def _exits_silently(steps, start: int) -> bool:
    """Every path from step `start` reaches the kernel's `ret`/`exit` through silent
    plain steps and branches only."""
    seen, todo = set(), [start]
    while todo:
        pc = todo.pop()
        if pc in seen:
            continue
        seen.add(pc)
        step = steps[pc]
        if step.kind == PLAIN and step.insn is not None and is_silent(step.insn):
            todo.append(pc + 1)
        elif step.kind == BRANCH:
            todo.append(step.data)
            if step.guard is not None:
                todo.append(pc + 1)
        elif step.kind in (RET, EXIT):
            if step.guard is not None:
                todo.append(pc + 1)
        else:
            return False
    return True

