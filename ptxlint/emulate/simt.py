"""SIMT control flow by *min-PC scheduling* over groups of threads.

Every live thread sits in exactly one group: the set of threads at one pc (steps are laid
out function by function, in source order). The scheduler always runs the group with the
smallest pc, straight through until a branch, a call, a return or a barrier, or until it
reaches the pc of another group, which it joins. A divergent branch splits a group in
two; the part that jumps backwards (a loop) runs again first, the part that goes forward
waits at its target until everything before it has caught up. In the structured layouts
compilers emit, the first pc that both sides of a branch reach is the branch's immediate
post-dominator, so lanes reconverge there, as with a reconvergence stack; the difference
shows only for unusual layouts (a join placed before the branch), where lanes stay apart
longer. Observations are per warp: the lanes of one warp executing an instruction
together are those of its group.

Because threads only meet at barriers and in warp-synchronous instructions, running one
group ahead of another is a legal interleaving; a thread spinning on a value another
thread has yet to write never yields, so runs have a step budget (`max_steps`).
"""
from __future__ import annotations

import numpy as np

from .barriers import BarrierState, arrive, release
from .calls import enter, leave
from .errors import EmulationError
from .groups import Group
from .semantics import BARRIER, BRANCH, BRX, CALL, EXIT, MBWAIT, PLAIN, RET, TRAP
from .warpops import lane_bits


class Scheduler:
    def __init__(self, m, program, max_steps: int, probe=None):
        self.m, self.program = m, program
        self.probe = probe  # called as probe(m, pc) before each step (differential testing)
        self.steps = program.steps
        self.max_steps = max_steps
        self.step_count = 0
        self.thread_instructions = 0
        self.ready: dict[int, Group] = {}
        self.waiting: dict[int, Group] = {}
        self.barriers = BarrierState(m.n)
        self.arrivals: dict[tuple[int, int], int] = {}
        self.parked: dict[int, Group] = {}  # lanes waiting on an mbarrier phase
        self.park_mark = 0
        m.scheduler = self

    # ---- groups -----------------------------------------------------------------------------------
    def push(self, pc: int, g: Group | None, into: dict | None = None) -> None:
        if g is None:
            return
        into = self.ready if into is None else into
        have = into.get(pc)
        into[pc] = g if have is None else have.merge(g)

    def run(self) -> None:
        self.push(self.program.infos[self.program.kernel.name].entry, Group(self.m.n))
        while self.ready or self.waiting or self.parked:
            if not self.ready:
                self._quiescent()
                continue
            pc = min(self.ready)
            self._execute(pc, self.ready.pop(pc))

    def _quiescent(self) -> None:
        """Nothing can run: retry mbarrier waits if an mbarrier changed since they parked,
        else complete the CTA barriers, else the parked lanes can never go on."""
        changes = getattr(self.m.mem, "mbar_changes", 0)
        if self.parked and changes != self.park_mark:
            for pc, g in self.parked.items():
                self.push(pc, g)
            self.parked = {}
            self.park_mark = changes
        elif self.waiting:
            self._release()
        else:
            for pc, g in self.parked.items():
                self.m.pc = pc
                self.m.obs.event("mbarrier-deadlock", self.m, "waits for an mbarrier phase "
                                 "that can no longer complete: the threads stop", g.threads())
                self.retire(g.threads())
            self.parked = {}

    def _execute(self, pc: int, g: Group) -> None:
        m, steps, ready = self.m, self.steps, self.ready
        m.idx = g.idx
        count = g.count
        probe = self.probe
        while True:
            step = steps[pc]
            m.pc = pc
            if probe is not None:
                probe(m, pc)
            self.thread_instructions += count
            self.step_count += 1
            if self.step_count > self.max_steps:
                raise EmulationError(f"step limit of {self.max_steps} exceeded: the kernel may "
                                     "not terminate (raise max_steps if it does)",
                                     step.insn.span if step.insn else None)
            if step.kind == PLAIN:
                step.run(m)
                pc += 1
                if pc in ready:
                    self.push(pc, g)
                    return
                continue
            self._control(pc, step, g)
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

    def _control(self, pc: int, step, g: Group) -> None:
        m = self.m
        kind = step.kind
        if kind == BRANCH:
            if step.uni and step.guard is not None:
                self._check_uniform(g, step.guard(m), "branch")
            taken, rest = self._guard(step, g)
            self.push(step.data, taken)
            self.push(pc + 1, rest)
            return
        if step.uni and step.guard is not None and kind in (CALL, BRX):
            self._check_uniform(g, step.guard(m), "call" if kind == CALL else "brx.idx")
        on, off = self._guard(step, g)
        self.push(pc + 1, off)
        if on is None:
            return
        m.idx = on.idx
        t = on.threads()
        if kind == BRX:
            self._brx(pc, step, on, t)
        elif kind == CALL:
            self._call(pc, step, on, t)
        elif kind == RET:
            self._return(pc, on, t)
        elif kind in (EXIT, TRAP):
            if kind == TRAP:
                m.obs.event("trap", m, "trap: the launch would fail here", t)
            self.retire(t)
        elif kind == BARRIER:
            arrive(m, self.barriers, step, t)
            self.push(pc, on, self.waiting)
        elif kind == MBWAIT:
            done, p = step.data(m)
            yes, no = on.split(done)
            if yes is not None:
                m.idx = yes.idx
                p(m, np.True_)
                self.push(pc + 1, yes)
            if no is not None:
                self.push(pc, no, self.parked)
                self.park_mark = getattr(m.mem, "mbar_changes", 0)

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

    def _brx(self, pc: int, step, g: Group, t: np.ndarray) -> None:
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
            self.push(int(target), Group.of(m.n, t[np.flatnonzero((dest == target) & ~bad)]))

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

    def _call(self, pc: int, step, g: Group, t: np.ndarray) -> None:
        m, program = self.m, self.program
        data = step.data
        if data.callee is not None:
            enter(m, program, data.callee, data, t, pc + 1)
            self.push(data.callee.entry, g)
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
            self.push(info.entry, Group.of(m.n, sel))

    def _return(self, pc: int, g: Group, t: np.ndarray) -> None:
        m, program = self.m, self.program
        info = program.owner[pc]
        if info.function.is_entry:
            self.retire(t)
            return
        back = leave(m, program, info, t)
        for target in np.unique(back):
            self.push(int(target), Group.of(m.n, t[np.flatnonzero(back == target)]))

    def _release(self) -> None:
        waiting = {pc: g.threads() for pc, g in self.waiting.items()}
        go_on = release(self.m, self.barriers, waiting)
        n = self.m.n
        self.waiting = {}
        for pc, t in waiting.items():
            done = np.isin(t, go_on, assume_unique=True)
            self.push(pc + 1, Group.of(n, t[done]) if done.any() else None)
            if not done.all():
                self.push(pc, Group.of(n, t[~done]), self.waiting)
