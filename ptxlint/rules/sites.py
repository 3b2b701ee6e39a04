"""The warp patterns of one memory access, as the warp rules (`uncoalesced-access`,
`bank-conflict`) and the soundness suite's cost bounds see it: one door, `warp_cases`.

Two ways to place the lanes:

- the *lane form* of the address (`base + cx*%tid.x + ... + cl*%laneid`, `warp.py`),
  with the block shape or, without it, assuming each warp is 32 consecutive `%tid.x`;
- *lane by lane*: with a known block shape, each thread's own address, its register
  followed back through its definitions and evaluated for every thread of the block
  (`active_lanes`), so `tid / 16`, `tid & 31`, XOR swizzles, `min`/`max` clamps and
  `selp` between two forms are checked as well. This is the first choice whenever the
  shape is known and the lane form is not enough (no form, a coefficient that is not
  one number, a guard that selects lanes); without a shape such addresses stay "not
  checked".

Either way only the lanes that run the access count: its guard and the divergent
branches deciding it select them, thread by thread (`active_lanes`). Without a block
shape, a pattern is counted for every selection the conditions allow. A `WarpCase` is
one possible execution (one choice of the values the lanes depend on: an unknown
coefficient, a loop counter, a block index); `exact` says whether its lanes are exactly
those that run the access, which a definite finding needs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import product
from typing import TYPE_CHECKING

from ..domains.affine import Affine
from ..domains.align import Congruence
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value
from ..interp.facts import Access
from ..arch import WARP_SIZE
from ..threads.warp import GRANULE_BITS, WarpPattern, lane_patterns, restrict, unique_rows, \
    warp_patterns
from ..ir.operands import Register, Symbol
from ..launch import param_value
from .base import RuleContext

if TYPE_CHECKING:
    import numpy as np

    from ..threads.active_lanes import BlockLanes


@dataclass(frozen=True)
class WarpCase:
    """The warp patterns of an access in one possible execution: `values` the choice
    made (of the unknown, uniform lane coefficients `unknown`, or of the values
    `depends` names that the lanes' addresses and selection depend on), `patterns` one
    per distinct warp (none when no lane runs the access), `exact` whether the lanes of
    the patterns are exactly those that run the access."""

    values: dict[str, int]
    unknown: dict[str, SI]
    patterns: tuple[WarpPattern, ...]
    exact: bool = True
    depends: tuple[str, ...] = ()


def in_space(acc: Access, space: str) -> bool:
    """The access goes to `space`: by its state space, or generic with a known region."""
    if acc.space == space:
        return True
    region = acc.address.region
    return acc.space == "generic" and region is not None and region.space == space


def exact_block(rc: RuleContext) -> tuple[int, int, int] | None:
    """The block shape when the launch or `.reqntid` fixes it (asked once per kernel:
    every access asks)."""
    memo = rc.facts.derived("sites.exact_block", lambda _: {})
    kernel = rc.kernel
    if id(kernel) not in memo:
        memo[id(kernel)] = (kernel, rc.facts.ctx.launch.block_or_limits(kernel).shape)
    return memo[id(kernel)][1]


def warp_cases(rc: RuleContext, acc: Access, width: int | None = None,
               align: int | None = None) -> list[WarpCase]:
    """The cases of `acc` (see the module docstring); empty when its lanes cannot be
    placed. `width` overrides the access size, `align` the alignment known for the
    object the address points into."""
    width = acc.width if width is None else width
    region = acc.address.region
    if align is None:
        align = rc.facts.ctx.object_align(region.obj if region is not None else None)
    from ..threads.active_lanes import splits_lanes  # noqa: PLC0415 -- numpy, when needed
    aff = acc.address.aff
    formed = not (aff.is_top or aff.is_bottom)
    if not formed and exact_block(rc) is None:
        return []
    splits = splits_lanes(rc.facts, acc)
    if exact_block(rc) is not None and (
            not formed or splits or any(not c.is_singleton for _, c in aff.coeffs)):
        found = _lane_cases(rc, acc, width, align)
        if found is not None:
            return found
    if not formed:
        return []
    cases = _formed_cases(rc, acc, width, align)
    return _selected(rc, acc, cases) if splits and cases else cases


# ---- lane by lane -------------------------------------------------------------------------------
def lanes_of(rc: RuleContext, acc: Access, address: bool) -> BlockLanes | None:
    """`active_lanes.block_lanes`, once per access and kernel for every rule that asks."""
    from ..threads.active_lanes import block_lanes  # noqa: PLC0415 -- numpy
    memo = rc.facts.derived("sites.lanes", lambda _: {})
    key = (id(acc.insn), address)
    if key not in memo:
        memo[key] = block_lanes(rc.facts, acc, address)
    return memo[key]


def _lane_cases(rc: RuleContext, acc: Access, width: int, align: int) -> list[WarpCase] | None:
    lanes = lanes_of(rc, acc, True)
    if lanes is None or lanes.start is None:
        return None
    region = acc.address.region
    in_object = region is not None and region.obj is not None
    # the offset is exact but for a uniform symbolic part, a multiple of sym_gcd
    bits = (lanes.sym_gcd & -lanes.sym_gcd).bit_length() - 1 if lanes.sym_gcd else 64
    base_bits = max(0, align.bit_length() - 1)

    def alignment(residue: int) -> Congruence:
        c = Congruence(min(bits, GRANULE_BITS), residue)
        both = c.meet(acc.address.cong)
        c = c if both.is_bottom else both
        return c.add(Congruence(base_bits, 0)) if in_object else c

    found = lane_patterns(lanes.start, lanes.mask, width, bits, alignment)
    if found is None:
        return None
    patterns, ids = found
    return _row_cases(lanes, patterns, ids)


def _row_cases(lanes: BlockLanes, patterns: list[WarpPattern], ids: np.ndarray,
               values: dict[str, int] | None = None,
               unknown: dict[str, SI] | None = None) -> list[WarpCase]:
    """One case per distinct set of warp patterns over the rows (`ids[row, warp]`)."""
    import numpy as np  # noqa: PLC0415
    varying = [i for i, v in lanes.values.items() if v.size > 1 and (v != v[0]).any()]
    depends = tuple(lanes.names[i] for i in varying)
    out = []
    if patterns:
        uniq, inverse = unique_rows(ids)
        first = np.full(len(uniq), len(inverse))
        np.minimum.at(first, inverse, np.arange(len(inverse)))
        for row_ids, r in zip(uniq, first):
            chosen = sorted(set(row_ids.tolist()) - {-1})
            if chosen:
                vals = dict(values or {})
                vals.update({lanes.names[i]: int(lanes.values[i][r]) for i in varying})
                out.append(WarpCase(vals, dict(unknown or {}),
                                    tuple(patterns[k] for k in chosen), lanes.exact, depends))
    return out or [WarpCase(dict(values or {}), dict(unknown or {}), (), lanes.exact, depends)]


def _selected(rc: RuleContext, acc: Access, cases: list[WarpCase]) -> list[WarpCase]:
    """Lane-form cases with only the lanes the access's conditions let through: per row
    and warp with a known block shape; without one, every selection any warp of a
    one-row block may see (the lane form then gives one pattern for every warp)."""
    import numpy as np  # noqa: PLC0415
    lanes = lanes_of(rc, acc, False)
    if lanes is None:
        return [replace(c, exact=False) for c in cases]
    if exact_block(rc) is None:
        masks = _warp_masks(rc, lanes)
        return [replace(c, patterns=_distinct(restrict(p, m) for p in c.patterns for m in masks),
                        exact=False) for c in cases]
    rows, n = lanes.mask.shape
    nw = -(-n // WARP_SIZE)
    mask = np.pad(lanes.mask, ((0, 0), (0, nw * WARP_SIZE - n))).reshape(rows, nw, WARP_SIZE)
    uniq, inverse = unique_rows(mask.reshape(rows, nw * WARP_SIZE).astype(np.int64))
    uniq = uniq.astype(bool)
    out = []
    for c in cases:
        by_warp = {w: p for p in c.patterns for w in p.warps}
        found: list[WarpPattern] = []
        index: dict[tuple, int] = {}
        ids = np.full((len(uniq), nw), -1, np.int64)
        for u, row in enumerate(uniq.reshape(len(uniq), nw, WARP_SIZE)):
            for w in range(nw):
                p = by_warp.get(w)
                q = restrict(p, row[w]) if p is not None else None
                if q is None:
                    continue
                q = replace(q, warps=(w,))
                key = (q.offsets, q.alignment, q.present)
                if key not in index:
                    index[key] = len(found)
                    found.append(q)
                else:
                    k = index[key]
                    found[k] = _merge(found[k], q)
                ids[u, w] = index[key]
        # rows keep their order: `ids[inverse]` is per row of `lanes`
        out += _row_cases(lanes, found, ids[inverse.reshape(-1)], c.values, c.unknown)
    return out


def _warp_masks(rc: RuleContext, lanes: BlockLanes) -> list[np.ndarray]:
    """The distinct selections of a warp's 32 lanes that some warp and row of `lanes`
    may see (none empty), once per answer: accesses and widths share them."""
    import numpy as np  # noqa: PLC0415
    memo = rc.facts.derived("sites.warp_masks", lambda _: {})
    hit = memo.get(id(lanes))
    if hit is None:
        rows, n = lanes.mask.shape
        nw = -(-n // WARP_SIZE)
        mask = np.pad(lanes.mask, ((0, 0), (0, nw * WARP_SIZE - n)))
        masks = unique_rows(mask.reshape(rows * nw, WARP_SIZE).astype(np.int64))[0]
        hit = memo[id(lanes)] = (lanes, [m.astype(bool) for m in masks if m.any()])
    return hit[1]


def _merge(a: WarpPattern, b: WarpPattern) -> WarpPattern:
    return replace(a, warps=tuple(sorted(set(a.warps + b.warps))),
                   uniform_base=a.uniform_base.join(b.uniform_base))


def _distinct(patterns) -> tuple[WarpPattern, ...]:
    out: dict[tuple, WarpPattern] = {}
    for p in patterns:
        if p is None:
            continue
        key = (p.offsets, p.alignment, p.present)
        out[key] = p if key not in out else _merge(out[key], p)
    return tuple(out.values())


# ---- the lane form ------------------------------------------------------------------------------
def _formed_cases(rc: RuleContext, acc: Access, width: int, align: int) -> list[WarpCase]:
    """One case when every lane coefficient is known; else one per sampled choice of
    the unknown ones (see `coefficient_samples`)."""
    address = acc.address
    aff, region = address.aff, address.region
    block, bounds = exact_block(rc), rc.facts.ctx.bounds
    unknown = {n: c for n, c in aff.coeffs if not c.is_singleton}
    choices = list(product(*(coefficient_samples(c) for c in unknown.values())))[:256]
    out = []
    for choice in choices:
        values = dict(zip(unknown, choice))
        coeffs = tuple((n, SI.const(values[n]) if n in values else c) for n, c in aff.coeffs)
        value = Value(address.si, Affine(aff.base, coeffs), address.cong, region)
        patterns = warp_patterns(value, width, block, bounds, align)
        if patterns:
            out.append(WarpCase(values, unknown, patterns))
    return out


def coefficient_samples(c: SI, cap: int = 48) -> list[int]:
    """Values of a coefficient set that decide a warp's cost: every element of a small
    set, else the elements within 160 bytes of 0 (40 steps at most; past that, lanes of
    one request no longer share sectors or banks) and both ends."""
    if c.is_singleton:
        return [c.lo]  # type: ignore[list-item]
    size = c.size()
    if size is not None and size <= cap:
        return sorted(c.gamma())
    near = min(160, 40 * c.stride)
    middle = c.meet(SI.range(-near, near))
    picks = set() if middle.is_bottom else set(middle.gamma())
    picks.update(x for x in (c.lo, c.hi) if x is not None)
    return sorted(picks)


def lane_stride(p: WarpPattern) -> int | None:
    """The byte step between consecutive lanes when the running lanes are consecutive
    and evenly spaced."""
    lanes = p.lanes()
    offs = [p.offsets[i] for i in lanes]
    if len(offs) < 2 or lanes[-1] - lanes[0] != len(lanes) - 1:
        return None
    step = offs[1] - offs[0]  # type: ignore[operator]
    return step if all(b - a == step for a, b in zip(offs, offs[1:])) else None  # type: ignore


def running(rc: RuleContext, acc: Access, threads: list | None) -> list | None:
    """`threads` (the (tid, laneid) pairs of an exact block) less those whose guard or
    deciding branches keep them from running `acc`, thread by thread; None when the
    block or the conditions are not known that way."""
    if threads is None or exact_block(rc) is None:
        return None
    lanes = lanes_of(rc, acc, False)
    if lanes is None:
        return None
    active = lanes.active()
    x, y, _ = lanes.space.dims
    return [(t, i) for t, i in threads if active[t[0] + x * (t[1] + y * t[2])]]


# ---- what the address depends on ----------------------------------------------------------------
def runtime_sources(rc: RuleContext, acc: Access) -> list[str]:
    """Scalar kernel parameters without a launch value, and launch-dependent special
    registers (`%ntid.x`, `%nctaid.x`), that the address is computed from."""
    base = acc.insn.address.base if acc.insn.address is not None else None
    if not isinstance(base, Register):
        return []
    defs: dict[str, list] = {}
    for insn in rc.facts.function.instructions:
        for d in insn.defs:
            defs.setdefault(d.key, []).append(insn)
    launch, found, seen, todo = rc.facts.ctx.launch, [], set(), [base.key]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        for insn in defs.get(key, ()):
            name = _param_read(insn)
            if name is not None:
                p = rc.kernel.param(name)
                if p is not None and name not in launch.params and not p.dims and \
                        param_value(p, launch, rc.module).region is None and name not in found:
                    found.append(name)
                continue
            for r in insn.uses:
                if r.is_special and re.match(r"%n(tid|ctaid)\.", r.name):
                    if (exact_block(rc) is None or r.name.startswith("%nctaid")) and \
                            r.name not in found:
                        found.append(r.name)
                elif not r.is_special:
                    todo.append(r.key)
    return found


def _param_read(insn) -> str | None:
    addr = getattr(insn, "address", None)
    if insn.opcode in ("ld", "ldu") and getattr(insn, "space", None) == "param" and \
            addr is not None and isinstance(getattr(addr, "base", None), Symbol):
        return addr.base.name
    return None



__all__ = ["WarpCase", "warp_cases", "lanes_of", "in_space", "exact_block",
           "coefficient_samples", "lane_stride", "running", "runtime_sources"]
