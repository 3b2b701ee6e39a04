"""The kernels the soundness suite runs, with launches and concrete inputs.

Samples (`ptx_samples/**/*.ptx` with a `// ptxlint: launch ...` line): the launch line
gives block, grid, dynamic shared memory, scalar values and buffer sizes. Inputs:

- a 64-bit parameter without a value is a buffer: `buffer.NAME` bytes, else
  `default_buffer_bytes` (64 bytes per thread of the grid, at least 1 MiB), filled
  with the words `(7*i + 3) % 256` (small integers: as floats, harmless denormals);
  the lint is told every buffer's size, so both sides see the same extents;
- a scalar without a value gets each of `INT_CHOICES` (one case per choice), and the
  lint is *not* told it: the analysis must hold for every value.

Pricing kernels (`pricing_kernels.catalog.production_launches`, and the deliberately
flawed twins): their real launches, with small path counts, linted with the values the
pre-launch hook passes (scalars and buffer sizes).
"""
from __future__ import annotations

import re
from dataclasses import replace
from itertools import product
from pathlib import Path

import numpy as np

from ..ir.build import parse_module
from ..ir.module import Function
from ..launch import LaunchConfig
from .case import Case

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ptx_samples"
LAUNCH_LINE = re.compile(r"//\s*ptxlint:\s*launch\s+(.*)$", re.M)
INT_CHOICES = (1, 33)  # odd on purpose: misaligned offsets, strides that share no sector
FLOAT_CHOICE = 1.5
PRICING_PATHS = 4096
PRICING_ARCH = "sm_80"


def launch_line(text: str) -> LaunchConfig | None:
    m = LAUNCH_LINE.search("\n".join(text.splitlines()[:40]))
    return LaunchConfig.parse(m.group(1).strip()) if m else None


def sample_paths() -> list[Path]:
    return sorted(p for p in SAMPLES.rglob("*.ptx")
                  if ".cache" not in p.parts and launch_line(p.read_text()) is not None)


def default_buffer_bytes(launch: LaunchConfig) -> int:
    threads = 1
    for d in (*(launch.grid or (1,)), *(launch.block or (1,))):
        threads *= d
    return max(1 << 20, 64 * threads)


def fill(nbytes: int) -> np.ndarray:
    words = ((np.arange(-(-nbytes // 4), dtype=np.uint32) * 7 + 3) % 256).astype(np.uint32)
    return words.view(np.uint8)[:nbytes].copy()


def _given(table: dict, name: str, index: int):
    return table.get(name, table.get(index))


def _is_buffer(p) -> bool:
    return p.space == "param" and not p.dims and p.type.bits == 64 and \
        p.type.kind.name != "FLOAT"


def sample_cases(path: Path) -> list[Case]:
    """One case per kernel of the sample and per choice of its unspecified scalars."""
    text = path.read_text()
    launch = launch_line(text)
    if launch is None:
        return []
    module = parse_module(text, str(path)).module
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    out = []
    for fn in module.entries:
        out += _kernel_cases(rel, text, fn, launch)
    return out


def _kernel_cases(rel: str, text: str, fn: Function, launch: LaunchConfig) -> list[Case]:
    args, extents, free = {}, dict(launch.extents), []
    for i, p in enumerate(fn.params):
        value = _given(launch.params, p.name, i)
        if value is not None:
            args[i] = value
        elif _is_buffer(p):
            size = _given(launch.extents, p.name, i) or default_buffer_bytes(launch)
            args[i] = fill(size)
            if _given(launch.extents, p.name, i) is None:
                extents[i] = size
        elif p.dims:
            args[i] = bytes(p.byte_size or 0)
        else:
            free.append((i, p))
    told = replace(launch, extents=extents)
    choices = [[FLOAT_CHOICE] if p.type.kind.name == "FLOAT" else list(INT_CHOICES)
               for _, p in free]
    cases = []
    for combo in product(*choices):
        mine = dict(args)
        mine.update({i: v for (i, _), v in zip(free, combo)})
        tag = "".join(f" {p.name}={v}" for (_, p), v in zip(free, combo))
        cases.append(Case(f"{rel}:{fn.name}{tag}", text, fn.name, told.grid or (1, 1, 1),
                          told.block or (1, 1, 1), mine, told, told.dynamic_smem or 0,
                          path=rel))
    return cases


def all_sample_cases() -> list[Case]:
    return [c for p in sample_paths() for c in sample_cases(p)]




# ---- pricing kernels -------------------------------------------------------------------------
def pricing_launches(paths: int = PRICING_PATHS) -> list[tuple[str, object]]:
    """(name, `pricing_kernels.catalog.Launch`): every production launch with `paths`
    paths, and the deliberately flawed twins (`kernels/flawed/`) in the launches their
    tests use."""
    from pricing_kernels.catalog import BLOCK, Buffer, Launch, Scalar, production_launches

    out = list(production_launches(paths))
    blocks, draws, n = 4, 16, 4 * BLOCK
    out.append(("flawed/aos_state", Launch(
        "flawed/aos_state.cu", {"BLOCK": BLOCK}, "lcg_raw_aos", blocks, BLOCK, [
            Buffer("out", np.zeros(draws * blocks * BLOCK, np.uint32), output=True),
            Buffer("state", fill(12 * blocks * BLOCK).view(np.uint32), output=True),
            Scalar("draws", draws)])))
    out.append(("flawed/box_muller_conflict", Launch(
        "flawed/box_muller_conflict.cu", {"BLOCK": BLOCK}, "normals_paired_rows", n // BLOCK,
        BLOCK, [Buffer("out", np.zeros(4 * n, np.float32), output=True), Scalar("n", n),
                Scalar("k0", 1), Scalar("k1", 2)])))
    return out


def pricing_case(name: str, launch, ptx: str) -> Case:
    """The lint sees what the pre-launch hook passes: scalars by index, buffer sizes."""
    from pricing_kernels.catalog import Buffer

    args = {i: (np.array(a.data, copy=True) if isinstance(a, Buffer) else a.array()[0])
            for i, a in enumerate(launch.args)}
    told = LaunchConfig(block=(launch.block, 1, 1), grid=(launch.grid, 1, 1),
                        dynamic_smem=launch.dynamic_smem, params=launch.lint_params(),
                        extents=launch.lint_extents())
    return Case(f"pricing:{name}", ptx, launch.kernel, (launch.grid, 1, 1), (launch.block, 1, 1),
                args, told, launch.dynamic_smem, max_steps=20_000_000,
                path=f"pricing_kernels/kernels/{launch.source}")


def all_pricing_cases(paths: int = PRICING_PATHS) -> list[Case]:
    """Compiled with NVRTC or nvcc (`pricing_kernels.build`); ImportError or
    `BuildError` when neither is installed."""
    from pricing_kernels.build import compile_ptx

    return [pricing_case(name, launch, compile_ptx(launch.source, PRICING_ARCH,
                                                   launch.defines).ptx)
            for name, launch in pricing_launches(paths)]


__all__ = ["sample_paths", "sample_cases", "all_sample_cases", "launch_line", "fill",
           "default_buffer_bytes", "pricing_launches", "pricing_case", "all_pricing_cases",
           "INT_CHOICES", "PRICING_PATHS"]
