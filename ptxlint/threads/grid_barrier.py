"""Grid-wide barriers, recognised by what they do (not by a function name), and the
branches that may keep whole blocks away from them.

A grid barrier (cooperative groups' `this_grid().sync()` compiles to one, inlined) is,
in PTX terms:

- an *arrival*: `atom`/`red` at gpu or system scope (the default scope of `atom` is
  `.gpu`) on a word outside shared memory, at address register A;
- a *wait*: a loop that exits on a value read from A again, by an `ld` that can see
  other blocks' arrivals (`.acquire`/`.relaxed` at gpu or system scope, or `.volatile`),
  the arrival dominating the loop;
- its *entry*: the nearest CTA barrier (`bar.sync`/`barrier.sync` of the whole block)
  before the arrival on the dominator chain, where every thread of the block gathers
  before one of them arrives for the block.

The arrival count completes only when every block of the grid arrives, so a block
whose threads all skip the entry never arrives and every other block spins forever.
`GridVariance` is the block-level taint analysis (`block_uniform`) with the block index
and the multiprocessor id as sources too: a branch it finds varying may send two blocks
different ways.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.instruction import Instruction
from ..ir.instructions.atomic import Atom, Red
from ..ir.instructions.memory import Ld
from ..ir.instructions.sync import CtaBarrier
from ..ir.operands import Address, Register
from ..ir.traits import MemoryAccess
from .block_uniform import VARYING_SPECIALS, BlockVariance

#: special registers that differ between blocks of one grid (beyond those of a block)
GRID_SPECIALS = ("%ctaid", "%smid", "%clusterid", "%cluster_ctaid", "%cluster_ctarank")
WAIT_SCOPES = ("gpu", "sys")
MAX_CHAIN = 8  # definitions followed from the loop's exit test back to the load
MAX_BLOCKS = 8  # dominators searched for the entry barrier


@dataclass(frozen=True)
class GridBarrier:
    entry: Instruction  # the CTA barrier every thread of every block must reach
    arrive: Instruction
    wait: Instruction  # the load the spin loop tests
    exit: Instruction | None  # the CTA barrier that releases the block after the wait


class GridVariance(BlockVariance):
    """Registers and branches that may differ between threads of *different blocks*."""

    def _initial(self) -> int:
        entry = self.facts.in_states[self.cfg.entry]
        out = set()
        for insn in self.facts.function.instructions:
            for reg in insn.uses:
                if reg.is_special and reg.name.startswith(VARYING_SPECIALS + GRID_SPECIALS):
                    v = entry.regs.get(reg.key) if entry is not None else None
                    if v is None or v.singleton() is None:
                        out.add(reg.key)
        return self.bits(out)


def grid_barriers(facts) -> dict[int, GridBarrier]:
    """id(entry barrier) -> the grid barrier it opens, for every one in the kernel."""
    cfg, insns = facts.cfg, facts.function.instructions
    atomics = [i for i in insns if isinstance(i, (Atom, Red))]
    if not atomics:  # no arrival: the definitions need not be indexed
        return {}
    defs: dict[str, list[Instruction]] = {}
    for insn in insns:
        for reg in insn.defs:
            defs.setdefault(reg.key, []).append(insn)
    arrivals = [i for i in atomics if _arrives(i, defs)]
    if not arrivals:
        return {}
    out: dict[int, GridBarrier] = {}
    for loop in cfg.natural_loops().values():
        for src, _ in loop.exits:
            term = cfg.blocks[src].terminator
            if term is None or term.guard is None:
                continue
            wait = _waiting_load(term.guard.register, loop.body, defs, cfg)
            if wait is None:
                continue
            for arrive in arrivals:
                b = cfg.block_of(arrive)
                if b in loop.body or not cfg.dominates(b, loop.head) \
                        or _place(arrive) != _place(wait):
                    continue
                entry = _entry(cfg, arrive)
                if entry is not None:
                    out[id(entry)] = GridBarrier(entry, arrive, wait, _exit(cfg, loop))
    return out


def _arrives(insn: Instruction, defs: dict) -> bool:
    return insn.scope in WAIT_SCOPES and "shared" not in " ".join(insn.mods) \
        and _place(insn) is not None and len(defs.get(_place(insn)[0], [])) == 1


def _place(insn: Instruction) -> tuple[str, int] | None:
    """(address register, offset) of a memory instruction."""
    addr = getattr(insn, "address", None)
    if isinstance(addr, Address) and isinstance(addr.base, Register):
        return addr.base.key, addr.offset
    return None


def _waiting_load(pred: Register, body, defs: dict, cfg) -> Instruction | None:
    """The load in the loop that the exit test reads (through single definitions)."""
    todo, seen = [pred.key], set()
    while todo and len(seen) < MAX_CHAIN:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        ds = [d for d in defs.get(key, []) if cfg.block_of(d) in body]
        if len(ds) != 1:
            continue
        d = ds[0]
        if isinstance(d, Ld):
            sees = "volatile" in d.mods or d.semantics in ("acquire", "relaxed") \
                and d.scope in WAIT_SCOPES
            if sees and "shared" not in d.mods and "local" not in d.mods \
                    and _place(d) is not None:
                return d
            continue
        todo.extend(r.key for r in d.uses if not r.is_special)
    return None


def _exit(cfg, loop) -> Instruction | None:
    """A whole-block barrier first in the block the wait loop exits to (the others of
    the block wait there for the one that waited for the grid)."""
    targets = {dst for _, dst in loop.exits}
    if len(targets) != 1:
        return None
    block = cfg.blocks[targets.pop()]
    for insn in block.instructions:
        if isinstance(insn, CtaBarrier) and insn.waits and insn.thread_count is None:
            return insn
        if isinstance(insn, MemoryAccess) or insn is block.terminator:
            return None
    return None


def _entry(cfg, arrive: Instruction) -> Instruction | None:
    """The nearest whole-block barrier before `arrive` along its dominators."""
    b, pos = cfg.position(arrive)
    for _ in range(MAX_BLOCKS):
        for insn in reversed(cfg.blocks[b].instructions[:pos]):
            if isinstance(insn, CtaBarrier) and insn.waits and insn.thread_count is None:
                return insn
        up = cfg.idom[b]
        if up is None or up == b:
            return None
        b, pos = up, len(cfg.blocks[up].instructions)
    return None


__all__ = ["GridBarrier", "GridVariance", "grid_barriers", "GRID_SPECIALS"]
