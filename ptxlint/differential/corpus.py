"""The kernels the soundness suite runs, with launches and concrete inputs.

Samples (`ptx_samples/**/*.ptx` with a `// ptxlint: launch ...` line): the launch line
gives block, grid, dynamic shared memory, scalar values and buffer sizes; the nvcc
kernels of `ptx_samples/cuda/` have no launch line and run in the launches of the
emulator's tests (`CUDA_LAUNCHES`), the lint told every value and size. Inputs:

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
    return [c for p in sample_paths() for c in sample_cases(p)] + cuda_cases()


# ---- nvcc kernels without a launch line (ptx_samples/cuda/) --------------------------------------
# (file, kernel, grid, block, arguments: an int is a scalar, ("buf", bytes) a buffer,
# dynamic shared memory): the launches the emulator's own tests use.
def _buf(n: int) -> tuple[str, int]:
    return ("buf", n)


CUDA_LAUNCHES = [
    ("vector_add.ptx", "vector_add", 4, 256, [_buf(20000), _buf(20000), _buf(20000), 5000], 0),
    ("vector_add.ptx", "vector_add4", 2, 128, [_buf(16384), _buf(16384), _buf(16384), 1024], 0),
    ("transpose.ptx", "transpose_naive", (3, 2), (32, 8),
     [_buf(96 * 64 * 4), _buf(96 * 64 * 4), 96, 64], 0),
    ("transpose.ptx", "transpose_tiled", (3, 2), (32, 8),
     [_buf(96 * 64 * 4), _buf(96 * 64 * 4), 96, 64], 0),
    ("reduce.ptx", "block_reduce", 6, 256, [_buf(12000), _buf(24), _buf(24), 3000], 1024),
    ("reduce.ptx", "warp_max", 2, 128, [_buf(1024), _buf(32)], 0),
    ("histogram.ptx", "histogram256", 8, 256, [_buf(20000), 20000, _buf(1024)], 0),
    ("histogram.ptx", "weighted_hist", 12, 256,
     [_buf(12000), _buf(12000), 3000, _buf(256), _buf(4), _buf(8)], 0),
    ("device_call.ptx", "call_kernel", 2, 128, [_buf(1024), _buf(800), 200, 1], 0),
    ("local_array.ptx", "local_sort8", 2, 32, [_buf(2048), _buf(256), _buf(128)], 0),
    ("float_math.ptx", "float_math", 2, 128, [_buf(1024), _buf(1024), _buf(2048), 256], 0),
    ("async_copy.ptx", "pipelined_sum", 2, 256, [_buf(6144), _buf(2048), 3], 0),
    ("async_copy.ptx", "copy16", 2, 256, [_buf(8192), _buf(8192)], 0),
]


def cuda_cases() -> list[Case]:
    out = []
    for name, kernel, grid, block, spec, smem in CUDA_LAUNCHES:
        path = SAMPLES / "cuda" / name
        args = {i: fill(a[1]) if isinstance(a, tuple) else a for i, a in enumerate(spec)}
        told = LaunchConfig(block=block if isinstance(block, tuple) else (block,),
                            grid=grid if isinstance(grid, tuple) else (grid,),
                            dynamic_smem=smem,
                            params={i: a for i, a in enumerate(spec) if not isinstance(a, tuple)},
                            extents={i: a[1] for i, a in enumerate(spec) if isinstance(a, tuple)})
        rel = path.relative_to(ROOT).as_posix()
        out.append(Case(f"{rel}:{kernel}", path.read_text(), kernel, told.grid, told.block,
                        args, told, smem, path=rel))
    return out




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


__all__ = ["sample_paths", "sample_cases", "all_sample_cases", "cuda_cases", "launch_line",
           "fill",
           "default_buffer_bytes", "pricing_launches", "pricing_case", "all_pricing_cases",
           "INT_CHOICES", "PRICING_PATHS"]
