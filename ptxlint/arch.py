"""Per-target hardware facts the rules need (sources in docs/arch.md).

Every target ptxlint knows has 32-thread warps, 32 shared-memory banks of 4 bytes
(64-bit accesses served per half-warp, 128-bit per quarter-warp), and global memory
served in 32-byte sectors of 128-byte lines. What differs is the shared memory a block
may use.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

WARP_SIZE = 32
BANKS = 32
BANK_BYTES = 4
SECTOR_BYTES = 32
LINE_BYTES = 128
STATIC_SHARED_LIMIT = 48 * 1024  # static __shared__ per block, every architecture


def bank_phase_lanes(access_bytes: int) -> int:
    """Lanes of a warp a shared-memory access serves per pass (a phase): one pass
    reaches each of the 32 banks once, so 32 lanes for accesses of up to 4 bytes, 16
    (half-warps) for 8 bytes, 8 (quarter-warps) for 16."""
    words = max(1, -(-access_bytes // BANK_BYTES))
    return max(1, WARP_SIZE // min(words, WARP_SIZE))


@dataclass(frozen=True)
class Arch:
    name: str  # "sm_90"
    major: int
    minor: int
    max_shared_per_block: int  # with the opt-in carve-out (cudaFuncSetAttribute)
    warp_size: int = WARP_SIZE
    banks: int = BANKS
    bank_bytes: int = BANK_BYTES
    sector_bytes: int = SECTOR_BYTES
    line_bytes: int = LINE_BYTES
    static_shared_limit: int = STATIC_SHARED_LIMIT

    @property
    def compute_capability(self) -> str:
        return f"{self.major}.{self.minor}"


# Maximum shared memory per block in KiB, per compute capability
# (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability").
_SHARED_KIB = {
    (5, 0): 48, (5, 2): 48, (5, 3): 48, (6, 0): 48, (6, 1): 48, (6, 2): 48,
    (7, 0): 96, (7, 2): 96, (7, 5): 64, (8, 0): 163, (8, 6): 99, (8, 7): 163, (8, 9): 99,
    (9, 0): 227, (10, 0): 227, (10, 1): 227, (10, 3): 227, (11, 0): 227, (12, 0): 99,
    (12, 1): 99,
}
DEFAULT = "sm_90"


def get(name: str | None) -> Arch:
    """The architecture for `sm_90`, `sm_90a`, `compute_80`, `sm_120f`; the default
    (sm_90) for None. Unknown names raise ValueError."""
    name = name or DEFAULT
    m = re.fullmatch(r"(?:sm|compute)_(\d+?)(\d)[af]?", name)
    if not m:
        raise ValueError(f"unknown architecture '{name}' (expected e.g. sm_90)")
    major, minor = int(m.group(1)), int(m.group(2))
    kib = _SHARED_KIB.get((major, minor))
    if kib is None:
        known = ", ".join(f"sm_{a}{b}" for a, b in sorted(_SHARED_KIB))
        raise ValueError(f"unknown architecture '{name}' (known: {known})")
    return Arch(f"sm_{major}{minor}", major, minor, kib * 1024)


def known() -> list[str]:
    return [f"sm_{a}{b}" for a, b in sorted(_SHARED_KIB)]
