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

Costs depend on where lane 0's address falls, which is only known modulo the alignment
proved for it (`alignment`, a power-of-two congruence). `sectors` and `bank_ways` give
the worst case over the addresses that alignment allows; the `_range` forms give the
best case too, so a rule can tell "always" from "may".
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..domains.affine import ThreadBounds
from ..domains.align import Congruence
from ..domains.strided import StridedInterval as SI
from ..domains.value import Value

WARP_SIZE = 32
SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
# Costs repeat every 128 bytes (4 sectors, one pass over the 32 banks), so patterns of
# different warps are told apart by lane 0's address modulo 128 only.
GRANULE_BITS = 7
ASSUMED_ROWS = "ntid.x multiple of 32"
ASSUMED_FULL = "full warps"

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


@dataclass(frozen=True)
class WarpPattern:
    """Byte offsets of each lane's access from lane 0's address (None: no such lane).

    `uniform_base` is lane 0's address (the offset into the object when the address has
    one); `alignment` what is known of lane 0's absolute address, modulo 128 at most;
    `warps` the warps that share this pattern (empty: every warp, block unknown)."""

    offsets: tuple[int | None, ...]
    access_bytes: int = 4
    exact: bool = True
    uniform_base: SI = SI.const(0)
    alignment: Congruence = Congruence(GRANULE_BITS, 0)
    assumed: str | None = None
    warps: tuple[int, ...] = (0,)

    def lanes(self) -> tuple[int, ...]:
        """The lanes that exist."""
        return tuple(i for i, off in enumerate(self.offsets) if off is not None)

    @classmethod
    def strided(cls, stride: int, access_bytes: int = 4, count: int = WARP_SIZE) -> WarpPattern:
        """Lane i at `i * stride` bytes from an aligned base (textbook cases)."""
        offs = tuple(i * stride if i < count else None for i in range(WARP_SIZE))
        return cls(offs, access_bytes)


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
    cx, cy, cz = (coeffs.get(n, 0) for n in ("tid.x", "tid.y", "tid.z"))
    cl = coeffs.get("laneid", 0)
    values = [None if t is None else cx * t[0] + cy * t[1] + cz * t[2] + cl * i
              for i, t in enumerate(lanes(block, warp))]
    first = values[0]
    assert first is not None  # lane 0 of an existing warp exists
    lane0 = address.aff.base.shift(first)
    return WarpPattern(tuple(None if v is None else v - first for v in values), access_bytes,
                       True, lane0, _alignment(address, lane0, base_align), None, (warp,))


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
    groups: dict[tuple, WarpPattern] = {}
    for w in range(warp_count(block)):
        p = _exact(address, access_bytes, block, coeffs, w, base_align)
        key = (p.offsets, p.alignment)
        seen = groups.get(key)
        groups[key] = p if seen is None else replace(
            seen, warps=seen.warps + (w,), uniform_base=seen.uniform_base.join(p.uniform_base))
    return tuple(groups.values())


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


def _phase_lanes(n: int) -> int:
    """Lanes served per pass: 32 words per pass, so 8-byte accesses go in half-warps and
    16-byte ones in quarter-warps."""
    words = max(1, -(-n // BANK_BYTES))
    return max(1, WARP_SIZE // min(words, WARP_SIZE))


def _worst_bank(p: WarpPattern, r: int, n: int) -> BankConflict:
    per_phase = _phase_lanes(n)
    worst = BankConflict(0, None, (), 0)
    for phase in range(WARP_SIZE // per_phase):
        banks: dict[int, tuple[set[int], list[int]]] = {}
        for lane in range(phase * per_phase, (phase + 1) * per_phase):
            off = p.offsets[lane]
            if off is None:
                continue
            first, last = (r + off) // BANK_BYTES, (r + off + max(n, 1) - 1) // BANK_BYTES
            for word in range(first, last + 1):
                words, who = banks.setdefault(word % BANKS, (set(), []))
                words.add(word)  # one word read by many lanes is a broadcast
                who.append(lane)
        for bank, (words, who) in sorted(banks.items()):
            if len(words) > worst.ways:
                worst = BankConflict(len(words), bank, tuple(sorted(set(who))), phase)
    return worst


def bank_conflict(p: WarpPattern, access_bytes: int | None = None) -> BankConflict:
    """The worst shared-memory bank conflict (32 banks of 4 bytes) the alignment allows."""
    n = p.access_bytes if access_bytes is None else access_bytes
    known = p.alignment.bits >= GRANULE_BITS
    worst = max((_worst_bank(p, r, n) for r in _residues(p.alignment, BANK_BYTES)),
                key=lambda c: c.ways)
    if not known:
        return replace(worst, bank=None)
    # lane 0's word modulo 32 is known: turn the relative bank into the real one
    shift = (p.alignment.residue - p.alignment.residue % BANK_BYTES) // BANK_BYTES
    return replace(worst, bank=None if worst.bank is None else (worst.bank + shift) % BANKS)


def bank_ways(p: WarpPattern, access_bytes: int | None = None) -> int:
    """n of the n-way conflict: the most distinct words one bank serves in one phase
    (1 when conflict-free or a broadcast)."""
    return bank_conflict(p, access_bytes).ways


__all__ = ["WarpPattern", "BankConflict", "warp_pattern", "warp_patterns", "lanes",
           "warp_count", "sectors", "sector_range", "bank_conflict", "bank_ways",
           "WARP_SIZE", "SECTOR_BYTES", "BANKS", "BANK_BYTES", "ASSUMED_ROWS"]
