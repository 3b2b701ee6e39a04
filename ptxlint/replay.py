"""Exact answers for exact launches, by running the launch-determined part of a kernel.

When the block, the grid and every scalar parameter a global access depends on are
known, and its address and every branch deciding whether it runs are computed from the
launch alone (thread and block indices and sizes, scalar parameters, buffer addresses
moved by offsets), then every execution of the launch takes the same addresses there,
whatever the buffers hold. One run of the kernel on the emulator, with the buffers
zeroed, shows them all: the out-of-bounds rule uses it to drop a possible overflow no
thread makes (an unrolled grid-stride loop whose trip count the value domains cannot
relate to its bound) and to make a real one definite.

This is one of lint's services to the rules: `lint.rule_context` hands `Replay` to each
`RuleContext`, and a rule asks for it with `rc.replay()` (rules never run the emulator).

"Computed from the launch alone" is a backward slice over the kernel's instructions
(`independent`): the access's address registers and guard, every definition of a
register a slice instruction reads (flow-insensitively), and the branch of every block
a slice instruction's block is control dependent on. Each slice instruction must be
integer arithmetic, a comparison, a move, a branch, or a load of a kernel parameter the
launch gives; it must not read memory, another lane (`shfl`, `vote`), the clock or the
SM, a carry flag or a floating-point value. Buffer addresses are not the ones the GPU
will use: a register that may hold one may only be moved or offset (`add`, `sub` of a
number, `mad` adding to it, `cvta`), never compared, masked or truncated.

Without a grid, one block stands for all: an access whose slice reads no block index or
grid size (`%ctaid`, `%nctaid`) takes the same addresses in every block, so a run of one
block settles it (a textbook reduction's `sdata[tid + s]` under `tid % (2*s) == 0`, with
the block shape given).

A run counts only when it ends normally within its budget with no event that changes
control flow on a GPU (trap, deadlock, divergent `.uni`): otherwise nothing changes. A
replay that fails (out of memory or time, an emulator defect, any exception) only
withholds its answer: the findings stay those of the analysis alone, and `failure`
says why (for a note).
"""
from __future__ import annotations

import logging
import re
from functools import cached_property

from .ir.instruction import Instruction
from .ir.operands import Address, Expression, Immediate, Register, Symbol, registers_in
from .ir.traits import Branch, MemoryAccess, Terminator
from .ir.types import Kind, lookup
from .rules.base import RuleContext

log = logging.getLogger("ptxlint")
_NAMED = re.compile(r"[A-Za-z_$]")

MAX_THREADS = 1 << 16  # a larger grid is not run
MAX_STEPS = 50_000  # thread-group steps of one run (8 us for a warp: 0.4 s)
# seconds: steps alone do not bound the time, as a step over 64k lanes takes a millisecond
TIME_LIMIT = 5.0
MAX_BUFFER_BYTES = 1 << 28  # zeroed buffers the run may allocate, in all
MAX_MEMORY = 1 << 29  # what the emulator may allocate besides the buffers
# instructions a launch-determined slice may contain (besides branches and param loads)
PURE = frozenset({
    "add", "sub", "mul", "mad", "mul24", "mad24", "div", "rem", "abs", "neg", "min", "max",
    "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "lop3", "bfe", "bfi", "bmsk",
    "prmt", "popc", "clz", "brev", "bfind", "fns", "szext", "sad", "mov", "cvt", "cvta",
    "selp", "slct", "setp", "set", "testp", "copysign"})
# special registers fixed by the launch (the lane masks follow from %laneid)
LAUNCH_SPECIALS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%lanemask_eq",
                   "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "WARP_SZ")
# `Replay.extent` of an access no thread of the launch runs (an empty range)
NEVER = (0, -1, None)
# ... those that differ between the blocks of a grid
GRID_SPECIALS = ("%ctaid", "%nctaid")
# run events after which the emulator's control flow is not the GPU's
SPOILERS = frozenset({"trap", "barrier-deadlock", "barrier-mismatch", "divergent-barrier",
                      "divergent-uniform", "brx-out-of-range", "bad-call",
                      "mbarrier-deadlock", "mbarrier-uninitialised", "warp-barrier"})


class Replay:
    """One kernel under one exact launch: which global accesses are launch-determined,
    and (run once, on first use) the lowest and highest byte each of them touches, as
    offsets into its buffer."""

    def __init__(self, rc: RuleContext):
        self.rc = rc
        fn = rc.function
        self.ok = rc.entry is None and rc.launch is not None and _exact(rc) is not None
        # grid unknown: one block is run, for the accesses no block or grid index reaches
        self.one_block = self.ok and rc.launch.grid is None
        self.defs: dict[str, list[Instruction]] = {}
        if self.ok:
            for insn in fn.instructions:
                for r in insn.defs:
                    self.defs.setdefault(r.key, []).append(insn)
        self.cfg = rc.facts.cfg
        self.failure: str | None = None  # why an attempted run gave no answer
        self.block = _exact(rc) if self.ok else None

    # ---- the slice ------------------------------------------------------------------
    def independent(self, insn: MemoryAccess) -> bool:
        """Whether the address of `insn` and whether it runs are fixed by the launch
        (see the module docstring)."""
        if not self.ok:
            return False
        address = insn.address
        if not isinstance(address, Address):
            return False
        seed = list(registers_in(address)) + ([insn.guard.register] if insn.guard else [])
        slice_: dict[int, Instruction] = {}
        work: list = [("block", self.cfg.block_of(insn))] + [("reg", r) for r in seed]
        seen_regs: set[str] = set()
        seen_blocks: set[int] = set()
        while work:
            kind, item = work.pop()
            if kind == "block":
                if item in seen_blocks:
                    continue
                seen_blocks.add(item)
                for branch in self.cfg.deciders(item):
                    term = self.cfg.blocks[branch].terminator
                    if term is None:
                        return False
                    work.append(("insn", term))
                continue
            if kind == "reg":
                if item.key in seen_regs:
                    continue
                seen_regs.add(item.key)
                if item.is_special:
                    if not item.name.startswith(LAUNCH_SPECIALS) or (
                            self.one_block and item.name.startswith(GRID_SPECIALS)):
                        return False
                    continue
                defs = self.defs.get(item.key)
                if not defs:
                    return False  # never written: the GPU reads whatever it holds
                work.extend(("insn", d) for d in defs)
                continue
            if id(item) in slice_:
                continue
            if not self._allowed(item):
                return False
            slice_[id(item)] = item
            work.append(("block", self.cfg.block_of(item)))
            work.extend(("reg", r) for r in item.uses)
        return self._offsets_only(slice_.values(), insn)

    def _allowed(self, insn: Instruction) -> bool:
        op = insn.opcode
        if isinstance(insn, Branch):
            return op == "bra"  # brx.idx, call: not followed
        if isinstance(insn, Terminator):
            return op in ("exit", "ret")  # a guarded one decides what follows
        if isinstance(insn, MemoryAccess):
            return op == "ld" and self._launch_param(insn) is not None
        if op not in PURE or "cc" in insn.mods:
            return False
        return not any(t.kind is Kind.FLOAT for t in map(lookup, insn.mods) if t is not None)

    def _launch_param(self, insn: MemoryAccess) -> str | None:
        """The kernel parameter a `ld.param` reads, when the launch gives it."""
        a = insn.address
        if getattr(insn, "space", None) != "param" or not isinstance(a, Address) \
                or not isinstance(a.base, Symbol):
            return None
        launch, name = self.rc.launch, a.base.name
        known = name in launch.params or name in launch.extents
        return name if known and self.rc.function.param(name) is not None else None

    def _offsets_only(self, insns, access: Instruction) -> bool:
        """Buffer addresses (from loads of buffer parameters, and what moves them) reach
        only moves and offsets: the run's addresses differ from a GPU's by a constant."""
        extents = self.rc.launch.extents
        insns = list(insns)
        pointers: set[str] = set()
        changed = True
        while changed:
            changed = False
            for insn in insns:
                if isinstance(insn, MemoryAccess):
                    carries = self._launch_param(insn) in extents
                else:
                    carries = any(_is_pointer(op, pointers) for op in insn.sources)
                if carries:
                    for r in insn.defs:
                        if r.key not in pointers:
                            pointers.add(r.key)
                            changed = True
        for insn in insns:
            if isinstance(insn, (MemoryAccess, Branch)):
                continue
            flags = [_is_pointer(op, pointers) for op in insn.sources]
            if not any(flags):
                continue
            op = insn.opcode
            if len(insn.defs) != 1:
                return False  # unpacking an address into halves
            if op in ("mov", "cvta") or (op == "add" and sum(flags) == 1) \
                    or (op == "sub" and flags == [True, False]) \
                    or (op == "mad" and flags == [False, False, True] and "hi" not in insn.mods):
                continue
            return False
        return True

    # ---- the run --------------------------------------------------------------------
    def extent(self, insn: MemoryAccess, obj: str, space: str
               ) -> tuple[int, int, str | None] | None:
        """(lowest, highest) byte offset into `obj` (a kernel buffer in "global", a
        variable in "shared") the lanes' addresses at `insn` take in the launch, and a
        thread whose address leaves every object ("block (3, 0, 0) thread (232, 0, 0)
        reaches byte 4000"; None when none does); `NEVER` (highest below lowest) when no
        lane runs it in the launch; None when unknown: not launch-determined, or the run
        did not count or failed."""
        try:
            return self._extent(insn, obj, space)
        except Exception as exc:  # noqa: BLE001 - MemoryError too: a replay only confirms
            self._failed(exc)
            return None

    def _extent(self, insn: MemoryAccess, obj: str, space: str
                ) -> tuple[int, int, str | None] | None:
        if space not in ("global", "shared") or not self.independent(insn):
            return None
        run = self._run
        if run is None:
            return None
        result, pcs, program = run
        pc = pcs.get(id(insn))
        if pc is None:
            return None
        spans = result.extents.get(pc, {})
        if not spans:
            # the launch alone decides whether it runs, and in this launch it never does
            return NEVER
        if set(spans) != {space}:
            return None  # (generic) also in another space
        if space == "global":
            base = result.buffers.get(obj)
        else:
            placed = program.layout.shared.get(obj)
            base = placed.address if placed is not None else None
        if base is None:
            return None
        lo, hi = spans[space]
        return lo - base, hi - base, self._witness(result, pc, base)

    def _failed(self, exc: BaseException) -> None:
        from .emulate.errors import EmulationError  # noqa: PLC0415

        if not isinstance(exc, EmulationError):  # unsupported opcodes, budgets: expected
            log.debug("ptxlint: the emulated run of %s failed", self.rc.function.name,
                      exc_info=exc)
        if self.failure is None:
            what = str(exc) if isinstance(exc, EmulationError) else type(exc).__name__
            self.failure = f"an emulated run of this launch could not settle it ({what})"

    def _witness(self, result, pc: int, base: int) -> str | None:
        bx, by, _ = self.block
        for ev in result.observations.events:
            if ev.kind == "out-of-bounds" and ev.pc == pc and ev.details.get("lanes") \
                    and ev.details.get("spaces", ["global"])[0] == "global":
                linear = ev.details["warp"] * 32 + ev.details["lanes"][0]
                tid = (linear % bx, linear // bx % by, linear // (bx * by))
                byte = ev.details["addresses"][0] - base
                return f"block {tuple(ev.details['block'])} thread {tid} reaches byte {byte}"
        return None

    @cached_property
    def _run(self):
        """(result, memory access pcs, program), or None; tried once per kernel."""
        try:
            return self._attempt()
        except Exception as exc:  # noqa: BLE001 - an emulator defect must not stop the lint
            self._failed(exc)
            return None

    def _attempt(self):
        import numpy as np  # noqa: PLC0415 - only for exact launches (a slow import)

        from .emulate.api import run_kernel  # noqa: PLC0415
        from .emulate.program import Program  # noqa: PLC0415

        rc = self.rc
        launch = rc.launch
        fn = rc.function
        program = Program(rc.module, fn.name)
        pcs = {id(insn): pc for pc, insn in enumerate(program.instructions)
               if isinstance(insn, MemoryAccess)}
        args: dict = {}
        for p in fn.params:
            if p.name in launch.extents:
                args[p.name] = np.zeros(max(int(launch.extents[p.name]), 1), np.uint8)
            elif p.name in launch.params:
                args[p.name] = launch.params[p.name]
            elif p.dims or p.type is None:
                args[p.name] = bytes(p.byte_size or 0)  # not read by the slices
            else:
                args[p.name] = 0  # likewise
        grid = (1, 1, 1) if self.one_block else launch.grid
        result = run_kernel(rc.module, fn.name, grid, self.block, args,
                            dynamic_smem=launch.dynamic_smem or 0, observe=False,
                            max_steps=MAX_STEPS, watch=sorted(set(pcs.values())),
                            time_limit=min(TIME_LIMIT, rc.deadline.remaining()),
                            max_memory=MAX_MEMORY)
        if any(kind in SPOILERS for kind, _ in result.observations.event_counts):
            return None
        return result, pcs, program


def _exact(rc: RuleContext) -> tuple[int, int, int] | None:
    """The block shape when the launch (or `.reqntid`) fixes it and the run is small
    enough. Without a grid one block stands for every block: only accesses whose slice
    reads no block index or grid size are then answered (`Replay.independent`)."""
    launch = rc.launch
    block = launch.block_or_limits(rc.kernel).shape
    if block is None:
        return None
    threads = 1
    for d in (*(launch.grid or (1, 1, 1)), *block):
        threads *= d
    ok = threads <= MAX_THREADS and sum(launch.extents.values()) <= MAX_BUFFER_BYTES
    return block if ok else None


def _is_pointer(op, pointers: set[str]) -> bool:
    if isinstance(op, Register):
        return op.key in pointers
    if isinstance(op, Symbol):
        return True  # a variable's address
    if isinstance(op, Immediate):
        return False
    if isinstance(op, Expression):
        return _NAMED.search(op.text) is not None  # `tile+16`: a variable's address
    return any(r.key in pointers for r in registers_in(op))
