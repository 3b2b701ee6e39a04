"""The emulator probe: which instructions ran, and whether the registers they read held
values the analysis allowed.

`Probe` is passed to `run_kernel(..., probe=...)` and called before every step. It
records each executed pc of the kernel, and at the instructions that carry `Claim`s
(the abstract value of a register the instruction reads, from the state before it; or
the address of a memory access in the state refined by its guard) it tests the
concrete values of the step's threads against the claim (`gamma.py`):

- the value set and the alignment, per thread;
- the lane form, per warp: the lanes of one warp that execute the step together.

A claim on an address into a known object (a region with an object) describes the
byte offset from that object's start; the object's concrete address comes from the
emulator's layout (`emulate/layout.py`): kernel pointer parameters hold the address of
the caller's buffer, module variables sit at fixed window addresses, a generic address
adds the space's window base. Per-thread objects (`.local`) are not checked.

Steps are sampled per instruction: the first `ALWAYS` executions, then every power of
two (late loop iterations included), so long runs stay cheap.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ptxlint.domains.value import Value
from ptxlint.emulate.layout import SPACE_WINDOW, window_base
from .gamma import INDEX_NAMES, cong_contains, lane_form_violations, si_contains

ALWAYS = 4
MAX_UNIQUE = 4096  # distinct values tested exactly per claim and step
SPECIALS = {"tid.x": "%tid.x", "tid.y": "%tid.y", "tid.z": "%tid.z", "laneid": "%laneid"}


@dataclass(frozen=True)
class Claim:
    """The analysis's value for register `key` (emulator storage key) before the
    instruction; `guarded`: only the lanes whose guard holds (an access's address);
    `offset`: a constant added to the register (the `+16` of `[%rd1+16]`)."""

    key: str
    what: str  # for messages: "%r4", "address [%rd6+4]"
    value: Value
    guarded: bool = False
    offset: int = 0


@dataclass
class Violation:
    """Concrete values outside a claim: `examples` are (block, thread in block, offset)
    with the offset from the claim's object (the value itself when it has none), at
    `width` bits."""

    pc: int
    line: int | None
    instruction: str
    what: str
    claim: Value
    width: int
    component: str  # "value set or alignment", "lane form", "unreachable"
    examples: list = field(default_factory=list)

    def __str__(self) -> str:
        return (f"line {self.line}: `{self.instruction}`: {self.what} = {self.examples[:4]} "
                f"outside the {self.component} of {self.claim}")


@dataclass
class ProbeStats:
    checks: int = 0  # (claim, step) pairs tested
    values: int = 0  # thread values tested
    warps: int = 0  # warp lane forms tested
    unchecked: int = 0  # claims skipped: per-thread objects, unenumerable forms


class Probe:
    def __init__(self, claims: dict[int, list[Claim]], guards: dict[int, tuple[str, bool]]):
        """`claims` by instruction identity (`id(insn)`); `guards` gives, per
        instruction identity, the guard's storage key and whether it is negated."""
        self.claims = claims
        self.guards = guards
        self.executed: set[int] = set()  # pcs
        self.seen: dict[int, int] = {}
        self.violations: list[Violation] = []
        self.stats = ProbeStats()
        self._kernel_pcs: range | None = None
        self.program = None  # the emulator's Program, once running

    def __call__(self, m, pc: int) -> None:
        if self._kernel_pcs is None:
            self.program = m.program
            info = m.program.infos[m.program.kernel.name]
            self._kernel_pcs = range(info.entry, info.end)
        if pc not in self._kernel_pcs:
            return  # a called function: analysed separately, not checked here
        self.executed.add(pc)
        insn = m.program.instructions[pc]
        claims = self.claims.get(id(insn)) if insn is not None else None
        if not claims:
            return
        n = self.seen[pc] = self.seen.get(pc, 0) + 1
        if n > ALWAYS and n & (n - 1):
            return
        threads = m.active()
        for claim in claims:
            t = threads
            if claim.guarded and id(insn) in self.guards:
                key, negated = self.guards[id(insn)]
                flags = np.asarray(m.regs[key][t], bool)
                t = t[flags != negated]
            if len(t) and claim.key in m.regs:
                self._check(m, pc, insn, claim, t)

    # ---- one claim --------------------------------------------------------------------------------
    def _check(self, m, pc, insn, claim: Claim, t: np.ndarray) -> None:
        v = claim.value
        self.stats.checks += 1
        raw = m.regs[claim.key][t]
        w = 1 if raw.dtype == bool else raw.dtype.itemsize * 8
        bits = raw.astype(np.uint64)
        if claim.offset:
            bits = bits + np.uint64(claim.offset % (1 << 64))
        if v.is_bottom:
            self._report(m, pc, insn, claim, w, "unreachable", t, np.ones(len(t), bool), bits)
            return
        base = self._object_base(m, v)
        if base is None:
            self.stats.unchecked += 1
            return
        mask = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        off = (bits - np.uint64(base % (1 << 64))) & mask
        self.stats.values += len(t)
        bad = ~self._members(v, off, w)
        if bad.any():
            self._report(m, pc, insn, claim, w, "value set or alignment", t, bad, off)
        if not v.aff.varying:
            self._lanes(m, pc, insn, claim, t, off, w)

    @staticmethod
    def _object_base(m, v: Value) -> int | None:
        """The concrete address the numbers of `v` are an offset from (0: none)."""
        region = v.region
        if region is None or region.obj is None:
            return 0
        prog = m.program
        name = prog.aliases.get(region.obj, region.obj)
        extra = window_base(SPACE_WINDOW[region.space]) if region.generic else 0
        if region.space == "global" and name in prog.param_offsets:
            off, size = prog.param_offsets[name]
            return int.from_bytes(bytes(m.mem.params[off:off + size]), "little")
        if region.space == "param" and name in prog.param_offsets:
            return prog.param_offsets[name][0] + extra
        placed = prog.layout.symbol(name)
        if placed is not None and placed.space == region.space:
            return placed.address + extra
        return None  # .local objects live in per-thread frames

    @staticmethod
    def _members(v: Value, off: np.ndarray, w: int) -> np.ndarray:
        """Per value: inside the value set and the congruence (exact, on distinct values)."""
        if v.si.is_top and v.cong.is_top:
            return np.ones(len(off), bool)
        uniq, back = np.unique(off, return_inverse=True)
        if len(uniq) > MAX_UNIQUE:  # evenly spaced sample, both ends included
            pick = np.unique(np.linspace(0, len(uniq) - 1, MAX_UNIQUE).astype(np.int64))
            ok = np.ones(len(uniq), bool)
            ok[pick] = [si_contains(v.si, int(x), w) and cong_contains(v.cong, int(x), w)
                        for x in uniq[pick]]
        else:
            ok = np.array([si_contains(v.si, int(x), w) and cong_contains(v.cong, int(x), w)
                           for x in uniq], bool)
        return ok[back.reshape(-1)]

    def _lanes(self, m, pc, insn, claim: Claim, t: np.ndarray, off: np.ndarray, w: int) -> None:
        order = np.argsort(m.warp[t], kind="stable")
        t, off = t[order], off[order]
        idx = {n: self._special(m, SPECIALS[n], t) for n in INDEX_NAMES}
        res = lane_form_violations(claim.value.aff, off, idx, m.warp[t], w)
        self.stats.warps += res.checked
        self.stats.unchecked += res.unchecked > 0
        if res.bad_warps:
            bad = np.isin(m.warp[t], res.bad_warps)
            self._report(m, pc, insn, claim, w, "lane form", t, bad, off)

    @staticmethod
    def _special(m, name: str, t: np.ndarray) -> np.ndarray:
        saved = m.idx
        m.idx = None
        try:
            return np.asarray(m.special(name))[t]
        finally:
            m.idx = saved

    def _report(self, m, pc, insn, claim, width, component, t, bad, values) -> None:
        pos = np.flatnonzero(bad)[:8]
        examples = [(tuple(int(x) for x in self._block(m, int(t[i]))), int(m.linear[t[i]]),
                     int(values[i])) for i in pos]
        self.violations.append(Violation(
            pc, insn.span.line if insn.span else None, str(insn), claim.what,
            claim.value, width, component, examples))

    @staticmethod
    def _block(m, thread: int) -> tuple[int, int, int]:
        b = int(m.block_of[thread]) + m.first_block
        gx, gy, _ = m.grid
        return (b % gx, b // gx % gy, b // (gx * gy))


__all__ = ["Probe", "Claim", "Violation", "ProbeStats"]
