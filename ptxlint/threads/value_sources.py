"""What a register's value may depend on, among the things that tell two threads of a
launch apart (for `global-memory-race`: two threads writing the same bytes race only
when their values may differ).

A value depends on `"tid"` (the thread's index in its block: `%tid`, `%laneid`, what a
warp collective gathers from the other lanes), `"block"` (`%ctaid`, `%clusterid`) or
`"any"` (anything else that may differ between two threads: memory some thread of the
kernel writes, an atomic's old value, clocks, a call's result). Launch constants
(`%ntid`, `%nctaid`), parameters and constant or read-only memory (`ld.param`,
`ld.const`, `ld.global.nc`, a buffer the kernel never writes) differ in no thread.

Flow-insensitive (every definition of a register counts) and with control dependence:
a register written under a branch on `%ctaid` depends on the block. A register computed
from itself (a loop counter, an accumulator: a cycle of definitions) takes a new value on
every trip: `"iter"`, and so does everything computed from it; two threads on different
trips of a loop around the store write different values whatever their indices (the
caller decides whether a loop encloses the store; after the loop, the number of trips is
what the loop's branch depends on, a control dependence). Computed once, on demand, as a fixpoint of unions.
"""
from __future__ import annotations

from ..ir.instructions.memory import Ld, Ldu
from ..ir.operands import Register, is_special_register, registers_in
from ..ir.traits import Call, MemoryAccess

TID = frozenset({"tid"})
BLOCK = frozenset({"block"})
ANY = frozenset({"any"})
ITER = frozenset({"iter"})
_TID_SPECIALS = ("%tid", "%laneid", "%warpid", "%lanemask")
_BLOCK_SPECIALS = ("%ctaid", "%clusterid", "%cluster_ctaid", "%cluster_ctarank")
_UNIFORM_SPECIALS = ("%ntid", "%nctaid", "%nwarpid", "%nclusterid", "%cluster_nctaid",
                     "%cluster_nctarank", "%dynamic_smem_size", "%total_smem_size",
                     "%is_explicit_cluster", "%aggr_smem_size", "%envreg")
_WARP_OPS = ("shfl", "vote", "match", "redux", "activemask", "elect")


def special_sources(name: str) -> frozenset[str]:
    base = name.split(".", 1)[0]
    if base.startswith(_TID_SPECIALS):
        return TID
    if base in _BLOCK_SPECIALS:
        return BLOCK
    if base.startswith(_UNIFORM_SPECIALS):
        return frozenset()
    return ANY


class ValueSources:
    def __init__(self, facts, written_objects: set | None = None):
        """`written_objects`: (space, object) pairs some instruction of the kernel may
        write, None for "any object" (default: computed from the facts' accesses)."""
        self.facts = facts
        self.cfg = facts.cfg
        self.written = written_objects if written_objects is not None else self._written()
        self.deps: dict[str, frozenset[str]] = {}
        self._defs: dict[str, list] | None = None
        self._solve()

    def of_operand(self, op) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for reg in registers_in(op):
            out |= self.of(reg)
        return out

    def defs_of(self, reg: Register) -> list:
        """The instructions that write `reg`."""
        if self._defs is None:
            self._defs = {}
            for block in self.cfg.blocks:
                for insn in block.instructions:
                    for d in insn.defs:
                        self._defs.setdefault(d.key, []).append(insn)
        return self._defs.get(reg.key, [])

    def of(self, reg: Register) -> frozenset[str]:
        if reg.is_special:
            return special_sources(reg.name)
        return self.deps.get(reg.key, frozenset())

    def _written(self) -> set:
        out: set = set()
        for acc in self.facts.accesses:
            if acc.insn.access_kind in ("store", "atomic", "reduce", "copy"):
                r = acc.address.region
                out.add((r.space, r.obj) if r is not None and r.obj is not None else None)
        return out

    def _loaded(self, insn: MemoryAccess, acc) -> frozenset[str]:
        """What a load's value adds to its address's dependences."""
        if insn.space in ("param", "const") or "nc" in insn.mods:
            return frozenset()
        r = acc.address.region if acc is not None else None
        if None in self.written or r is None or r.obj is None or \
                (r.space, r.obj) in self.written:
            return ANY
        return frozenset()

    def _solve(self) -> None:
        cfg = self.cfg
        accs = {id(a.insn): a for a in self.facts.accesses}
        control = cfg.control_dependence()
        insns = [(b, insn) for b, block in enumerate(cfg.blocks)
                 if self.facts.in_states[b] is not None for insn in block.instructions]
        tick = self.facts.deadline.tick
        for key in _cyclic(insns):
            self.deps[key] = ITER
        # per writing instruction, once: what it adds whatever the registers hold (its
        # own sources, the special registers it reads), the registers whose sources it
        # takes (its reads, its guard, the guards of the branches it depends on), and
        # the registers it writes (a special register's key is its name)
        plans = []
        for b, insn in insns:
            writes = insn.def_keys
            if not writes:
                continue
            reads = [term.guard.register.key for d in control.get(b, ())
                     if (term := cfg.blocks[d].terminator) is not None
                     and term.guard is not None]
            reads += insn.use_keys  # the guard's among them
            extra = self._own(insn, accs.get(id(insn)))
            keys = []
            for k in reads:
                if is_special_register(k):
                    extra |= special_sources(k)
                else:
                    keys.append(k)
            plans.append((extra, keys, writes))
        deps = self.deps
        none: frozenset[str] = frozenset()
        changed = True
        while changed:
            changed = False
            for srcs, keys, writes in plans:
                tick()
                for k in keys:
                    srcs |= deps.get(k, none)
                for k in writes:
                    old = deps.get(k, none)
                    if not srcs <= old:
                        deps[k] = old | srcs
                        changed = True

    def _own(self, insn, acc) -> frozenset[str]:
        if isinstance(insn, (Ld, Ldu)):
            return self._loaded(insn, acc)
        if isinstance(insn, Call) or insn.is_unmodelled:
            return ANY
        if isinstance(insn, MemoryAccess):
            return ANY  # atomics' old values, matrix loads, textures
        if insn.opcode.startswith(_WARP_OPS):
            return TID
        return frozenset()


def _cyclic(insns) -> set[str]:
    """Registers on a cycle of definitions (Tarjan's strongly connected components over
    "defined from" edges, iteratively)."""
    edges: dict[str, set[str]] = {}
    for _b, insn in insns:
        srcs = {k for k in insn.use_keys if not is_special_register(k)}
        for k in insn.def_keys:
            edges.setdefault(k, set()).update(srcs)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: set[str] = set()
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in edges.get(v, ()):
                    out.update(comp)
    return out


__all__ = ["ValueSources", "special_sources"]
