"""What `uninitialized-read`, `global-memory-race` and `warp-sync-mask` claim, for
holding the emulator's hazard events (`emulate/hazards.py`, `emulate/warpops.py`)
against them.

- Registers: `uninitialized-read` judges every read, in the kernel and in the functions
  it calls (the rule runs on callees too), so every `uninitialized-register` event
  needs a finding at its instruction.
- Shared and local memory: the rule reports a load when some byte it may read lies
  outside the bytes the writes before it may cover (`threads/uninit_memory.Verdict`).
  An event is *claimed* (needs a finding) when one of its bytes lies outside those
  bytes; an event all of whose bytes some write could have covered (written later by
  another thread of the same interval, or on a later trip of a loop), or at a load the
  rule does not judge (unknown writers, no block shape, in a called function), is
  unjudged.
- Global races: judged at the `ld`/`st` the rule places in a kernel buffer and
  decides thread by thread; unjudged at the others (addresses it cannot evaluate or
  relate across blocks, accesses in called functions) and, in a kernel with a
  gpu-scope fence, everywhere (the rule takes fenced pairs as synchronised).
- Warp member masks (`warp-sync` events, and `warp-barrier` events at a `bar.warp.sync`
  whose mask is not an immediate): `warp-sync-mask` is judged where it decides the
  instruction thread by thread (block shape known, the lanes that run it and its mask
  evaluated exactly, every branch that may send lanes of the warp away evaluated);
  elsewhere (a mask from loaded data, a data-dependent branch, a called function) the
  events are unjudged.
"""
from __future__ import annotations

from collections.abc import Callable

from ptxlint.threads.member_masks import MemberMasks, sync_sites
from ptxlint.rules.warp_sync_mask import judged
from ptxlint.threads.global_races import GlobalRaceFinder, _gpu_fence, participates
from ptxlint.threads.uninit_memory import Verdict, local_reads, shared_reads


def hazard_abstentions(side) -> dict[str, set[int]]:
    rc = side.context
    everything = {id(i) for f in side.module.functions for i in f.instructions}
    if rc is None:
        return {"global-memory-race": everything, "warp-sync-mask": everything}
    facts = rc.facts
    accs = [a for a in facts.accesses if participates(a)]
    judged: set[int] = set()
    fenced = any(_gpu_fence(i) for i in side.function.instructions)
    if accs and not fenced:
        finder = GlobalRaceFinder(facts, side.module, accs)
        finder.races()
        judged = {id(a.insn) for k, a in enumerate(accs) if k not in finder.unchecked}
    return {"global-memory-race": everything - judged,
            "warp-sync-mask": everything - sync_mask_judged(rc)}


def sync_mask_judged(rc) -> set[int]:
    """The instructions `warp-sync-mask` decides thread by thread (`judged`)."""
    sites = sync_sites(rc.facts)
    if not sites:
        return set()
    masks = MemberMasks(rc.facts, rc.module)
    return {id(i) for i in sites if judged(masks, i)}


def event_judges(side, program) -> dict[str, Callable]:
    """Event kind -> `f(event, insn)`: whether the rule claims the event's bytes."""
    rc = side.context
    if rc is None:
        return {}
    facts = rc.facts
    shared = {id(v.acc.insn): v for v in shared_reads(facts, side.module)}
    local = {id(v.acc.insn): v for v in local_reads(facts, side.module)}
    kernel = program.infos[program.kernel.name]

    def shared_base(obj: str) -> int | None:
        placed = program.layout.symbol(program.aliases.get(obj, obj))
        return placed.address if placed is not None else None

    def local_base(obj: str) -> int | None:
        frame = kernel.frame
        hit = frame.offsets.get(obj) if frame is not None else None
        return hit[0] if hit is not None else None

    def judge(verdicts: dict[int, Verdict], base: Callable[[str], int | None]):
        def claimed(ev, insn) -> bool:
            v = verdicts.get(id(insn))
            if v is None or v.written is None or v.obj is None:
                return False
            at = base(v.obj)
            if at is None:
                return False
            for lane in ev.details.get("bytes") or ():
                for b in lane:
                    off = b - at
                    if off < 0 or off >= v.written.size or not v.written[off]:
                        return True
            return False
        return claimed

    return {"uninitialized-shared": judge(shared, shared_base),
            "uninitialized-local": judge(local, local_base)}


__all__ = ["hazard_abstentions", "event_judges"]
