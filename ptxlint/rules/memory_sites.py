"""The per-operand view of memory accesses that the memory rules share (`out-of-bounds`,
`misaligned-access`, `address-space-mismatch`): each address operand of a thread's own
access as a `Site`, the object it points into and its declaration, and the thread
indices that can reach a program point."""
from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from ..diagnostics import Diagnostic, Severity
from ..domains.affine import INDICES, ThreadBounds
from ..domains.state import State
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value
from ..interp.facts import Access, Facts
from ..ir.instruction import Instruction
from ..ir.instructions import async_copy, atomic, memory, sync, tensor
from ..ir.module import Variable
from ..ir.operands import Address
from ..ir.traits import MemoryAccess
from .base import RuleContext

# Instructions whose address operand is one thread's own access of `access_bytes` bytes
# (warp-cooperative wmma, tensor memory, prefetches and hints are left out).
PER_THREAD = (memory.Ld, memory.Ldu, memory.St, memory.StAsync, atomic.Atom, atomic.Red,
              atomic.RedAsync, sync.Mbarrier, tensor.Ldmatrix, tensor.Stmatrix,
              async_copy.CpAsync, async_copy.CpAsyncBulk, async_copy.CpReduceAsyncBulk)


VERBS = {"load": "load", "store": "store", "atomic": "atomic access", "reduce": "reduction",
         "copy": "copy"}


@dataclass(frozen=True)
class Site:
    """One address operand of a memory instruction: the destination, or for a copy
    also its source."""

    access: Access
    space: str  # the state space the instruction names for this operand
    address: Value
    operand: str = ""  # "source" for the source of a copy

    @property
    def insn(self) -> MemoryAccess:
        return self.access.insn

    @cached_property
    def width(self) -> int:  # asked per question about the site: computed once
        return self.insn.access_bytes

    @property
    def verb(self) -> str:
        if self.operand == "source":
            return "copy source read"
        return VERBS.get(self.insn.access_kind, "access")


def memory_sites(facts: Facts, accesses: Iterable[Access] | None = None) -> Iterator[Site]:
    """The sites of `accesses` (default: every access of the facts, listed once for the
    rules that ask)."""
    if accesses is None:
        return iter(facts.derived("memory sites", lambda f: list(_sites(f, f.accesses))))
    return _sites(facts, accesses)


def _sites(facts: Facts, accesses: Iterable[Access]) -> Iterator[Site]:
    for acc in accesses:
        insn = acc.insn
        if not isinstance(insn, PER_THREAD):
            continue
        if isinstance(insn, async_copy.AsyncCopy):
            yield Site(acc, insn.dst_space, acc.address)
            src = insn.src_address
            if isinstance(src, Address):
                value = facts.address_value(src, acc.state)
                if value is not None:
                    yield Site(acc, insn.src_space, value, "source")
        else:
            yield Site(acc, insn.space, acc.address)


def narrowed(facts: Facts, site: Site) -> Site | None:
    """`site` with its address narrowed by the relations that hold at the access (an
    address computed before the guard that bounds its index); None when they say no
    execution reaches it."""
    acc = facts.narrowed(site.access)
    if acc is None or acc is site.access:
        return None if acc is None else site
    if site.operand == "source":
        address = facts.address_value(site.insn.src_address, acc.state)
    else:
        address = acc.address
    return Site(acc, site.space, address, site.operand)


def declaration(rc: RuleContext, name: str, insn: Instruction) -> Variable | None:
    """The variable `name` as `insn` sees it. Call sequences redeclare `param0` and
    `retval0` in every `{ }` block with different sizes, and `Ctx.variable` keeps one
    per name, so the last declaration before the instruction wins here."""
    found = rc.declarations.get(name)
    if found:
        at = rc.position(insn)
        k = bisect.bisect_left(found[0], at)  # declarations strictly before `insn`
        if k:
            return found[1][k - 1]
    return rc.facts.ctx.variable(name)


def object_size(rc: RuleContext, site: Site, space: str, obj: str) -> tuple[int | None, str]:
    """The byte size of the object an address points into, and where it comes from."""
    var = declaration(rc, obj, site.insn)
    if var is None:
        return None, ""
    if space != "param" and var in rc.kernel.params:  # the buffer a pointer names
        size = rc.launch.extents.get(obj) if rc.launch is not None else None
        return size, "the launch's buffer size"
    if var.byte_size is None and var.space == "shared" and rc.launch is not None:
        return rc.launch.dynamic_smem, "the launch's dynamic shared memory size"
    return var.byte_size, ""


def with_severity(d: Diagnostic, severity: Severity) -> Diagnostic:
    """`Rule.diagnostic` reads a falsy severity as "the rule's default", so a note
    (Severity.NOTE == 0) is set afterwards."""
    return replace(d, severity=severity)


def spaces_agree(site: Site) -> bool:
    r = site.address.region
    return r is not None and site.space in ("generic", r.space)


def path_bounds(state: State, bounds: ThreadBounds) -> ThreadBounds:
    """The thread indices that can reach a program point. A register that is exactly
    `b + c*index` (one index, known b and c) and whose values a branch or guard narrowed
    narrows the index: after `if (threadIdx.x < 64)` on %r1 = %tid.x, an address computed
    from %tid.x before the branch is only used by threads 0..63."""
    ranges = {n: bounds.of(n) for n in INDICES}
    for v in state.regs.values():
        aff = v.aff
        if len(aff.coeffs) != 1:  # top and bottom have none
            continue
        si = v.si
        if not si.is_finite or si.is_bottom:
            continue
        (name, coeff), = aff.coeffs
        c, b = coeff.singleton(), aff.base.singleton()
        if not c or b is None:
            continue
        # b + c*index in [lo, hi]: index from ceil((lo - b) / c) to floor((hi - b) / c),
        # the ends swapped when c < 0
        low, high = (si.lo, si.hi) if c > 0 else (si.hi, si.lo)
        first, last = -((b - low) // c), (high - b) // c
        ranges[name] = ranges[name].meet(SI.range(first, last))
    return ThreadBounds(*(ranges[n] for n in INDICES))


def lane_terms(v: Value) -> dict[str, int] | None:
    aff = v.aff
    if aff.is_top or aff.is_bottom or aff.base.lo is None or aff.base.hi is None:
        return None
    known = {n: c.singleton() for n, c in aff.coeffs}
    return None if any(c is None for c in known.values()) else known  # type: ignore


__all__ = ["Site", "memory_sites", "narrowed", "declaration", "object_size", "with_severity",
           "spaces_agree", "path_bounds", "lane_terms"]
