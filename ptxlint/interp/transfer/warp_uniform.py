"""Warp-level uniformity the lane form cannot express.

The lane form (`domains/affine.py`) says a value is warp-uniform when it has no thread
coefficient. Two facts real kernels rely on fall outside it:

- **Quotients of the thread index by the warp width.** `warp = %tid.x >> 5` (also
  `/ 32`, `/ warpSize`, `& -32`, `bfe` from bit 5) is not affine in `%tid.x`, yet it is
  one value in every lane of a warp when the warp's lanes are 32 consecutive `%tid.x`
  of one row. Lanes are consecutive linear thread ids `x + ntid.x*(y + ntid.y*z)`
  (`launch.py`), so that holds when `%ntid.x` is a multiple of 32 or the block is one
  row (`ntid.y = ntid.z = 1`); in a 48x2 block warp 1 holds `%tid.x` 32-47 of row 0 and
  0-15 of row 1, and `%tid.x >> 5` is 1 in half its lanes and 0 in the others.
  `quotient_uniform` decides it for `floor(v / d)` where `v` has a lane form:

  * with an exact block shape (the launch, `.reqntid`) warp by warp, from each lane's
    thread index: every lane's `v` must fall into one block of d consecutive integers
    for every base the form allows (a 16x16 block's `(tid.x + 16*tid.y) / 32` passes);
  * with only bounds (`.maxntid` bounds the thread count, not `ntid.x`: a 16x16 block
    is a legal launch of `__launch_bounds__(256)`), never, unless the launch says to
    assume whole rows (`LaunchConfig.warps_in_rows`, the re-analysis the divergence
    rules make to find the condition of a finding, `warp_rows_facts`): then lane l of a
    warp has `tid.x = 32k + l` and one `tid.y`, `tid.z`.

- **Broadcast shuffles.** `shfl.sync.idx d, a, b, c, mask` with a warp-uniform lane `b`
  and no sub-segments (`c[12:8] = 0`, the `width = 32` of `__shfl_sync`) makes every
  lane read lane `b` (or its own `a` when `b` is past the clamp `c[4:0]`): one value in
  every lane executing it (`broadcast`). The PTX ISA leaves the value undefined when
  lane b does not execute it; the analysis assumes one value then too (the hardware,
  and the emulator, read one register). `vote.sync`, `redux.sync`, `match.all.sync`,
  `activemask` and `elect.sync` give one answer to the lanes executing them
  (`interp/transfer/memory.py`); all of these stay *block*-varying (`block_uniform.py`).
"""
from __future__ import annotations

from functools import lru_cache
from math import gcd

from ...domains.lattice import Tri
from ...domains.strided import StridedInterval as SI
from ...domains.value import TOP, Value
from ...ir.instructions.move import ShflBase, ShflSync
from ..context import Ctx
from .table import value_of

WARP = 32
Dims = tuple[int, int, int]


# ---- which lanes form a warp -----------------------------------------------------------------
def warp_rows(ctx: Ctx) -> Dims | str | None:
    """The exact block shape; "rows" when assumed to be whole rows of 32 `%tid.x`
    (`LaunchConfig.warps_in_rows`); None when neither is known."""
    launch = ctx.launch
    if launch is None:
        return None
    lim = launch.block_or_limits(ctx.entry or ctx.function)
    if lim.exact:
        return lim.dims
    return "rows" if launch.warps_in_rows else None


@lru_cache(maxsize=4096)
def _spans(coeffs: tuple[int, int, int, int], dims: Dims) -> tuple[tuple[int, int], ...]:
    """Per warp of a `dims` block: the least and greatest `cx*x + cy*y + cz*z + cl*lane`
    over its lanes."""
    cx, cy, cz, cl = coeffs
    x_n, y_n, z_n = dims
    n = x_n * y_n * z_n
    out = []
    for first in range(0, n, WARP):
        vals = [cx * (t % x_n) + cy * (t // x_n % y_n) + cz * (t // (x_n * y_n)) + cl * (t % WARP)
                for t in range(first, min(first + WARP, n))]
        out.append((min(vals), max(vals)))
    return tuple(out)


def _residues(base: SI, d: int) -> tuple[int, int] | None:
    """(g, r): every base value is r modulo g, g dividing d."""
    b = base.singleton()
    if b is not None:
        return d, b % d
    if base.is_bottom:
        return None
    g = gcd(base.stride, d)
    return g, base.residue % g


def _fits(g: int, r: int, spans) -> bool:
    """Whether `base + f` stays in one block of d (g | d) for every base = r (mod g)
    and every warp's lane offsets f in [lo, hi]: (r + lo) mod g + (hi - lo) < g."""
    return all((r + lo) % g + (hi - lo) < g for lo, hi in spans)


def quotient_uniform(x: Value, d: int | None, w: int, signed: bool, ctx: Ctx,
                     truncating: bool = False) -> bool:
    """Whether `floor(x / d)`, x read as a (w, signed) integer, is one value in every lane
    of a warp (the module docstring). `truncating` (a signed `div`, which rounds toward
    zero): only where x is non-negative, so that it rounds down."""
    aff = x.aff
    if d is None or d < 2 or x.region is not None or aff.is_top or aff.is_bottom \
            or aff.is_uniform or aff.base.is_top:
        return False
    coeffs = dict(aff.coeffs)
    c = {n: coeffs[n].singleton() if n in coeffs else 0
         for n in ("tid.x", "tid.y", "tid.z", "laneid")}
    if None in c.values():
        return False
    span = aff.range(ctx.bounds)
    if not span.fits(w, signed) or truncating and (span.lo is None or span.lo < 0):
        return False  # the form is not the register's reading in this view
    layout = warp_rows(ctx)
    if layout is None:
        return False
    key = (c["tid.x"], c["tid.y"], c["tid.z"], c["laneid"])
    found = _residues(aff.base, d)
    if found is None:
        return False
    g, r = found
    if layout != "rows":
        return _fits(g, r, _spans(key, layout))
    # whole rows: lane l has tid.x = 32k + l, one tid.y and tid.z; what k, y, z add is
    # one unknown multiple of these per warp
    bounds = ctx.bounds
    for name, step in (("tid_x", WARP * c["tid.x"]), ("tid_y", c["tid.y"]),
                       ("tid_z", c["tid.z"])):
        if getattr(bounds, name).singleton() is None:
            g = gcd(g, step)
    lane = c["tid.x"] + c["laneid"]
    return _fits(g, r % g, ((min(0, 31 * lane), max(0, 31 * lane)),))


def per_warp(result: Value, x: Value, d: int | None, w: int, signed: bool,
             ctx: Ctx, truncating: bool = False) -> Value:
    """`result`, a function of floor(x / d), made warp-uniform when the quotient is
    (`quotient_uniform`); otherwise unchanged."""
    if result.is_uniform or not quotient_uniform(x, d, w, signed, ctx, truncating):
        return result
    return result.with_uniformity(True).reduce(ctx.bounds)


def low_zero_bits(mask: Value, w: int) -> int | None:
    """2^k for a known nonzero w-bit mask whose lowest set bit is bit k (`x & mask`
    depends only on floor(x / 2^k))."""
    m = mask.singleton()
    if m is None:
        return None
    m &= (1 << w) - 1
    return m & -m if m else None


# ---- shuffles --------------------------------------------------------------------------------
def broadcast(insn: ShflBase, s, ctx: Ctx) -> tuple[Value, Value] | None:
    """(d, p) of a `shfl.idx` that reads one lane for the whole warp, else None."""
    if insn.mode != "idx":
        return None
    b, c = (value_of(op, s, ctx, 32) for op in (insn.b, insn.c))
    cw = c.singleton()
    if not b.is_uniform or cw is None or (cw >> 8) & 31:
        return None  # a lane per sub-segment, or lanes that may read different lanes
    if isinstance(insn, ShflSync) and not value_of(insn.membermask, s, ctx, 32).is_uniform:
        return None
    lane = b.si.as_unsigned(32)
    lo, hi = lane.lo, lane.hi
    clamp = cw & 31
    if lane.is_bottom:
        return None
    if clamp == WARP - 1:  # `__shfl_sync`: no lane is past the clamp
        in_range = Tri.TRUE
    elif lo is not None and hi is not None and hi - lo < WARP:
        ok = {(v & 31) <= clamp for v in range(lo, hi + 1)}
        in_range = Tri.TRUE if ok == {True} else Tri.FALSE if ok == {False} else Tri.MAYBE
    else:
        in_range = Tri.MAYBE
    a = value_of(insn.a, s, ctx, 32)
    if in_range is Tri.FALSE:
        return a, Value.const(0)  # every lane keeps its own a
    d = Value.of_set(SI.full(32), uniform=in_range is Tri.TRUE or a.is_uniform)
    p = Value.const(1) if in_range is Tri.TRUE else Value.of_set(SI.range(0, 1), True)
    return d, p


def shuffled(insn: ShflBase, s, ctx: Ctx) -> tuple[Value, Value]:
    """(d, p) of any shuffle: a broadcast's, else another lane's value, unknown."""
    return broadcast(insn, s, ctx) or (TOP, TOP)


__all__ = ["quotient_uniform", "per_warp", "low_zero_bits", "broadcast", "shuffled",
           "warp_rows"]
