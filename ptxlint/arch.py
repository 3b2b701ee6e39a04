"""Per-target hardware facts the rules need (sources in docs/arch.md): the one place
they live. Rules read them from `RuleContext.arch`, never from the constants.

Every target ptxlint knows has 32-thread warps, 32 shared-memory banks of 4 bytes
(64-bit accesses served per half-warp, 128-bit per quarter-warp), and global memory
served in 32-byte sectors of 128-byte lines. What differs is the shared memory a block
may use and the instructions the target has (`FEATURES`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

WARP_SIZE = 32
BANKS = 32
BANK_BYTES = 4
SECTOR_BYTES = 32
LINE_BYTES = 128
STATIC_SHARED_LIMIT = 48 * 1024  # static .shared per block, every architecture (ptxas)


def bank_phase_lanes(access_bytes: int, banks: int = BANKS, bank_bytes: int = BANK_BYTES,
                     warp_size: int = WARP_SIZE) -> int:
    """Lanes of a warp a shared-memory access serves per pass (a phase): one pass
    reaches each bank once, so with 32 banks of 4 bytes 32 lanes for accesses of up to
    4 bytes, 16 (half-warps) for 8 bytes, 8 (quarter-warps) for 16."""
    words = max(1, -(-access_bytes // bank_bytes))
    return max(1, min(warp_size, banks // words))


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
    variant: str = ""  # "a": arch-specific features (sm_90a), "f": family ones (sm_100f)
    # where the target came from: "--arch", ".target", or "default" (neither given, or a
    # target ptxlint has no figures for): rules that judge the target itself need one
    origin: str = field(default="default", compare=False)

    @property
    def compute_capability(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def target(self) -> str:
        """The target as PTX spells it, with its suffix: `sm_90a`."""
        return self.name + self.variant

    def phase_lanes(self, access_bytes: int) -> int:
        """`bank_phase_lanes` with this target's banks and warp size."""
        return bank_phase_lanes(access_bytes, self.banks, self.bank_bytes, self.warp_size)

    def lacks(self, opcode: str) -> Feature | None:
        """The most demanding feature of the dotted opcode (`wgmma.fence.sync.aligned`)
        this target does not have; None when it has them all (or the opcode needs none
        that `FEATURES` knows)."""
        key = (self.target, self.major, self.minor, opcode)
        if key not in _LACKS:  # once per target and opcode: every instruction asks
            missing = [f for f in FEATURES if f.matches(opcode) and not f.available(self)]
            _LACKS[key] = max(missing, key=lambda f: (bool(f.targets), f.since), default=None)
        return _LACKS[key]


# Maximum shared memory per block in KiB, per compute capability
# (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability").
_SHARED_KIB = {
    (5, 0): 48, (5, 2): 48, (5, 3): 48, (6, 0): 48, (6, 1): 48, (6, 2): 48,
    (7, 0): 96, (7, 2): 96, (7, 5): 64, (8, 0): 163, (8, 6): 99, (8, 7): 163, (8, 9): 99,
    (9, 0): 227, (10, 0): 227, (10, 1): 227, (10, 3): 227, (11, 0): 227, (12, 0): 99,
    (12, 1): 99,
}
DEFAULT = "sm_90"


def get(name: str | None, origin: str = "default") -> Arch:
    """The architecture for `sm_90`, `sm_90a`, `compute_80`, `sm_120f`; the default
    (sm_90) for None. Unknown names raise ValueError. `origin`: where the name came from
    (`Arch.origin`)."""
    if name is None:
        name, origin = DEFAULT, "default"
    m = re.fullmatch(r"(?:sm|compute)_(\d+?)(\d)([af]?)", name)
    if not m:
        raise ValueError(f"unknown architecture '{name}' (expected e.g. sm_90)")
    major, minor = int(m.group(1)), int(m.group(2))
    kib = _SHARED_KIB.get((major, minor))
    if kib is None:
        known = ", ".join(f"sm_{a}{b}" for a, b in sorted(_SHARED_KIB))
        raise ValueError(f"unknown architecture '{name}' (known: {known})")
    return Arch(f"sm_{major}{minor}", major, minor, kib * 1024, variant=m.group(3),
                origin=origin)


def known() -> list[str]:
    return [f"sm_{a}{b}" for a, b in sorted(_SHARED_KIB)]


# ---- which instructions each target has ------------------------------------------------
@dataclass(frozen=True)
class Feature:
    """An instruction, or a form of one, that only some targets have (the PTX ISA's
    "Target ISA notes"). `pattern` is searched in the dotted opcode
    (`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`); `since` is the first compute
    capability that has it; `targets`, when given, are the only targets that do: the
    arch-specific (`sm_90a`) and family-specific (`sm_100f`) features, which later GPUs
    do not inherit."""

    name: str
    pattern: str
    since: tuple[int, int]
    targets: frozenset[str] = frozenset()

    def matches(self, opcode: str) -> bool:
        return _compiled(self.pattern).search(opcode) is not None

    def available(self, arch: Arch) -> bool:
        if self.targets:
            return arch.target in self.targets
        return (arch.major, arch.minor) >= self.since

    @property
    def minimum(self) -> str:
        """The first target that has it (`sm_80`, `sm_90a`)."""
        if self.targets:
            return min(self.targets, key=lambda t: (int(t[3:-1]), t[-1] != "a"))
        return "sm_{}{}".format(*self.since)


_PATTERNS: dict[str, re.Pattern] = {}
_LACKS: dict[tuple, "Feature | None"] = {}  # `Arch.lacks`, per target and opcode


def _compiled(pattern: str) -> re.Pattern:
    if pattern not in _PATTERNS:
        _PATTERNS[pattern] = re.compile(pattern)
    return _PATTERNS[pattern]


def _suffixed(*ccs: int, suffixes: str = "af") -> frozenset[str]:
    return frozenset(f"sm_{cc}{s}" for cc in ccs for s in suffixes)


# A form listed twice (`add.bf16` under `.bf16` and under `add/sub/mul .bf16`) is judged
# by its most demanding entry. Each entry is checked against ptxas by
# tests/test_arch_features.py (a one-instruction kernel below and at its minimum).
_ACCEL = _suffixed(90, suffixes="a") | _suffixed(100, 101, 103, 110, 120, 121)
FEATURES: tuple[Feature, ...] = (
    Feature("match.sync", r"^match\.", (7, 0)),
    Feature("nanosleep", r"^nanosleep\b", (7, 0)),
    Feature("atom/red .add.f64", r"^(atom|red)\b.*\.add\b.*\.f64\b", (6, 0)),
    Feature("atom/red .add.f16", r"^(atom|red)\b.*\.add\b.*\.f16(x2)?\b", (7, 0)),
    Feature("atom/red .add.bf16", r"^(atom|red)\b.*\.add\b.*\.bf16(x2)?\b", (9, 0)),
    Feature("atom/red on vectors", r"^(atom|red)\b.*\.v[248]\b", (9, 0)),
    Feature("ldmatrix", r"^ldmatrix\b", (7, 5)),
    Feature("movmatrix", r"^movmatrix\b", (7, 5)),
    Feature("stmatrix", r"^stmatrix\b", (9, 0)),
    Feature("tanh", r"^tanh\b", (7, 5)),
    Feature("mma .m16n8k8", r"^mma\b.*\.m16n8k8\b", (7, 5)),
    Feature("mma .m8n8k16", r"^mma\b.*\.m8n8k16\b", (7, 5)),
    Feature("mma .m16n8k16", r"^mma\b.*\.m16n8k16\b", (8, 0)),
    Feature("mma .m16n8k32", r"^mma\b.*\.m16n8k32\b", (8, 0)),
    Feature("mma .m8n8k4 on .f64", r"^mma\b.*\.m8n8k4\b.*\.f64\b", (8, 0)),
    Feature("mma on FP8 (.e4m3/.e5m2)", r"^mma\b.*\.(e4m3|e5m2)\b", (8, 9)),
    Feature(".bf16 types", r"\.bf16(x2)?\b", (8, 0)),
    Feature("add/sub/mul .bf16", r"^(add|sub|mul)\b.*\.bf16(x2)?\b", (9, 0)),
    Feature("ex2 .bf16", r"^ex2\b.*\.bf16(x2)?\b", (9, 0)),
    Feature(".tf32 types", r"\.tf32\b", (8, 0)),
    Feature("cvt .f16x2.f32", r"^cvt\b.*\.f16x2\.f32\b", (8, 0)),
    Feature("cvt to .e4m3x2/.e5m2x2", r"^cvt\b.*\.(e4m3x2|e5m2x2)\b", (8, 9)),
    Feature("redux.sync", r"^redux\.sync\b", (8, 0)),
    Feature("redux.sync .f32", r"^redux\.sync\b.*\.f32\b", (10, 0),
            _suffixed(100, 101, 103)),
    Feature("cp.async", r"^cp\.async\.(?!bulk\b)", (8, 0)),
    Feature("cp.async.bulk", r"^cp\.async\.bulk\b", (9, 0)),
    Feature("cp.reduce.async.bulk", r"^cp\.reduce\.async\.bulk\b", (9, 0)),
    Feature("mbarrier", r"^mbarrier\b", (8, 0)),
    Feature("mbarrier.try_wait", r"^mbarrier\.try_wait\b", (9, 0)),
    Feature("mbarrier .expect_tx", r"^mbarrier\b.*\.expect_tx\b", (9, 0)),
    Feature("createpolicy", r"^createpolicy\b", (8, 0)),
    Feature("elect.sync", r"^elect\.sync\b", (9, 0)),
    Feature("fence.proxy.async", r"^fence\.proxy\.async\b", (9, 0)),
    Feature("fence.mbarrier_init", r"^fence\.mbarrier_init\b", (9, 0)),
    Feature("barrier.cluster", r"^barrier\.cluster\b", (9, 0)),
    Feature("mapa", r"^mapa\b", (9, 0)),
    Feature("getctarank", r"^getctarank\b", (9, 0)),
    Feature("griddepcontrol", r"^griddepcontrol\b", (9, 0)),
    Feature("st.async", r"^st\.async\b", (9, 0)),
    Feature("red.async", r"^red\.async\b", (9, 0)),
    Feature("multimem", r"^multimem\b", (9, 0)),
    Feature("wgmma", r"^wgmma\b", (9, 0), frozenset({"sm_90a"})),
    Feature("setmaxnreg", r"^setmaxnreg\b", (9, 0), _ACCEL),
    Feature("tensormap.replace", r"^tensormap\.replace\b", (9, 0), _ACCEL),
    Feature("tcgen05", r"^tcgen05\b", (10, 0), _suffixed(100, 101, 103, 110)),
    Feature("clusterlaunchcontrol", r"^clusterlaunchcontrol\b", (10, 0)),
)
