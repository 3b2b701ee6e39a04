"""Block-level uniformity: which registers may differ between threads of one block, and
which conditional branches may send threads of one block different ways.

The interpreter's uniformity (`Value.is_uniform`) is per *warp*: `%tid.y` is a uniform
value when every warp lies within one row (`launch.py`), and `vote.sync.any` gives each
warp one answer. Both still differ between the warps of a block, which is what a CTA
barrier cares about. This is a forward may-analysis over the final CFG, run once per
kernel after the fixpoint (`BlockVariance(facts)`):

- sources: `%tid.*`, `%laneid`, `%warpid`, the lane masks and the clocks, unless the
  launch fixes them to one number for the whole block (`%tid.y` with `ntid.y = 1`);
  results that differ between threads whatever their inputs (atomics, `.local` loads,
  warp collectives such as `vote`, `shfl`, `redux`, `activemask`, calls and unmodelled
  instructions);
- data: a result is varying when an operand, an address register or the guard is;
- control: where threads that took different ways at a block-varying branch meet again,
  the registers written in between are varying (`SyncDependence`, as for warps);
- a branch is block-varying when its guard (or `brx.idx` index) is varying and the
  final facts do not decide it (`tri_of` is MAYBE).

`bar.red` results are uniform (every participating thread receives the same reduction),
and so are loads from a block-uniform address: *assuming* no other thread writes that
memory meanwhile (a race, which `shared-memory-race` reports) every thread reads the
same value. Loads of kernel parameters are uniform; `.param` loads of call results are
not (the callee may read `%tid`).
"""
from __future__ import annotations

from operator import attrgetter

from ..cfg import is_brx
from ..domains.lattice import Tri
from ..domains.value import tri_of
from ..ir.instruction import Instruction
from ..ir.instructions.sync import CtaBarrier
from ..ir.operands import Address, Symbol, is_special_register
from ..ir.traits import Call, MemoryAccess
from ..interp.divergence import SyncDependence

#: special registers whose value may differ between threads of one block
VARYING_SPECIALS = ("%tid", "%laneid", "%warpid", "%lanemask", "%clock", "%globaltimer",
                    "%pm")
#: opcodes whose result differs between threads even when every input is uniform
PER_THREAD_OPCODES = ("atom", "vote", "redux", "shfl", "match", "activemask", "elect",
                      "ldmatrix", "movmatrix", "mma", "wmma", "wgmma", "tcgen05",
                      "mbarrier.test_wait", "mbarrier.try_wait", "mbarrier.arrive",
                      "mbarrier.arrive_drop", "getctarank")


_UNIFORM, _VARYING, _DATA = "uniform", "varying", "data"
_BY_CLASS: dict[type, str] = {}  # how an instruction class's result varies
_NO_PLAN = (0, _DATA, 0, False)  # an instruction that writes no register


def is_varying_special(name: str) -> bool:
    return name.startswith(VARYING_SPECIALS)


class BlockVariance:
    """Block-varying registers per block entry and the block-varying branches. Sets of
    registers are bitsets (Python ints) over `self.index`."""

    def __init__(self, facts):
        self.facts = facts
        self.cfg = facts.cfg
        self.sync: SyncDependence = facts.sync  # the fixpoint's: regions asked for stay
        self.kernel_params = frozenset(p.name for p in facts.function.params)
        self.divergent: set[int] = set()  # block-varying branches
        self.index: dict[str, int] = {}  # register key -> bit
        self._masks: dict[str, int] = {}  # register key -> 1 << bit
        self.entry_sets: list[int | None] = [None] * len(self.cfg.blocks)
        self._plans: dict[int, list[tuple]] = {}  # block -> per instruction (`_plans_of`)
        self._writers: dict[int, list[tuple]] = {}  # block -> the plans that write
        self._branch_bits: dict[int, int] = {}  # branch -> what its region defines
        self._per_block: dict[int, list[int]] = {}
        self._solve()

    def bits(self, keys) -> int:
        out = 0
        masks = self._masks
        for k in keys:
            m = masks.get(k)
            if m is None:
                bit = self.index[k] = len(self.index)
                m = masks[k] = 1 << bit
            out |= m
        return out

    # ---- the fixpoint ------------------------------------------------------------------------
    def _initial(self) -> int:
        entry = self.facts.in_states[self.cfg.entry]
        read = set().union(*map(attrgetter("use_keys"), self.facts.function.instructions))
        out = set()
        for key in read:  # a special register's key is its name
            if key.startswith(VARYING_SPECIALS) and is_special_register(key):
                v = entry.regs.get(key) if entry is not None else None
                if v is None or v.singleton() is None:
                    out.add(key)
        return self.bits(out)

    def _tainted(self, b: int) -> int:
        """Bits of the registers defined under the block-varying branches whose arms
        meet at merge block b."""
        out = 0
        for br in self.sync.branches_at(b, self.divergent):
            bits = self._branch_bits.get(br)
            if bits is None:
                bits = self._branch_bits[br] = self.bits(self.sync.defined_by((br,)))
            out |= bits
        return out

    def _solve(self) -> None:
        """Worklist in reverse postorder: a block is redone when what flows into it grew,
        or when a branch whose merge it is turned block-varying."""
        cfg, facts = self.cfg, self.facts
        rank = cfg.rpo_index
        incoming: dict[int, int] = {cfg.entry: self._initial()}
        todo = {cfg.entry}
        check = facts.deadline.check
        while todo:
            check()
            b = min(todo, key=rank.__getitem__)
            todo.discard(b)
            if facts.in_states[b] is None:
                continue
            varying = incoming.get(b, 0)
            if b in self.sync.at_merge:
                varying |= self._tainted(b)
            self.entry_sets[b] = varying
            writers = self._writers.get(b)
            if writers is None:
                writers = self._writers[b] = [p for p in self._plans_of(b) if p[0]]
            for defs, mode, uses, guarded in writers:  # `transfer`, inlined
                if mode is _VARYING or mode is _DATA and varying & uses:
                    varying |= defs
                elif not guarded:
                    varying &= ~defs
            if b not in self.divergent and self._branch_varies(b, varying):
                self.divergent.add(b)
                todo.update(self.sync.merges_of(b))
            for s in cfg.blocks[b].succs:
                into = incoming.get(s)
                if into is None or varying & ~into:
                    incoming[s] = varying if into is None else into | varying
                    todo.add(s)

    def transfer(self, insn: Instruction, varying: int) -> int:
        """`varying` (bits) after `insn`."""
        defs, mode, uses, guarded = self._plan_of(insn)
        if not defs:
            return varying
        if mode is _VARYING or mode is _DATA and varying & uses:
            return varying | defs
        return varying if guarded else varying & ~defs

    def _plan_of(self, insn: Instruction) -> tuple:
        b, i = self.cfg.position(insn)
        return self._plans_of(b)[i]

    def _plans_of(self, b: int) -> list[tuple]:
        """Per instruction of block b, (bits defined, how the result varies, bits used,
        guarded); made for the whole block at once (every instruction of a reached block
        is planned, most once)."""
        plans = self._plans.get(b)
        if plans is not None:
            return plans
        plans = self._plans[b] = []
        masks, index = self._masks, self.index
        for insn in self.cfg.blocks[b].instructions:
            keys, used = insn.register_keys()
            if not keys:
                plans.append(_NO_PLAN)
                continue
            # what the interpreter's memo keys on: the registers read, and those
            # written (a partial write keeps the rest of the register)
            defs = uses = 0
            for k in keys:
                m = masks.get(k)
                if m is None:  # `bits`, inlined
                    m = masks[k] = 1 << index.setdefault(k, len(index))
                defs |= m
            for k in used:
                m = masks.get(k)
                if m is None:
                    m = masks[k] = 1 << index.setdefault(k, len(index))
                uses |= m
            cls = insn.__class__
            mode = _BY_CLASS.get(cls)
            if mode is None:
                mode = _BY_CLASS[cls] = _UNIFORM if issubclass(cls, CtaBarrier) else \
                    _VARYING if cls.is_unmodelled or issubclass(cls, Call) \
                    or insn.opcode.startswith(PER_THREAD_OPCODES) else _DATA
            if mode is _DATA and isinstance(insn, MemoryAccess) \
                    and self._per_thread_memory(insn):
                mode = _VARYING
            plans.append((defs, mode, defs | uses, insn.guard is not None))
        return plans

    def _per_thread_memory(self, insn: MemoryAccess) -> bool:
        if insn.access_kind == "atomic" or "local" in insn.mods:
            return True
        if "param" not in insn.mods:
            return False
        addr = insn.address
        return not (isinstance(addr, Address) and isinstance(addr.base, Symbol)
                    and addr.base.name in self.kernel_params)

    def _has(self, varying: int, key: str | None) -> bool:
        i = self.index.get(key) if key is not None else None
        return i is not None and bool(varying >> i & 1)

    def _branch_varies(self, b: int, varying: int) -> bool:
        block = self.cfg.blocks[b]
        term = block.terminator
        if term is None or len(block.succs) < 2:
            return False
        if is_brx(term):
            index = term.operands[0] if term.operands else None
            return self._has(varying, getattr(index, "key", None)) or \
                term.guard is not None and self._has(varying, term.guard.register.key)
        if term.guard is None or not self._has(varying, term.guard.register.key):
            return False
        return self.decided(b) is Tri.MAYBE

    def decided(self, b: int) -> Tri:
        """Whether the facts decide the guard of block b's branch (TRUE: every thread
        takes it, FALSE: none does, MAYBE: unknown)."""
        term = self.cfg.blocks[b].terminator
        out = self.facts.out_state(b)  # the state at the branch
        if term is None or term.guard is None or out is None:
            return Tri.MAYBE
        truth = tri_of(out[term.guard.register.key])
        return truth.negate() if term.guard.negated else truth

    # ---- queries -----------------------------------------------------------------------------
    def _before(self, insn: Instruction) -> int:
        """Bits of the block-varying registers just before `insn` (0: unreachable)."""
        b, i = self.cfg.position(insn)
        per = self._per_block.get(b)
        if per is None:
            per = self._per_block[b] = self._replay(b)
        return per[i] if per else 0

    def _replay(self, b: int) -> list[int]:
        varying = self.entry_sets[b]
        if varying is None:
            return []
        out = []
        for defs, mode, uses, guarded in self._plans_of(b):  # `transfer`, inlined
            out.append(varying)
            if not defs:
                continue
            if mode is _VARYING or mode is _DATA and varying & uses:
                varying |= defs
            elif not guarded:
                varying &= ~defs
        return out

    def varies_after(self, insn: Instruction, key: str) -> bool:
        """Whether register `key` is block-varying just after `insn`."""
        return self._has(self.transfer(insn, self._before(insn)), key)

    def is_varying(self, key: str, at: Instruction) -> bool:
        """Whether register `key` may differ between threads of a block at `at`."""
        return self._has(self._before(at), key)


def block_variance(facts) -> BlockVariance:
    """The analysis of `facts`, computed once for every rule that asks."""
    return facts.derived("block_variance", BlockVariance)


__all__ = ["BlockVariance", "block_variance", "VARYING_SPECIALS", "is_varying_special"]
