"""What an address's alignment depends on, for `misaligned-access`: the values the PTX
does not fix (kernel parameters without a launch value, data loaded from memory, a
device function's arguments), found by following the address back through its
definitions, and the condition on one parameter under which it is aligned ("`k` % 4 ==
0"), found by re-analysing the kernel with the parameter known to be a multiple.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..interp.facts import Facts, FixpointParams
from ..ir.operands import Register, Symbol
from ..ir.types import Kind
from ..launch import param_value
from .base import RuleContext

# The re-analyses' budget, counted in instructions interpreted (`Facts.work`) as the
# out-of-bounds rule's threshold search counts it, so that a file gets the same words on
# every run: at most this many probes per kernel, and this much work in all (or this many
# times the kernel's own analysis, whichever is larger)
PROBES = 24
PROBE_WORK = 30_000
RELATIVE = 2.0
PROBE_PARAMS = FixpointParams(rules_only=True, max_work=PROBE_WORK)
MAX_INSTRUCTIONS = 1000  # kernels larger than this are not re-analysed
MAX_BITS = 9  # the congruence domain's precision: multiples of 512 at most


@dataclass
class Sources:
    """The inputs an address is computed from that the PTX does not fix."""

    params: list[str] = field(default_factory=list)  # kernel parameters, no launch value
    loaded: bool = False  # a value read from memory (not a kernel parameter)
    arguments: bool = False  # a device function's own parameter

    @property
    def external(self) -> bool:
        return bool(self.params) or self.loaded or self.arguments


def sources(rc: RuleContext, insn) -> Sources:
    """Follow the address register of `insn` back through every definition of each
    register it reads (a superset of the reaching ones: sound for "depends on")."""
    out = Sources()
    address = getattr(insn, "address", None)
    base = getattr(address, "base", None)
    if not isinstance(base, Register):
        return out
    defs: dict[str, list] = {}
    for d in rc.facts.function.instructions:
        for r in d.defs:
            defs.setdefault(r.key, []).append(d)
    launch = rc.facts.ctx.launch
    seen, todo = set(), [base.key]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        for d in defs.get(key, ()):
            rc.deadline.tick()
            kind = _read_kind(d)
            if kind == "param":
                _param(rc, d.address.base.name, launch, out)
                continue
            if kind == "memory":
                out.loaded = True
                continue
            todo.extend(r.key for r in d.uses if not r.is_special)
    return out


def _read_kind(insn) -> str | None:
    """"param" for a load of a `.param` cell by name, "memory" for any other value read
    from memory (a load, an atomic's old value, a shuffle from another lane)."""
    if insn.opcode in ("ld", "ldu"):
        addr = getattr(insn, "address", None)
        if getattr(insn, "space", None) == "param" and isinstance(getattr(addr, "base", None),
                                                                   Symbol):
            return "param"
        return "memory"
    if insn.opcode in ("atom", "shfl", "suld", "tex", "tld4"):
        return "memory"
    return None


def _param(rc: RuleContext, name: str, launch, out: Sources) -> None:
    p = rc.kernel.param(name) if rc.entry is None else None
    if p is None:  # a device function's argument (or a call's return value)
        out.arguments = out.arguments or rc.function.param(name) is not None
        out.loaded = out.loaded or rc.function.param(name) is None
        return
    if p.dims or name in launch.params or name in out.params:
        return
    if param_value(p, launch, rc.module).region is None and p.type.kind is not Kind.FLOAT:
        out.params.append(name)


class AlignmentSearch:
    """Re-analyses the kernel with integer parameters known to be multiples of a power
    of two, to find the weakest such fact that proves an access aligned. Each probe is a
    full sound analysis; probes are cached, shared by the accesses of the kernel and
    limited in number and work."""

    def __init__(self, rc: RuleContext):
        self.rc = rc
        self.cache: dict[frozenset, Facts | None] = {}
        self.budget = max(PROBE_WORK, RELATIVE * rc.facts.work)
        self.spent = 0
        self.enabled = rc.entry is None and rc.launch is not None and \
            len(rc.facts.function.instructions) <= MAX_INSTRUCTIONS

    def condition(self, site, params: list[str], need: int, aligned) -> tuple[str, int] | None:
        """(parameter, m): the site is aligned whenever the parameter is a multiple of m,
        the smallest such power of two; None when no single parameter does it or the
        budget runs out. `aligned(facts, site)`: the site proved aligned in `facts`."""
        if not self.enabled or not params:
            return None
        try:
            if not self._proves({p: 1 << MAX_BITS for p in params}, site, aligned):
                return None
            for p in params:
                if not self._proves({p: 1 << MAX_BITS}, site, aligned):
                    continue
                low, high = 0, MAX_BITS  # not proved with 2^low (0: nothing known), proved
                while high - low > 1:
                    mid = (low + high) // 2
                    low, high = (low, mid) if self._proves({p: 1 << mid}, site, aligned) \
                        else (mid, high)
                return p, 1 << high
        except TimeoutError:
            return None
        return None

    def _proves(self, multiples: dict[str, int], site, aligned) -> bool:
        facts = self._facts(multiples)
        if facts is None:
            raise TimeoutError
        return aligned(facts, site)

    def _facts(self, multiples: dict[str, int]) -> Facts | None:
        key = frozenset(multiples.items())
        if key not in self.cache:
            if len(self.cache) >= PROBES or self.spent >= self.budget:
                raise TimeoutError
            rc = self.rc
            launch = replace(rc.launch, multiples={**rc.launch.multiples, **multiples})
            # past the kernel's budget this raises: the rule stops
            facts = rc.reanalyze(launch, PROBE_PARAMS, "re-analysis with " + ", ".join(
                f"{p} % {m} == 0" for p, m in multiples.items()))
            self.spent += PROBE_WORK if facts is None else facts.work
            self.cache[key] = facts
        return self.cache[key]


__all__ = ["Sources", "sources", "AlignmentSearch"]
