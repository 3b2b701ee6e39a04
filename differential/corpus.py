"""The kernels the soundness suite runs, with launches and concrete inputs.

Every kernel of every `ptx_samples/**/*.ptx` is a case (`sample_paths`), except the
parser samples of `ptx_samples/syntax/` (`EXCLUDED_DIRS`: one theme of the grammar per
file, kernels written to parse, not to compute):

- a rule sample with a `// ptxlint: launch ...` line runs in that launch: block, grid,
  dynamic shared memory, scalar values and buffer sizes;
- a rule sample without one runs in `default_launch`: the block of its `.reqntid` (else
  `DEFAULT_BLOCK`), one block (`DEFAULT_GRID`: these hand-written samples index by
  `%tid.x` and `%laneid` alone), no dynamic shared memory; the lint is told that same
  launch;
- the nvcc kernels of `ptx_samples/cuda/` have no launch line and run in the launches
  of `CUDA_LAUNCHES` (mostly those of the emulator's tests), the lint told every value
  and size.

A case the emulator cannot run as launched stays in the corpus and is listed in
`NOT_RUN` with the reason (a feature of the launch the emulator lacks); a case that
reaches an opcode the emulator does not support says so when run. Inputs:

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

from ptxlint.ir.build import parse_module
from ptxlint.ir.module import Function
from ptxlint.launch import LaunchConfig
from .case import Case

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "ptx_samples"
LAUNCH_LINE = re.compile(r"//\s*ptxlint:\s*launch\s+(.*)$", re.M)
INT_CHOICES = (1, 33)  # odd on purpose: misaligned offsets, strides that share no sector
FLOAT_CHOICE = 1.5
PRICING_PATHS = 4096
PRICING_ARCH = "sm_80"


def launch_line(text: str) -> LaunchConfig | None:
    m = LAUNCH_LINE.search("\n".join(text.splitlines()[:40]))
    return LaunchConfig.parse(m.group(1).strip()) if m else None


# Directories of ptx_samples/ whose files are not cases: the parser samples of syntax/
# (hand-written, one theme of the PTX grammar per file; their kernels are written to
# parse and assemble, not to compute anything a launch could check, and several use
# what the emulator lacks: textures, surfaces, video, wgmma, tensor memory). Nothing
# else is left out: `tests/differential/test_corpus.py` checks that every other kernel
# is a case.
EXCLUDED_DIRS = ("syntax",)
NVCC_DIR = "cuda"  # nvcc kernels without launch lines: `CUDA_LAUNCHES`

# Samples without a launch line: the block of `.reqntid` when the kernel has one, else
# DEFAULT_BLOCK threads; one block.
DEFAULT_BLOCK = (128, 1, 1)
DEFAULT_GRID = (1, 1, 1)


def sample_paths() -> list[Path]:
    """Every `.ptx` of `ptx_samples/` that holds cases: all but `EXCLUDED_DIRS`."""
    return sorted(p for p in SAMPLES.rglob("*.ptx")
                  if ".cache" not in p.parts and
                  p.relative_to(SAMPLES).parts[0] not in EXCLUDED_DIRS)


def default_launch(fn: Function) -> LaunchConfig:
    """The launch of a rule sample without a launch line (see `DEFAULT_BLOCK`)."""
    req = fn.directives.get("reqntid")
    return LaunchConfig(block=tuple(req) if req else DEFAULT_BLOCK, grid=DEFAULT_GRID)


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
    """One case per kernel of the sample and per choice of its unspecified scalars, in
    its launch line's launch, else `default_launch`; for an nvcc kernel of
    `ptx_samples/cuda/`, its `CUDA_LAUNCHES`; none for `EXCLUDED_DIRS`."""
    text = path.read_text()
    launch = launch_line(text)
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    if path.is_relative_to(SAMPLES) and launch is None:
        top = path.relative_to(SAMPLES).parts[0]
        if top in EXCLUDED_DIRS:
            return []
        if top == NVCC_DIR:
            return cuda_cases(path.name)
    module = parse_module(text, str(path)).module
    out = []
    for fn in module.entries:
        out += _kernel_cases(rel, text, fn, launch or default_launch(fn))
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
    """Every case of `ptx_samples/` (those of `NOT_RUN` included)."""
    return [c for p in sample_paths() for c in sample_cases(p)]


# ---- nvcc kernels without a launch line (ptx_samples/cuda/) --------------------------------------
# (file, kernel, grid, block, arguments: an int or float is a scalar, ("buf", bytes) a
# buffer filled by `fill`, dynamic shared memory). Each kernel of the directory has one;
# the launches of the emulator's own tests where they have one, else sized from the
# kernel's source (the `.cu` beside it): a grid of 2 to 4 blocks, and where the kernel
# guards an index with `n`, an `n` that leaves the last threads out. The lint is told
# every scalar value and every buffer size, except aggregate parameters (`.b8 p[2]`: a
# `__half` by value), which take no value and read as unknown uniform bytes.
def _buf(n: int) -> tuple[str, int]:
    return ("buf", n)


HALF_ONE = 0x3C00  # 1.0 as an IEEE half

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
    ("float_math.ptx", "conversions", 2, 128,
     [_buf(1024), _buf(1024), _buf(1024), _buf(2048), _buf(2048), 200], 0),
    ("async_copy.ptx", "pipelined_sum", 2, 256, [_buf(6144), _buf(2048), 3], 0),
    ("async_copy.ptx", "copy16", 2, 256, [_buf(8192), _buf(8192)], 0),
    # TILE = 256 ints per block, the block size cuda::barrier is initialised with
    ("async_copy.ptx", "barrier_copy", 2, 256, [_buf(2 * 256 * 4), _buf(2 * 256 * 4)], 0),
    # one cluster of the 2 blocks `.reqnctapercluster` asks for: in NOT_RUN
    ("cluster_sm90.ptx", "cluster_exchange", 2, 128, [_buf(2 * 128 * 4), _buf(2 * 128 * 4)], 0),
    # a launch without cluster dimensions: clusters of one block, so every bin is the
    # block's own (`num_blocks()` is 1); h[256] needs 256 threads; grid-stride over n bytes
    ("cluster_sm90.ptx", "cluster_histo", 4, 256, [_buf(4096), _buf(256 * 4), 4000], 0),
    # 4 warps a block, the last 12 threads past n; odd values form the coalesced groups
    ("coop_groups.ptx", "cg_tile_reduce", 4, 128, [_buf(2000), _buf(8), 500], 0),
    # a cooperative launch (grid.sync()): in NOT_RUN
    ("coop_groups.ptx", "cg_grid_two_phase", 2, 128, [_buf(1024), _buf(1024), 200], 0),
    ("debug_build.ptx", "debug_saxpy", 2, 128, [1.5, _buf(1024), _buf(1024), 200], 0),
    # alpha = 1.0 (an aggregate parameter: the lint is not told it); n2 half2 pairs
    ("half_bf16.ptx", "half_axpy", 2, 64, [_buf(512), _buf(512), HALF_ONE, 100], 0),
    # x, out: n2 bfloat162; f: 2 * n2 floats; fo: n2 floats
    ("half_bf16.ptx", "bf16_mix", 2, 128,
     [_buf(1024), _buf(2048), _buf(1024), _buf(1024), 200], 0),
    # BYTES = 4096 per block, one int4 per thread: 256 threads
    ("mbarrier_sm90.ptx", "bulk_copy_mbarrier", 2, 256, [_buf(2 * 4096), _buf(2 * 4096)], 0),
    ("mbarrier_sm90.ptx", "mbarrier_inline", 2, 64, [_buf(2 * 64 * 4)], 0),
    # ops[i] = (7i + 3) % 256 takes every value below 256 once for i < 256: each of the
    # 16 cases once, the default otherwise; the last 84 threads past n
    ("switch_dense.ptx", "opcode_dispatch", 3, 128,
     [_buf(2048), _buf(2048), _buf(2048), _buf(2048), 300], 0),
    # c_len = 9 taps (initialised __constant__), thread 0 counts in d_counter
    ("const_global.ptx", "fir", 2, 128, [_buf(1024), _buf(1024), 200], 0),
]

# Cases of the corpus the emulator cannot run as launched (name -> why): the run would
# not be the kernel's execution. Kept as cases so that they are listed, never dropped;
# `tests/differential/test_corpus.py` checks that each reason still holds.
NOT_RUN = {
    "ptx_samples/cuda/cluster_sm90.ptx:cluster_exchange":
        "a cluster of 2 blocks (.reqnctapercluster 2): the emulator runs each block as a "
        "cluster of one, so mapa to the neighbour's rank gives an address outside every "
        "window and the read of the neighbour's tile (distributed shared memory) is "
        "recorded as out of bounds instead of happening",
    "ptx_samples/cuda/coop_groups.ptx:cg_grid_two_phase":
        "a cooperative launch (grid.sync()): the emulator provides no grid workspace "
        "(%envreg1 and %envreg2 read 0), so every thread traps, as a non-cooperative launch "
        "does, before the second phase",
}


def cuda_cases(file: str | None = None) -> list[Case]:
    """The `CUDA_LAUNCHES` cases (of one file of `ptx_samples/cuda/` when given)."""
    out, modules = [], {}
    for name, kernel, grid, block, spec, smem in CUDA_LAUNCHES:
        if file is not None and name != file:
            continue
        path = SAMPLES / NVCC_DIR / name
        text = path.read_text()
        if name not in modules:
            modules[name] = parse_module(text, str(path)).module
        fn = next(f for f in modules[name].entries if f.name == kernel)
        args = {i: fill(a[1]) if isinstance(a, tuple) else a for i, a in enumerate(spec)}
        told = LaunchConfig(block=block if isinstance(block, tuple) else (block,),
                            grid=grid if isinstance(grid, tuple) else (grid,),
                            dynamic_smem=smem,
                            params={i: a for i, a in enumerate(spec)
                                    if not isinstance(a, tuple) and not fn.params[i].dims},
                            extents={i: a[1] for i, a in enumerate(spec) if isinstance(a, tuple)})
        rel = path.relative_to(ROOT).as_posix()
        out.append(Case(f"{rel}:{kernel}", text, kernel, told.grid, told.block,
                        args, told, smem, path=rel))
    return out


def not_run(case: Case) -> str | None:
    """Why the emulator cannot run `case` as launched (`NOT_RUN`), or None."""
    return NOT_RUN.get(case.name)


# ---- pricing kernels -------------------------------------------------------------------------
def pricing_launches(paths: int = PRICING_PATHS) -> list[tuple[str, object]]:
    """(name, `pricing_kernels.catalog.Launch`): every production launch with `paths`
    paths, and the deliberately flawed twins (`kernels/flawed/`) in the launches their
    tests use (the lattice without its barrier: the launch the pricer gives its
    production twin for an American put over 100 steps)."""
    from pricing_kernels.catalog import (BLOCK, Buffer, Launch, Scalar, binomial_launch,
                                         production_launches)
    from pricing_kernels.spec import Spec

    out = list(production_launches(paths))
    lattice = binomial_launch(Spec("american-put", steps=100), np.full(8, 100.0),
                              np.linspace(80, 120, 8))
    out.append(("flawed/lattice_no_barrier", replace(
        lattice, source="flawed/lattice_no_barrier.cu", kernel="binomial_no_barrier")))
    blocks, draws, n = 4, 16, 4 * BLOCK
    out.append(("flawed/aos_state", Launch(
        "flawed/aos_state.cu", {"BLOCK": BLOCK}, "lcg_raw_aos", blocks, BLOCK, [
            Buffer("out", np.zeros(draws * blocks * BLOCK, np.uint32), output=True),
            Buffer("state", fill(12 * blocks * BLOCK).view(np.uint32), output=True),
            Scalar("draws", draws)])))
    from pricing_kernels import rng

    aos = rng.mt607_state(7, blocks * BLOCK).reshape(22, -1).T.copy().reshape(-1)
    out.append(("flawed/mt607_aos", Launch(
        "flawed/mt607_aos.cu", {"BLOCK": BLOCK}, "mt607_raw_aos", blocks, BLOCK, [
            Buffer("out", np.zeros(draws * blocks * BLOCK, np.uint32), output=True),
            Buffer("state", aos, output=True), Scalar("draws", draws)])))
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
           "fill", "default_launch", "not_run", "NOT_RUN", "CUDA_LAUNCHES", "EXCLUDED_DIRS",
           "default_buffer_bytes", "pricing_launches", "pricing_case", "all_pricing_cases",
           "INT_CHOICES", "PRICING_PATHS"]
