"""The accesses the hardware serves together, for `uncoalesced-access`.

`request_groups` finds the accesses the hardware serves together: loads (or stores) of
one basic block through the same address register at different constant offsets, with
the same width and guard, so by the same lanes (`[%rd4]`, `[%rd4+8]`: a 16-byte element
that nvcc could not prove 16-byte aligned, read as two halves; or the N loads of an
unrolled blocked load). When each lane's bytes form one run of 8 or 16 bytes in two or
four pieces, what one vector access could read, the group is an *element* and is judged
as that one access; a run longer than 16 bytes is a *blocked* access, reported once for
all its instructions; any other group is judged access by access.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

from ..interp.facts import Access
from ..ir.operands import Register, Symbol
from .base import RuleContext
from .sites import in_space

MAX_ELEMENT = 16  # bytes: the widest access one thread makes (.v4.b32, .v2.b64)


@dataclass(frozen=True)
class RequestGroup:
    """Accesses of one block by the same lanes through one address register (see the
    module docstring), in program order; `deltas` their offsets from the lowest."""

    members: tuple[Access, ...]
    deltas: tuple[int, ...]

    @property
    def width(self) -> int:
        return self.members[0].width

    @property
    def span(self) -> int:
        """Bytes from the lowest member's first to the highest member's last."""
        return max(self.deltas) + self.width

    @property
    def contiguous(self) -> bool:
        """Each lane's bytes form one run, with no gap."""
        ds = sorted(set(self.deltas))
        return all(b - a <= self.width for a, b in zip(ds, ds[1:]))

    @property
    def element(self) -> bool:
        """Two or four pieces tiling 8 or 16 bytes per lane, what one `.v2`/`.v4` access
        could read: judged as one access of `span` bytes. (A 12-byte record read field
        by field is not one: no single access reads it.)"""
        pieces = len(set(self.deltas))
        return pieces in (2, 4) and self.contiguous and self.span in (8, MAX_ELEMENT) \
            and self.span == pieces * self.width

    @property
    def blocked(self) -> bool:
        """A longer run, read in several instructions: reported once."""
        return len(self.members) > 1 and self.contiguous and self.span > MAX_ELEMENT

    @property
    def lowest(self) -> Access:
        return self.members[self.deltas.index(0)]


def request_groups(rc: RuleContext, accesses: list[Access]) -> list[RequestGroup]:
    """`accesses` partitioned into groups, in program order (most are alone). A blocked
    access may spread over blocks (CUB's guarded blocked load tests each item on its own)
    when its address register is written once; the other groups keep to one block."""
    order = {id(a): i for i, a in enumerate(accesses)}
    once = _written_once(rc)
    by_register: dict[tuple, list[Access]] = {}
    for acc in accesses:
        key = _group_key(acc)
        if key is not None and key[-1] in once:
            by_register.setdefault(key[1:4] + key[5:], []).append(acc)
    out, taken = [], set()
    for accs in by_register.values():
        group = _group(accs)
        if group.blocked:
            out.append(group)
            taken.update(id(a) for a in accs)
    cfg = rc.facts.cfg
    keyed: dict[tuple, list[Access]] = {}
    for acc in accesses:
        if id(acc) in taken:
            continue
        key = _group_key(acc)
        if key is None:
            keyed[("alone", id(acc))] = [acc]
            continue
        runs = keyed.setdefault(key, [])
        if runs and _written_between(cfg, key[-1], cfg.position(runs[-1].insn)[1],
                                     cfg.position(acc.insn)[1], acc.block):
            keyed[key + (id(acc),)] = keyed.pop(key)  # the register changed: a new group
            runs = keyed.setdefault(key, [])
        runs.append(acc)
    out += [_group(accs) for accs in keyed.values()]
    return sorted(out, key=lambda g: order[id(g.members[0])])


def _group(accs: list[Access]) -> RequestGroup:
    offs = [a.insn.address.offset for a in accs]  # type: ignore[union-attr]
    return RequestGroup(tuple(accs), tuple(o - min(offs) for o in offs))


def _written_once(rc: RuleContext) -> set[str]:
    """Registers with one definition in the function: the same value wherever read."""
    count = Counter(chain.from_iterable(map(attrgetter("def_keys"), rc.function.instructions)))
    return {k for k, n in count.items() if n == 1}


def element_members(rc: RuleContext, space: str = "global") -> set[int]:
    """Identities of the instructions of `space` that belong to an element group: the
    rules judge the group as one access, not each instruction's own request."""
    accs = [a for a in rc.facts.accesses if a.width > 0 and in_space(a, space)]
    return {id(a.insn) for g in request_groups(rc, accs) if g.element for a in g.members}


def _group_key(acc: Access) -> tuple | None:
    insn = acc.insn
    addr = insn.address
    base = getattr(addr, "base", None)
    if isinstance(base, Register):
        reg = base.key
    elif isinstance(base, Symbol):
        reg = "@" + base.name
    else:
        return None
    guard = (insn.guard.register.key, insn.guard.negated) if insn.guard is not None else None
    region = acc.address.region
    return (acc.block, insn.access_kind, acc.space, acc.width, guard,
            region.obj if region is not None else None, reg)


def _written_between(cfg, reg: str, i: int, j: int, block: int) -> bool:
    if reg.startswith("@"):
        return False
    return any(reg in insn.def_keys for insn in cfg.blocks[block].instructions[i:j])


__all__ = ["RequestGroup", "request_groups", "element_members", "MAX_ELEMENT"]
