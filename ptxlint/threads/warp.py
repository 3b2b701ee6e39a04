"""The warp access pattern of a memory instruction: which bytes the 32 lanes of one warp
touch, relative to the address of lane 0, and what that costs (sectors, bank conflicts).

Warp model (as in `launch.py`): threads are numbered linearly,
``tid.x + ntid.x * (tid.y + ntid.y * tid.z)``; warp ``w`` holds linear ids ``32w ..
32w+31`` and ``%laneid`` is the linear id modulo 32. So a warp of a 16x16 block spans two
rows (lane i: ``tid.x = i % 16``, ``tid.y = 2w + i // 16``) and a block of 48 threads has a
second warp of 16 lanes.

An address ``base + cx*tid.x + cy*tid.y + cz*tid.z + cl*laneid`` with known integer
coefficients and a known block shape gives an `exact` pattern. With the block shape
unknown the pattern is computed *assuming ntid.x is a multiple of 32* (each warp is 32
consecutive ``tid.x`` of one row: the usual 1D launch); `assumed` says so, so a rule can
say it too. Unknown coefficients or a non-affine address give no pattern (None).

Only the lanes that run the access count: a pattern's offsets are None for lanes that
do not exist or do not take part (`restrict`, a guard's selection), and are relative to
the first lane that does (lane 0 when every lane takes part). `lane_patterns` builds the
patterns of a whole block from each thread's own offset (`active_lanes.BlockLanes`),
for addresses the lane form cannot express (`tid / 16`, `tid & 31`, swizzles).

Costs depend on where that first lane's address falls, which is only known modulo the
alignment proved for it (`alignment`, a power-of-two congruence). `sectors` and
`bank_ways` give the worst case over the addresses that alignment allows; the `_range`
forms give the best case too, so a rule can tell "always" from "may".
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from ..arch import BANK_BYTES, BANKS, LINE_BYTES, SECTOR_BYTES, WARP_SIZE, bank_phase_lanes
from ..domains.affine import ThreadBounds
from ..domains.align import Congruence
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value

if TYPE_CHECKING:
    import numpy as np

# Costs repeat every 128 bytes (4 sectors, one pass over the 32 banks), so patterns of
# different warps are told apart by lane 0's address modulo 128 only.
GRANULE_BITS = LINE_BYTES.bit_length() - 1  # 128-byte lines: costs repeat every line
ASSUMED_ROWS = "ntid.x multiple of 32"
ASSUMED_FULL = "full warps"
MAX_PATTERNS = 4096  # distinct warp patterns of one access that are costed one by one
FEW_ROWS = 64  # `unique_rows` of at most this many rows goes through a dict

Dims = tuple[int, int, int]
Lane = tuple[int, int, int]


def warp_count(block: Dims) -> int:
    x, y, z = block
    return -(-(x * y * z) // WARP_SIZE)


def lanes(block: Dims, warp: int) -> tuple[Lane | None, ...]:
    """The (tid.x, tid.y, tid.z) of each lane of `warp`; None past the end of the block."""
    x, y, z = block
    if not 0 <= warp < warp_count(block):
        raise ValueError(f"a block of {x}x{y}x{z} threads has no warp {warp}")
    out: list[Lane | None] = []
    for i in range(WARP_SIZE):
        linear = WARP_SIZE * warp + i
        out.append((linear % x, linear // x % y, linear // (x * y)) if linear < x * y * z
                   else None)
    return tuple(out)


_lanes = lru_cache(maxsize=1 << 12)(lanes)  # every access of a kernel asks for the same warps


@dataclass(frozen=True)
class WarpPattern:
    """Byte offsets of each lane's access from the first active lane's address (None: no
    such lane, or a lane that does not run the access).

    `uniform_base` is that lane's address (the offset into the object when the address
    has one); `alignment` what is known of its absolute address, modulo 128 at most;
    `warps` the warps that share this pattern (empty: every warp, block unknown);
    `present` the lanes the warp has, running the access or not (0: those with an
    offset), which the ideal sector count of a request is measured by."""

    offsets: tuple[int | None, ...]
    access_bytes: int = 4
    exact: bool = True
    uniform_base: SI = SI.const(0)
    alignment: Congruence = Congruence(GRANULE_BITS, 0)
    assumed: str | None = None
    warps: tuple[int, ...] = (0,)
    present: int = 0

    def lanes(self) -> tuple[int, ...]:
        """The lanes that run the access."""
        return tuple(i for i, off in enumerate(self.offsets) if off is not None)

    @property
    def size(self) -> int:
        """The lanes the warp has (`present`)."""
        return self.present or len(self.lanes())

    @classmethod
    def strided(cls, stride: int, access_bytes: int = 4, count: int = WARP_SIZE) -> WarpPattern:
        """Lane i at `i * stride` bytes from an aligned base (textbook cases)."""
        offs = tuple(i * stride if i < count else None for i in range(WARP_SIZE))
        return cls(offs, access_bytes)


def restrict(p: WarpPattern, active: Sequence[bool]) -> WarpPattern | None:
    """`p` with only the lanes `active` selects (None when none is left), rebased on the
    first of them."""
    offs = [o if a else None for o, a in zip(p.offsets, active)]
    ref = next((o for o in offs if o is not None), None)
    if ref is None:
        return None
    if not ref:
        return replace(p, offsets=tuple(offs), present=p.size)
    return replace(p, offsets=tuple(None if o is None else o - ref for o in offs),
                   uniform_base=p.uniform_base.shift(ref), present=p.size,
                   alignment=_cap(p.alignment.add(Congruence.const(ref))))


def _cap(c: Congruence) -> Congruence:
    return c if c.is_bottom else Congruence(min(c.bits, GRANULE_BITS), c.residue)


_NONE = -(1 << 63)  # no lane, or a lane that does not take part (int64's least)


def lane_patterns(start: np.ndarray, mask: np.ndarray, access_bytes: int, bits: int,
                  align: Callable[[int], Congruence]
                  ) -> tuple[list[WarpPattern], np.ndarray] | None:
    """The distinct warp patterns of a block whose thread t accesses byte offset
    `start[row, t]` when `mask[row, t]` (one row per assignment of the values the
    addresses depend on). The absolute address is known modulo 2^`bits` from the
    offset; `align(residue)` turns the first lane's offset modulo 2^min(bits, 7) into
    its alignment. Returns the patterns and, per row and warp, the index of its pattern
    (-1: no lane of the warp runs the access); None past `MAX_PATTERNS` patterns."""
    import numpy as np  # noqa: PLC0415 -- numpy only for lane-by-lane patterns
    rows, n = mask.shape
    nw = -(-n // WARP_SIZE)
    if nw * WARP_SIZE != n:
        pad = ((0, 0), (0, nw * WARP_SIZE - n))
        start, mask = np.pad(start, pad), np.pad(mask, pad)
    s = start.reshape(rows * nw, WARP_SIZE)
    m = mask.reshape(rows * nw, WARP_SIZE)
    live = np.flatnonzero(m.any(axis=1))
    ids = np.full(rows * nw, -1, np.int64)
    if not live.size:
        return [], ids.reshape(rows, nw)
    s, m = s[live], m[live]
    base = s[np.arange(live.size), np.argmax(m, axis=1)]
    present = np.minimum(WARP_SIZE, n - WARP_SIZE * (live % nw))
    key = np.concatenate([np.where(m, s - base[:, None], _NONE),
                          (base % (1 << min(bits, GRANULE_BITS)))[:, None],
                          present[:, None]], axis=1)
    uniq, inverse = unique_rows(key)
    if len(uniq) > MAX_PATTERNS:
        return None
    ids[live] = inverse
    if len(uniq) == 1:  # the usual block: every warp alike
        groups = [np.arange(live.size)]
    else:
        order = np.argsort(inverse, kind="stable")
        cuts = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
        groups = [order[cuts[k]:cuts[k + 1]] for k in range(len(uniq))]
    warp = live % nw
    out = []
    for row, who in zip(uniq, groups):
        bases = base[who]
        lo, hi = int(bases.min()), int(bases.max())
        step = int(np.gcd.reduce(bases - lo)) if hi > lo else 0
        *offs, residue, present = row.tolist()
        out.append(WarpPattern(tuple(None if x == _NONE else x for x in offs), access_bytes,
                               True, SI.range(lo, hi, step) if step else SI.const(lo),
                               _cap(align(residue)), None,
                               tuple(sorted(set(warp[who].tolist()))), present))
    return out, ids.reshape(rows, nw)


def _splitmix(n: int, x: int = 19) -> list[int]:
    out = []
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) % (1 << 64)
        z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 % (1 << 64)
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB % (1 << 64)
        out.append(((z ^ (z >> 31)) >> 2) | 1)  # odd, below 2^62
    return out


@lru_cache(maxsize=1)
def _mix() -> np.ndarray:
    import numpy as np  # noqa: PLC0415
    return np.array(_splitmix(64), np.int64)  # row hash multipliers


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(a, axis=0, return_inverse=True)` for an int64 matrix, first through a
    hash of each row (sorting whole rows is slow); exact: a collision falls back."""
    import numpy as np  # noqa: PLC0415
    n, k = a.shape
    mix = _mix()
    if n == 1 or (n and (a == a[0]).all()):  # one row, or rows all alike (one cheap test)
        return a[:1], np.zeros(n, np.intp)
    if n == 0 or k > len(mix):
        uniq, inverse = np.unique(a, axis=0, return_inverse=True)
        return uniq, inverse.reshape(-1)
    with np.errstate(over="ignore"):
        h = (a * mix[:k]).sum(axis=1)
    if n <= FEW_ROWS:  # np.unique's sorting costs more than a dict of so few hashes
        hashes = h.tolist()
        seen: dict[int, int] = {}
        for i, x in enumerate(hashes):
            seen.setdefault(x, i)
        rank = {x: r for r, x in enumerate(sorted(seen))}  # np.unique's order
        inverse = np.array([rank[x] for x in hashes], np.intp)
        first = [seen[x] for x in sorted(seen)]
    else:
        _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    uniq = a[first]
    if not (a == uniq[inverse]).all():
        uniq, inverse = np.unique(a, axis=0, return_inverse=True)
        return uniq, inverse.reshape(-1)
    return uniq, inverse


def _coefficients(address: Value) -> dict[str, int] | None:
    aff = address.aff
    if aff.is_top or aff.is_bottom:
        return None
    known = {name: c.singleton() for name, c in aff.coeffs}
    return None if any(v is None for v in known.values()) else known  # type: ignore[return-value]


def _alignment(address: Value, lane0: SI, base_align: int) -> Congruence:
    """What is known of lane 0's absolute address modulo 2^GRANULE_BITS."""
    cong = Congruence.of_interval(lane0)
    both = cong.meet(address.cong)
    cong = cong if both.is_bottom else both
    if address.region is not None and address.region.obj is not None:
        # an offset into an object: add the object's own alignment
        cong = cong.add(Congruence(max(0, base_align.bit_length() - 1), 0))
    return Congruence(min(cong.bits, GRANULE_BITS), cong.residue)


def warp_pattern(address: Value, access_bytes: int, block: Dims | None,
                 bounds: ThreadBounds, warp: int = 0, base_align: int = 1) -> WarpPattern | None:
    """The pattern of `warp` (see the module docstring); `block` is the exact shape or
    None; `base_align` the alignment of the object an offset-address starts from."""
    coeffs = _coefficients(address)
    if coeffs is None:
        return None
    if block is not None:
        return _exact(address, access_bytes, block, coeffs, warp, base_align)
    return _assumed(address, access_bytes, bounds, coeffs, base_align, (warp,))


def _exact(address: Value, access_bytes: int, block: Dims, coeffs: dict[str, int],
           warp: int, base_align: int) -> WarpPattern:
    offsets, lane0, alignment = _exact_parts(address, block, coeffs, warp, base_align)
    return WarpPattern(offsets, access_bytes, True, lane0, alignment, None, (warp,))


def _exact_parts(address: Value, block: Dims, coeffs: dict[str, int], warp: int,
                 base_align: int) -> tuple[tuple[int | None, ...], SI, Congruence]:
    """`_exact`'s offsets, lane 0's address and its alignment."""
    cx, cy, cz = (coeffs.get(n, 0) for n in ("tid.x", "tid.y", "tid.z"))
    cl = coeffs.get("laneid", 0)
    values = [None if t is None else cx * t[0] + cy * t[1] + cz * t[2] + cl * i
              for i, t in enumerate(_lanes(tuple(block), warp))]
    first = values[0]
    assert first is not None  # lane 0 of an existing warp exists
    lane0 = address.aff.base.shift(first)
    return (tuple(None if v is None else v - first for v in values), lane0,
            _alignment(address, lane0, base_align))


def _assumed(address: Value, access_bytes: int, bounds: ThreadBounds, coeffs: dict[str, int],
             base_align: int, warps: tuple[int, ...]) -> WarpPattern | None:
    """Block unknown: lane i is tid.x = 32k + i of one row, k, tid.y, tid.z uniform."""
    cx, cy, cz = (coeffs.get(n, 0) for n in ("tid.x", "tid.y", "tid.z"))
    cl = coeffs.get("laneid", 0)
    x_hi = bounds.tid_x.hi
    rows = x_hi is not None and x_hi + 1 >= WARP_SIZE
    if not rows and (cx or cy or cz):
        return None  # rows shorter than a warp, of unknown length: lanes wrap anywhere
    lane0 = address.aff.base
    if rows:
        k = SI.range(0, (x_hi + 1) // WARP_SIZE - 1)
        for c, r in ((cx * WARP_SIZE, k), (cy, bounds.tid_y), (cz, bounds.tid_z)):
            lane0 = lane0.math_add(r.scale(c))
    offsets = tuple((cx + cl) * i for i in range(WARP_SIZE))
    return WarpPattern(offsets, access_bytes, False, lane0,
                       _alignment(address, lane0, base_align),
                       ASSUMED_ROWS if rows else ASSUMED_FULL, warps)


def warp_patterns(address: Value, access_bytes: int, block: Dims | None,
                  bounds: ThreadBounds, base_align: int = 1) -> tuple[WarpPattern, ...]:
    """The distinct patterns over the warps of the block, each with the warps sharing
    it (their `uniform_base` joined); empty when the address has no known pattern."""
    coeffs = _coefficients(address)
    if coeffs is None:
        return ()
    if block is None:
        one = _assumed(address, access_bytes, bounds, coeffs, base_align, ())
        return () if one is None else (one,)
    groups: dict[tuple, list] = {}  # [lane 0's joined addresses, warps]: one object per group
    for w in range(warp_count(block)):
        offsets, lane0, alignment = _exact_parts(address, block, coeffs, w, base_align)
        seen = groups.get(key := (offsets, alignment))
        if seen is None:
            groups[key] = [lane0, [w]]
        else:
            seen[0] = seen[0].join(lane0)
            seen[1].append(w)
    return tuple(WarpPattern(offsets, access_bytes, True, base, alignment, None, tuple(warps))
                 for (offsets, alignment), (base, warps) in groups.items())


# ---- costs ------------------------------------------------------------------------------------
def _residues(alignment: Congruence, modulus: int) -> list[int]:
    """Lane 0's address modulo `modulus` (a power of two) as the alignment allows."""
    if alignment.is_bottom:
        return [0]
    step = 1 << min(alignment.bits, modulus.bit_length() - 1)
    return sorted({(alignment.residue + j * step) % modulus for j in range(modulus // step)})


def _sector_count(p: WarpPattern, r: int, sector: int, n: int) -> int:
    touched: set[int] = set()
    for off in p.offsets:
        if off is not None:
            first, last = (r + off) // sector, (r + off + max(n, 1) - 1) // sector
            touched.update(range(first, last + 1))
    return len(touched)


def sector_range(p: WarpPattern, sector_bytes: int = SECTOR_BYTES,
                 access_bytes: int | None = None) -> tuple[int, int]:
    """(fewest, most) distinct `sector_bytes` sectors the warp touches."""
    n = p.access_bytes if access_bytes is None else access_bytes
    counts = [_sector_count(p, r, sector_bytes, n) for r in _residues(p.alignment, sector_bytes)]
    return min(counts), max(counts)


def sectors(p: WarpPattern, sector_bytes: int = SECTOR_BYTES,
            access_bytes: int | None = None) -> int:
    """Distinct sectors touched, in the worst case the alignment allows (stride-1 floats
    from an aligned base: 4; stride 32 floats: 32)."""
    return sector_range(p, sector_bytes, access_bytes)[1]


@dataclass(frozen=True)
class BankConflict:
    """The worst bank of the worst phase: `ways` distinct words in `bank` (None when the
    base's bank is unknown: then relative to lane 0's), read by `lanes`."""

    ways: int
    bank: int | None
    lanes: tuple[int, ...]
    phase: int


def _worst_bank(offsets: tuple[int | None, ...], r: int, n: int, banks: int,
                bank_bytes: int) -> BankConflict:
    per_phase = bank_phase_lanes(n, banks, bank_bytes)
    worst = BankConflict(0, None, (), 0)
    for phase in range(WARP_SIZE // per_phase):
        served: dict[int, tuple[set[int], list[int]]] = {}
        for lane in range(phase * per_phase, (phase + 1) * per_phase):
            off = offsets[lane]
            if off is None:
                continue
            first, last = (r + off) // bank_bytes, (r + off + max(n, 1) - 1) // bank_bytes
            for word in range(first, last + 1):
                words, who = served.setdefault(word % banks, (set(), []))
                words.add(word)  # one word read by many lanes is a broadcast
                who.append(lane)
        for bank, (words, who) in sorted(served.items()):
            if len(words) > worst.ways:
                worst = BankConflict(len(words), bank, tuple(sorted(set(who))), phase)
    return worst


def bank_conflict(p: WarpPattern, access_bytes: int | None = None, banks: int = BANKS,
                  bank_bytes: int = BANK_BYTES) -> BankConflict:
    """The worst shared-memory bank conflict the alignment allows, with `banks` banks
    of `bank_bytes` bytes (the target's: `Arch.banks`, `Arch.bank_bytes`)."""
    n = p.access_bytes if access_bytes is None else access_bytes
    return _bank_conflict(p.offsets, p.alignment, n, banks, bank_bytes)


@lru_cache(maxsize=1 << 12)  # the accesses and warps of a kernel share few patterns
def _bank_conflict(offsets: tuple[int | None, ...], alignment: Congruence, n: int, banks: int,
                   bank_bytes: int) -> BankConflict:
    known = alignment.bits >= GRANULE_BITS
    worst = max((_worst_bank(offsets, r, n, banks, bank_bytes)
                 for r in _residues(alignment, bank_bytes)), key=lambda c: c.ways)
    if not known:
        return replace(worst, bank=None)
    # lane 0's word modulo 32 is known: turn the relative bank into the real one
    shift = (alignment.residue - alignment.residue % bank_bytes) // bank_bytes
    return replace(worst, bank=None if worst.bank is None else (worst.bank + shift) % banks)


def bank_ways(p: WarpPattern, access_bytes: int | None = None) -> int:
    """n of the n-way conflict: the most distinct words one bank serves in one phase
    (1 when conflict-free or a broadcast)."""
    return bank_conflict(p, access_bytes).ways


__all__ = ["WarpPattern", "BankConflict", "warp_pattern", "warp_patterns", "lanes",
           "restrict", "lane_patterns", "unique_rows", "MAX_PATTERNS",
           "warp_count", "sectors", "sector_range", "bank_conflict", "bank_ways",
           "ASSUMED_ROWS"]
