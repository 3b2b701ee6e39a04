"""The block a kernel is evidently written for, when the launch does not give its shape:
findings that contradict that design are notes (`out-of-bounds`, `shared-memory-race`)."""
from __future__ import annotations

from dataclasses import dataclass

from ..domains.affine import ThreadBounds
from .base import RuleContext
from .memory_sites import Site, lane_terms, memory_sites, object_size, path_bounds, spaces_agree
from .wording import object_name

THREAD_INDICES = frozenset({"%tid.x", "%tid.y", "%tid.z", "%laneid", "%warpid"})


@dataclass(frozen=True)
class Design:
    """The largest block (threads in a row) a kernel is evidently written for, and why:
    its thread-indexed shared arrays stay in bounds up to that size, or it reads no
    thread index at all (one thread per block)."""

    threads: int
    reason: str


def design(rc: RuleContext) -> Design | None:
    """With the block shape unknown, the kernel's evident design: None when the launch
    or `.reqntid` gives the shape, or nothing in the kernel bounds it."""
    lim = rc.launch.block_or_limits(rc.kernel) if rc.launch is not None else None
    if lim is None or lim.exact:
        return None
    if not any(r.key in THREAD_INDICES for i in rc.function.instructions for r in i.uses):
        return Design(1, "the kernel reads no thread index: it is written for one thread "
                      "per block")
    best: Design | None = None
    for site in memory_sites(rc.facts):
        r = site.address.region
        if r is None or r.obj is None or r.space != "shared" or not spaces_agree(site):
            continue
        size = object_size(rc, site, r.space, r.obj)[0]
        last = _last_thread(site, size, path_bounds(site.access.state, rc.facts.ctx.bounds))
        if last is not None and (best is None or last + 1 < best.threads):
            elements = size // max(1, site.width)
            best = Design(last + 1, f"`{object_name(r.obj)}` holds {elements} elements of "
                          f"{site.width} bytes, indexed by `%tid.x`: in bounds for blocks of "
                          f"up to {last + 1} threads")
    return best


def _last_thread(site: Site, size: int | None, bounds: ThreadBounds) -> int | None:
    """The largest `%tid.x` for which an access indexed by it alone stays in `size`
    bytes, when thread 0's does and a larger thread's may not."""
    terms = lane_terms(site.address)
    if size is None or terms is None:
        return None
    moving = {n: c for n, c in terms.items() if c}
    if set(moving) != {"tid.x"} or moving["tid.x"] <= 0:
        return None
    c, v = moving["tid.x"], site.address
    bmin, bmax = v.aff.base.lo, v.aff.base.hi
    if bmin < 0 or bmax + site.width > size:
        return None
    last = (size - site.width - bmax) // c
    top = bounds.tid_x.hi
    return last if top is None or last < top else None


__all__ = ["Design", "design"]
