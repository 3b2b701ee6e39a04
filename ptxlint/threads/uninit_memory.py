"""Memory read before it is written (the memory parts of `uninitialized-read`).

**Shared memory** (`shared_reads`): for each `ld` of a `.shared` object, the bytes
*any* thread of the block may have written before it: the writes a path leads from to
the load (an earlier barrier interval, an earlier trip of a loop) and those another
thread may run side by side with it (`Intervals.concurrent`). Each write is evaluated
for every thread of the block with the per-thread machinery of the race rule
(`RaceFinder.evaluated`: guards narrow the threads, small uniform leaves are
enumerated), and the union is an over-approximation of what the block wrote. A byte
the load reads (some thread, some row) outside that union was written by no thread
before: shared memory is never initialised by the host. Conservative by construction:
a write whose address cannot be evaluated, an access of the object the analysis cannot
place (a generic pointer, `cp.async`, `mbarrier`, a matrix store, a call), or an
unknown block shape leaves the object unjudged.

**Local memory** (`local_reads`): per thread, so the abstract values suffice: the bytes
of each `.local` object the writes that reach the load (a path from them to it) may
cover, from their offset sets; a byte the load may read outside them was written by no
path. A call, or a write the analysis cannot place, leaves local memory unjudged.

Both return `Verdict`s, also for loads found clean, with the bytes that may have been
written (`written`): the soundness suite holds the emulator's observations against them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.instruction import Instruction, Unmodelled
from ..ir.instructions.memory import Ld, Ldu
from ..ir.module import Module, Variable
from ..ir.traits import Call, MemoryAccess
from .barrier_intervals import _bits, control_closure, intervals
from ..interp.facts import Access, Facts
from .thread_eval import ThreadSpace, pure_values

MAX_BYTES = 1 << 22  # objects larger than this are not judged
MAX_VALUES = 4096  # offset sets enumerated up to this size (local)


@dataclass
class Verdict:
    """One load: `written` the bytes of `obj` that may have been written before it (a
    bool array; None: the load is not judged); `bytes_` the bytes some thread may read
    that no write covered, `threads` how many threads read one (shared), `sure` every
    execution of the load reads one, `thread` a thread that does."""

    acc: Access
    obj: str | None
    written: np.ndarray | None
    bytes_: list[int]
    sure: bool = False
    threads: int = 0
    thread: int | None = None
    readers: list[int] | None = None  # the threads that read such a byte (shared)
    why: str = ""  # why the load is not judged


def _object(acc: Access) -> str | None:
    r = acc.address.region
    return r.obj if r is not None else None


def _space(acc: Access) -> str | None:
    r = acc.address.region
    return r.space if r is not None else None


def object_bytes(module: Module, fn, name: str) -> int | None:
    for s in [*(fn.body or ()), *module.variables]:
        if isinstance(s, Variable) and s.name == name:
            return s.byte_size
    return None


# ---- what may write memory ------------------------------------------------------------------------
def writers(facts: Facts, space: str) -> tuple[list[Access], set[str | None], str]:
    """(writes of `space` placed in an object, objects written in a way that cannot be
    evaluated (None: any object), the reason for the first such)."""
    placed = {id(a.insn): a for a in facts.accesses}
    out: list[Access] = []
    blind: set[str | None] = set()
    why = ""
    for b, block in enumerate(facts.cfg.blocks):
        if facts.in_states[b] is None:
            continue
        for insn in block.instructions:
            if isinstance(insn, (Call, Unmodelled)):
                blind.add(None)
                why = why or f"line {_line(insn)} " + (
                    "calls a function" if isinstance(insn, Call) else "is not modelled")
                continue
            if not isinstance(insn, MemoryAccess) or isinstance(insn, (Ld, Ldu)) or \
                    insn.access_kind == "prefetch" or \
                    (insn.access_kind == "load" and not _may_write(insn)):
                continue
            acc = placed.get(id(insn))
            if acc is None or acc.address.region is None:
                if _space_of(insn) in (space, "generic"):
                    blind.add(None)
                    why = why or f"line {_line(insn)} writes memory the analysis cannot place"
                continue
            if _space(acc) != space:
                continue
            if insn.opcode in ("st", "atom", "red") and acc.width > 0:
                out.append(acc)
            else:
                blind.add(_object(acc))
                why = why or f"line {_line(insn)} (`{insn.opcode}`) writes `{_object(acc)}`"
    return out, blind, why


def _may_write(insn: MemoryAccess) -> bool:
    """A memory instruction of kind "load" that still changes memory (mbarrier objects,
    matrix loads do not; `mbarrier.*` updates its object)."""
    return insn.opcode.startswith(("mbarrier", "tcgen05", "clusterlaunchcontrol"))


def _space_of(insn: MemoryAccess) -> str:
    return getattr(insn, "dst_space", None) or insn.space


def _line(insn: Instruction) -> int | None:
    return insn.span.line if insn.span is not None else None


# ---- local memory (one thread) --------------------------------------------------------------------
def local_reads(facts: Facts, module: Module) -> list[Verdict]:
    loads = [a for a in facts.accesses if isinstance(a.insn, Ld) and _space(a) == "local"
             and _object(a) is not None and a.width > 0]
    if not loads:
        return []
    writes, blind, why = writers(facts, "local")
    reach = intervals(facts, module, "any")
    own = {s.name for s in facts.function.body or ()
           if isinstance(s, Variable) and s.space == "local"}
    out = []
    for acc in loads:
        facts.deadline.check()
        obj = _object(acc)
        if obj not in own:  # a caller's frame, reached through a pointer argument
            out.append(Verdict(acc, obj, None, [], why="the caller writes it"))
            continue
        if None in blind or obj in blind:
            out.append(Verdict(acc, obj, None, [], why=why))
            continue
        size = object_bytes(module, facts.function, obj)
        mine = [w for w in writes if _object(w) == obj and reach.reaches(w.insn, acc.insn)]
        spans = [_offsets(w) for w in mine]
        top = max([size or 0, *(o + w.width for s, w in zip(spans, mine) if s for o in s)],
                  default=0)
        mine_off = _offsets(acc)
        if any(s is None for s in spans) or mine_off is None or top > MAX_BYTES:
            out.append(Verdict(acc, obj, None, [], why="the offsets are not known"))
            continue
        top = max([top, *(o + acc.width for o in mine_off)])
        written = np.zeros(top, bool)
        for s, w in zip(spans, mine):
            for o in s:  # type: ignore[union-attr]
                written[max(o, 0):max(o + w.width, 0)] = True
        # bytes outside the object are the out-of-bounds rule's
        inside = size if size is not None else top
        missing = [o for o in mine_off if any(0 <= b < inside and not written[b]
                                              for b in range(o, o + acc.width))]
        gaps = sorted({b for o in missing for b in range(o, o + acc.width)
                       if 0 <= b < inside and not written[b]})
        out.append(Verdict(acc, obj, written, gaps,
                           sure=bool(mine_off) and len(missing) == len(mine_off)))
    return out


def _offsets(acc: Access) -> list[int] | None:
    si = acc.address.si
    n = si.size()
    if si.is_bottom:
        return []
    if n is None or n > MAX_VALUES or si.lo is None:
        return None
    return sorted(si.gamma(MAX_VALUES))


# ---- shared memory (every thread of the block) ----------------------------------------------------
def shared_reads(facts: Facts, module: Module) -> list[Verdict]:
    from .races import RaceFinder  # noqa: PLC0415 -- numpy, only when there is work

    loads = [a for a in facts.accesses if isinstance(a.insn, Ld) and _space(a) == "shared"
             and _object(a) is not None and a.width > 0]
    if not loads:
        return []
    if not ThreadSpace.of(facts).exact:
        return [Verdict(a, _object(a), None, [], why="the block shape is not known")
                for a in loads]
    writes, blind, why = writers(facts, "shared")
    if None in blind:
        return [Verdict(a, _object(a), None, [], why=why) for a in loads]
    accs = writes + loads
    finder = RaceFinder(facts, module, accs)
    reach = intervals(facts, module, "any")
    insns = [a.insn for a in accs]
    branches = sorted(finder.variance.divergent)
    side = finder.cta.concurrent(insns, branches)
    warp = finder.warp.concurrent(insns, branches)
    reached = reach.reaching([w.insn for w in writes], insns[len(writes):])
    of_obj: dict[str | None, int] = {}  # per object: its writes (bitset)
    for i, w in enumerate(writes):
        of_obj[_object(w)] = of_obj.get(_object(w), 0) | 1 << i
    masks: dict[int, np.ndarray | None] = {}
    covers = _Covers(finder)
    out = []
    for k in range(len(writes), len(accs)):
        facts.deadline.check()
        acc = accs[k]
        obj = _object(acc)
        if None in blind or obj in blind:
            out.append(Verdict(acc, obj, None, [], why=why))
            continue
        # the writes a path leads from, and those another thread may run beside it
        before = (reached[k - len(writes)] | side[k] | warp[k]) & of_obj.get(obj, 0)
        if before not in masks:
            masks[before] = covers.union(before, object_bytes(module, facts.function, obj))
        written = masks[before]
        mine = finder.evaluated(k)
        if written is None or mine is None or mine.sym:
            out.append(Verdict(acc, obj, None, [], why="an address is not known per thread"))
            continue
        out.append(_judge(finder, k, acc, obj, written, mine,
                          object_bytes(module, facts.function, obj)))
    return out


class _Covers:
    """The bytes each write may cover, for any thread, as a Python int (bit b: byte b),
    made once per write: unions of many sets of writes are then one `|` per write."""

    def __init__(self, finder):
        self.finder = finder
        self._each: dict[int, tuple[int, int] | None] = {}

    def _of(self, i: int) -> tuple[int, int] | None:
        if i not in self._each:
            self._each[i] = self._cover(i)
        return self._each[i]

    def _cover(self, i: int) -> tuple[int, int] | None:
        """(the bytes as bits, the end of the last) for write i; None when its bytes are
        not known per thread, start below the object or end too far."""
        e = self.finder.evaluated(i)
        if e is None or e.sym or (e.start.size and e.start.min() < 0):
            return None
        if not e.start.size:
            return 0, 0
        w = self.finder.accs[i].width
        end = int(e.start.max()) + w
        if end > MAX_BYTES:
            return None
        bits = np.zeros(end, bool)
        for j in range(w):
            bits[e.start + j] = True
        return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little"), end

    def union(self, before: int, size: int | None) -> np.ndarray | None:
        """Every byte of the object one of the writes `before` (bitset) may cover, for
        any thread (an array as long as the object or the furthest write)."""
        bits, top = 0, size or 0
        for i in _bits(before):
            each = self._of(i)
            if each is None:
                return None
            bits |= each[0]
            top = max(top, each[1])
        if top > MAX_BYTES:
            return None
        packed = np.frombuffer(bits.to_bytes((top + 7) // 8, "little"), np.uint8)
        return np.unpackbits(packed, count=top, bitorder="little").astype(bool)


def _judge(finder, k: int, acc: Access, obj: str, written: np.ndarray, mine,
           size: int | None) -> Verdict:
    """The bytes of the object the load may read that no write covered (bytes outside
    the object are the out-of-bounds rule's: taken as written)."""
    w = acc.width
    start = mine.start
    if not start.size:
        return Verdict(acc, obj, written, [])
    top = max(int(start.max()) + w, written.size)
    if top > MAX_BYTES or int(start.min()) < -MAX_BYTES:
        return Verdict(acc, obj, None, [], why="the offsets are not known")
    lo = min(0, int(start.min()))
    covered = np.ones(top - lo, bool)  # index: byte - lo
    inside = size if size is not None else written.size
    n = min(inside, written.size)
    covered[-lo:n - lo] = written[:n]
    bad = np.zeros(start.size, bool)
    for j in range(w):
        bad |= ~covered[start + j - lo]
    if not bad.any():
        return Verdict(acc, obj, written, [])
    gaps = sorted({int(s) + j for s in np.unique(start[bad]) for j in range(w)
                   if not covered[int(s) + j - lo]})
    threads = np.unique(mine.thread[bad])
    sure = not mine.enumerated and _all_run(finder, k)
    return Verdict(acc, obj, written, gaps, sure, int(threads.size), int(threads[0]),
                   [int(t) for t in threads])


def _all_run(finder, k: int) -> bool:
    """Exactly the threads the constraints select run the load: its guard and every
    condition on the way split by the thread index alone (as the race rule asks)."""
    acc = finder.accs[k]
    cfg = finder.cfg
    conds = [acc.insn] if acc.insn.guard is not None else []
    conds += [cfg.blocks[d].terminator for d in control_closure(cfg, cfg.block_of(acc.insn))
              if d in finder.variance.divergent]
    view = finder.builder.at(acc.insn, acc.state)
    for insn in conds:
        if insn is None or insn.guard is None:
            return False
        node = view.register(insn.guard.register, insn)
        v = acc.state.regs.get(insn.guard.register.key)
        if pure_values(node, finder.space) is None or v is None or v.singleton() is None:
            return False
    return True


__all__ = ["Verdict", "shared_reads", "local_reads", "writers", "object_bytes"]
