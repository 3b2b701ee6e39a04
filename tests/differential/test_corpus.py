"""The soundness suite on real kernels: every kernel of `ptx_samples/` but the parser
samples of `syntax/` (in its launch line's launch, else the corpus's default launch; the
nvcc kernels of `cuda/` in `CUDA_LAUNCHES`), and every pricing kernel in its real launch
(small path counts), linted and emulated with the same launch and inputs; every breach
fails the test. A case the emulator cannot run as launched (`corpus.NOT_RUN`) or that
reaches an opcode it does not support is skipped, "not run", with the reason; the
coverage tests below check that no kernel is left out silently."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from differential import run_case
from differential.corpus import NOT_RUN, all_pricing_cases, all_sample_cases
from ptxlint.ir.build import parse_module

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_CASES = all_sample_cases()


def check(case):
    why = NOT_RUN.get(case.name)
    if why is not None:
        pytest.skip(f"not run: {why}")
    result = run_case(case)
    if result.error is not None and "not supported by the emulator" in result.error:
        pytest.skip(f"not run: {result.error}")
    assert result.sound, "\n".join(result.problems())
    return result


@pytest.mark.slow
@pytest.mark.parametrize("case", SAMPLE_CASES, ids=[c.name for c in SAMPLE_CASES])
def test_sample_is_sound(case):
    check(case)


def _sample_kernels() -> set[tuple[str, str]]:
    """(file, kernel) for every entry of every `.ptx` under ptx_samples/ outside
    syntax/, found here independently of the corpus."""
    out = set()
    for path in sorted((ROOT / "ptx_samples").rglob("*.ptx")):
        rel = path.relative_to(ROOT)
        if rel.parts[1] == "syntax" or ".cache" in rel.parts:
            continue
        parsed = parse_module(path.read_text(), str(path))
        assert parsed.ok, f"{rel} does not parse"
        out |= {(rel.as_posix(), fn.name) for fn in parsed.module.entries}
    return out


def test_every_sample_kernel_is_a_case():
    """The coverage claim: every kernel of every file under ptx_samples/ except the
    parser samples of syntax/ is a case (run, or listed in NOT_RUN with its reason), so
    a new sample cannot be skipped silently; and syntax/ is the only exclusion."""
    from differential.corpus import EXCLUDED_DIRS

    assert EXCLUDED_DIRS == ("syntax",)
    want = _sample_kernels()
    have = {(c.path, c.kernel) for c in SAMPLE_CASES}
    assert len(want) > 100
    assert sorted(want - have) == [], "kernels that are not cases"
    assert sorted(have - want) == [], "cases of no sample kernel"
    names = {c.name for c in SAMPLE_CASES}
    assert len(names) == len(SAMPLE_CASES)
    assert set(NOT_RUN) <= names and all(why.strip() for why in NOT_RUN.values())


def test_default_launch_is_the_one_linted():
    """Samples without a launch line: the block of `.reqntid`, one block, and the lint
    is told that very launch and every buffer's size."""
    from differential.corpus import DEFAULT_BLOCK, launch_line

    defaults = [c for c in SAMPLE_CASES if "/cuda/" not in c.path and launch_line(c.ptx) is None]
    assert defaults
    for case in defaults:
        fn = next(f for f in parse_module(case.ptx, case.path).module.entries
                  if f.name == case.kernel)
        req = fn.directives.get("reqntid")
        assert case.block == ((tuple(req) + (1, 1))[:3] if req else DEFAULT_BLOCK)
        assert case.grid == (1, 1, 1)
        assert (case.launch.block, case.launch.grid) == (case.block, case.grid)
        buffers = {i for i, a in case.args.items() if hasattr(a, "nbytes")}
        assert buffers and {i: case.args[i].nbytes for i in buffers} == \
            {i: case.launch.extents[i] for i in buffers}


# What each NOT_RUN case's run shows instead of the kernel's execution: when the
# emulator learns the missing feature, the symptom goes and the case should run.
def _cluster_neighbour_unreachable(result) -> bool:
    return any(o.kind == "out-of-bounds" and o.site.text.startswith("ld.u32")
               for o in result.comparison.unjudged)


def _grid_sync_traps(result) -> bool:
    return result.comparison.unmapped.get("trap", 0) > 0


NOT_RUN_SYMPTOMS = {
    "ptx_samples/cuda/cluster_sm90.ptx:cluster_exchange": _cluster_neighbour_unreachable,
    "ptx_samples/cuda/coop_groups.ptx:cg_grid_two_phase": _grid_sync_traps,
}


@pytest.mark.parametrize("name", sorted(NOT_RUN))
def test_not_run_reason_holds(name):
    assert set(NOT_RUN_SYMPTOMS) == set(NOT_RUN)
    [case] = [c for c in SAMPLE_CASES if c.name == name]
    result = run_case(case)
    assert result.error is None and result.comparison is not None
    assert NOT_RUN_SYMPTOMS[name](result), f"{name} may run now: {NOT_RUN[name]}"


@pytest.fixture(scope="module")
def pricing_cases():
    from pricing_kernels import build

    if build.available() is None:
        pytest.skip("neither NVRTC nor nvcc is installed: the pricing kernels cannot be built")
    return {c.name: c for c in all_pricing_cases()}


def _pricing_names() -> list[str]:
    from differential.corpus import pricing_launches

    return [f"pricing:{name}" for name, _ in pricing_launches()]


@pytest.mark.slow
@pytest.mark.parametrize("name", _pricing_names())
def test_pricing_launch_is_sound(name, pricing_cases):
    check(pricing_cases[name])


def test_every_pricing_kernel_is_a_case():
    """Every `__global__` kernel of pricing_kernels/kernels/ (production and flawed) has
    a launch in the corpus."""
    from differential.corpus import pricing_launches

    kernels = ROOT / "pricing_kernels" / "kernels"
    decl = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?(\w+)\s*\(")
    want = {(p.relative_to(kernels).as_posix(), m.group(1))
            for p in kernels.rglob("*.cu") for m in decl.finditer(p.read_text())}
    have = {(launch.source, launch.kernel) for _, launch in pricing_launches()}
    assert len(want) >= 12 and sorted(want - have) == []
