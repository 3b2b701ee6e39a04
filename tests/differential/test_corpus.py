"""The soundness suite on real kernels: every sample with a launch line, the nvcc
kernels of `ptx_samples/cuda/` in the emulator tests' launches, and every pricing kernel
in its real launch (small path counts), linted and emulated with the
same launch and inputs; every breach fails the test. A case the emulator cannot run (an
opcode it does not support) is skipped with the emulator's message."""
from __future__ import annotations

import pytest

from ptxlint.differential import run_case
from ptxlint.differential.corpus import all_pricing_cases, all_sample_cases

SAMPLE_CASES = all_sample_cases()


def check(case):
    result = run_case(case)
    if result.error is not None and "not supported by the emulator" in result.error:
        pytest.skip(result.error)
    assert result.sound, "\n".join(result.problems())
    return result


@pytest.mark.parametrize("case", SAMPLE_CASES, ids=[c.name for c in SAMPLE_CASES])
def test_sample_is_sound(case):
    check(case)


def test_every_launch_line_sample_is_a_case():
    from ptxlint.differential.corpus import sample_paths

    named = {c.path for c in SAMPLE_CASES if "/cuda/" not in c.path}
    assert named and named == {p.relative_to(p.parents[2]).as_posix() for p in sample_paths()}


@pytest.fixture(scope="module")
def pricing_cases():
    from pricing_kernels import build

    if build.available() is None:
        pytest.skip("neither NVRTC nor nvcc is installed: the pricing kernels cannot be built")
    return {c.name: c for c in all_pricing_cases()}


def _pricing_names() -> list[str]:
    from ptxlint.differential.corpus import pricing_launches

    return [f"pricing:{name}" for name, _ in pricing_launches()]


@pytest.mark.parametrize("name", _pricing_names())
def test_pricing_launch_is_sound(name, pricing_cases):
    check(pricing_cases[name])
