"""The static side of a differential run: one kernel linted under one launch, with the
facts kept, and what those facts claim about each instruction.

- `lint_kernel`: the analysis and every registered rule, as `lint.lint_module` runs
  them, but for one kernel and keeping `Facts` (the rules read nothing else); also the
  analysis of every register (the lint's leaves out what no rule observes), for the
  gamma check.
- `cost_bounds`: per memory instruction, the worst sectors per request (global) and
  bank ways (shared) over the warp patterns the rules consider (`warp_cases`), also
  where no diagnostic is emitted: a clean access claims a cost below the threshold.
- `claims`: per instruction, the abstract values of the registers it reads and of the
  address it accesses (`probe.Claim`), for the gamma check.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ptxlint import arch as arch_mod
from ptxlint.analysis import analyze
from ptxlint.diagnostics import Diagnostic
from ptxlint.interp.facts import Facts, FixpointParams
from ptxlint.ir.instructions.memory import StBulk
from ptxlint.ir.instructions.tensor import Ldmatrix, Stmatrix
from ptxlint.ir.module import Function, Module
from ptxlint.ir.operands import Address, Register
from ptxlint.launch import LaunchConfig
from ptxlint.lint import analysis_params, check_rules, rule_context
from ptxlint.rules.bank_conflict import matrix_lanes
from ptxlint.rules.base import RuleContext, load_rules
from ptxlint.rules.misaligned_access import alignment_of, required
from ptxlint.rules.memory_sites import memory_sites, object_size, spaces_agree
from ptxlint.rules.requests import element_members
from ptxlint.rules.sites import in_space, warp_cases
from ptxlint.threads.warp import bank_conflict, sector_range

from .probe import Claim

KINDS = ("load", "store", "atomic", "reduce")
KERNEL_PREFIX = "0/"  # the emulator stores the kernel's registers as "0/<key>"


@dataclass
class StaticSide:
    module: Module
    function: Function
    launch: LaunchConfig
    facts: Facts | None  # None: the analysis did not finish
    diagnostics: list[Diagnostic] = field(default_factory=list)
    context: RuleContext | None = None
    # the analysis of every register, not only those the rules observe: what the gamma
    # check holds against the run (the lint's own `facts` agree with it on those)
    full_facts: Facts | None = None


def _arch(module: Module) -> str | None:
    sms = [t for t in module.targets if t.startswith("sm_")]
    return sms[-1] if sms else None


def lint_kernel(module: Module, kernel: str, launch: LaunchConfig,
                time_budget: float = 30.0) -> StaticSide:
    """`time_budget`: per analysis, longer than the command line's 5 s so that a slow
    machine does not turn a case into "analysis did not finish"."""
    fn = module.function(kernel)
    if fn is None:
        raise ValueError(f"no kernel {kernel!r}")
    result = analyze(fn, launch, module=module, params=analysis_params(time_budget))
    side = StaticSide(module, fn, launch, result.facts, list(result.diagnostics))
    if result.facts is None:
        return side
    side.full_facts = analyze(fn, launch, module=module,
                              params=FixpointParams(time_budget=time_budget)).facts
    target = arch_mod.get(_arch(module))
    side.context = rule_context(module, fn, result.facts, target, result.facts.ctx.launch, {})
    rules = [cls() for _rule_id, cls in sorted(load_rules().items())]
    side.diagnostics.extend(check_rules(rules, module, result, target, {}))
    return side


@dataclass(frozen=True)
class CostBound:
    """The static worst case of one access; None: no claim (lanes not placed)."""

    sectors: int | None = None
    ways: int | None = None


def cost_bounds(side: StaticSide) -> dict[int, CostBound]:
    """By instruction identity, for the accesses the coverage rules look at."""
    rc = side.context
    out: dict[int, CostBound] = {}
    if rc is None:
        return out
    for acc in rc.facts.accesses:
        insn = acc.insn
        if insn.access_kind not in KINDS or acc.width <= 0 or isinstance(insn, StBulk):
            continue
        if in_space(acc, "global"):
            cases = warp_cases(rc, acc)
            worst = max((sector_range(p)[1] for c in cases for p in c.patterns), default=None)
            out[id(insn)] = CostBound(sectors=worst)
        elif in_space(acc, "shared"):
            used = matrix_lanes(acc)
            cases = warp_cases(rc, acc)
            worst = max((bank_conflict(_first_lanes(p, used), acc.width).ways
                         for c in cases for p in c.patterns), default=None)
            out[id(insn)] = CostBound(ways=worst)
    return out


def abstentions(side: StaticSide) -> dict[str, set[int]]:
    """Rule id -> identities of the instructions on which the rule, by its documented
    scope, makes no claim; a defect observed there is *unjudged*, not missed.

    - `out-of-bounds` judges an address only when it points into a known object of
      known size, in the space the instruction names (`spaces_agree`); `ldmatrix`
      without `.x4` uses only some lanes' addresses and is skipped.
    - `misaligned-access` leaves accesses whose space disagrees with the address to
      `address-space-mismatch`, and a narrow scalar access (4 bytes or less) whose
      alignment it cannot prove to its own type's (PTX requires it; nothing follows).
    - `uncoalesced-access` judges the instructions of an element group (two halves of
      one 16-byte element, `requests.request_groups`) together, as one access, not each
      one's own request.
    Every other rule judges every instruction it looks at.
    """
    rc = side.context
    out: dict[str, set[int]] = {"out-of-bounds": set(), "misaligned-access": set(),
                                "uncoalesced-access": set()}
    if rc is None:
        return out
    out["uncoalesced-access"] = element_members(rc)
    for site in memory_sites(rc.facts):
        insn, r = site.insn, site.address.region
        if r is None or r.obj is None or not spaces_agree(site) or site.width <= 0 or \
                object_size(rc, site, r.space, r.obj)[0] is None or \
                (isinstance(insn, (Ldmatrix, Stmatrix)) and "x4" not in insn.mods):
            out["out-of-bounds"].add(id(insn))
        if not _alignment_judged(rc, site):
            out["misaligned-access"].add(id(insn))
    return out


def _alignment_judged(rc: RuleContext, site) -> bool:
    need = required(site)
    if need <= 1 or need & (need - 1):
        return True  # one byte, or a width with no alignment rule: nothing to miss
    if site.address.region is not None and not spaces_agree(site):
        return False
    cong = alignment_of(rc, site).cong
    if cong.is_bottom:
        return True  # claimed unreachable
    need_bits = need.bit_length() - 1
    known = min(cong.bits, need_bits)
    residue = cong.residue % (1 << known) if known > 0 else 0
    wide = need >= 8 or site.insn.vector_width > 1
    return not (residue == 0 and cong.bits < need_bits and not wide)


def _first_lanes(p, used: int | None):
    """`ldmatrix`/`stmatrix` take addresses from their first `used` lanes only."""
    if used is None:
        return p
    return replace(p, offsets=tuple(o if i < used else None for i, o in enumerate(p.offsets)))


def _storage_key(reg: Register) -> str | None:
    if reg.is_special or "." in reg.name:
        return None  # special registers and vector components: not claims of the state
    return KERNEL_PREFIX + reg.key


def claims(side: StaticSide, every: int = 1) -> tuple[dict[int, list[Claim]],
                                                       dict[int, tuple[str, bool]]]:
    """(claims, guards) by instruction identity: the registers every `every`-th
    instruction reads (all memory instructions' addresses regardless), as the analysis
    of every register has them (`full_facts`)."""
    facts = side.full_facts
    out: dict[int, list[Claim]] = {}
    guards: dict[int, tuple[str, bool]] = {}
    if facts is None:
        return out, guards
    for k, (_b, insn, state) in enumerate(facts.walk()):
        if insn.guard is not None:
            key = _storage_key(insn.guard.register)
            if key is not None:
                guards[id(insn)] = (key, insn.guard.negated)
        if k % every:
            continue
        mine = []
        for reg in {r.key: r for r in insn.uses}.values():
            key = _storage_key(reg)
            if key is not None:
                mine.append(Claim(key, reg.name, state[reg.key]))
        if mine:
            out[id(insn)] = mine
    for acc in facts.accesses:
        addr = acc.insn.address
        if isinstance(addr, Address) and isinstance(addr.base, Register):
            key = _storage_key(addr.base)
            if key is not None:
                out.setdefault(id(acc.insn), []).append(
                    Claim(key, f"address {addr}", acc.address, guarded=True,
                          offset=addr.offset))
    return out, guards


__all__ = ["StaticSide", "CostBound", "lint_kernel", "cost_bounds", "claims", "abstentions"]
