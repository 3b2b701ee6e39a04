"""The pre-launch check on the real launches: every production kernel is clean at warning
level with the configuration the pricer launches it with, and each deliberately flawed
twin produces exactly the finding it was written to show.

One analysis gap remains (false positives, described with those now closed in
docs/pricing.md, "Known analysis gaps"): the MT19937 kernels when nvcc rather than NVRTC
builds them (an xfail on that compiler only: nvcc indexes the twist with byte offsets
kept beside the word index, and the race rule cannot relate the two).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from pricing_kernels import prelaunch
from pricing_kernels.build import compile_ptx
from pricing_kernels.catalog import (BLOCK, Buffer, Launch, Scalar, binomial_launch,
                                     production_launches)
from pricing_kernels.spec import Spec
from ptxlint import Certainty, Severity

pytestmark = pytest.mark.slow  # the quick loop (-m 'not slow') leaves it out

ARCH = "sm_80"

NVCC_MT_GAP = ("analysis gap (false positive shared-memory-race) with the nvcc fallback "
               "only: nvcc's MT19937 twist keeps a byte offset (`(4 * tid) & 124`, then "
               "+= 512) beside the word index it compares (`lane | 96`, += 128); the race "
               "rule cannot tell that the words a lane writes are not those another lane "
               "reads before the warp synchronises; docs/pricing.md")


PRODUCTION = [pytest.param(launch, id=name) for name, launch in production_launches()]


def _findings(launch: Launch, compiler) -> list:
    ptx = compile_ptx(launch.source, ARCH, launch.defines).ptx
    return prelaunch.check(launch, ptx, ARCH).findings


@pytest.mark.parametrize("launch", PRODUCTION)
def test_production_kernel_is_clean(launch, compiler, request):
    if launch.defines.get("RNG") == 3 and compiler.startswith("nvcc"):
        request.node.add_marker(pytest.mark.xfail(strict=False, reason=NVCC_MT_GAP))
    found = _findings(launch, compiler)
    loud = [f"{d.line}:{d.column}: {d.severity}: {d.message} [{d.rule}]"
            for d in found if d.severity >= Severity.WARNING]
    assert loud == []
    assert not any(d.rule == "unmodelled-instruction" for d in found)


def _loud(found) -> list:
    return [d for d in found if d.severity >= Severity.WARNING]


def test_flawed_aos_state_is_uncoalesced(compiler):
    """Three loads of the 12-byte structure's fields and the store of `x` back."""
    blocks, draws = 4, 16
    launch = Launch("flawed/aos_state.cu", {"BLOCK": BLOCK}, "lcg_raw_aos", blocks, BLOCK, [
        Buffer("out", np.zeros(draws * blocks * BLOCK, np.uint32), output=True),
        Buffer("state", np.zeros(3 * blocks * BLOCK, np.uint32), output=True),
        Scalar("draws", draws)])
    loud = _loud(_findings(launch, compiler))
    assert Counter(d.rule for d in loud) == {"uncoalesced-access": 4}
    assert {d.details["stride_bytes"] for d in loud} == {12}
    assert {d.details["ideal_sectors_per_request"] for d in loud} == {4}


def test_flawed_box_muller_exchange_has_bank_conflicts(compiler):
    """The four scalar stores of a 16-byte row per lane: 4-way conflicts; and the four
    scalar reads of the partner's row at `4 * (t ^ 1)`, evaluated lane by lane (no lane
    form): 4-way as well, lanes 0, 8, 16, 24 reading rows 1, 9, 17, 25."""
    n = 4 * BLOCK
    launch = Launch("flawed/box_muller_conflict.cu", {"BLOCK": BLOCK}, "normals_paired_rows",
                    n // BLOCK, BLOCK, [Buffer("out", np.zeros(4 * n, np.float32), output=True),
                                        Scalar("n", n), Scalar("k0", 1), Scalar("k1", 2)])
    loud = _loud(_findings(launch, compiler))
    assert Counter(d.rule for d in loud) == {"bank-conflict": 8}
    assert {d.details["ways"] for d in loud} == {4}
    assert sorted(d.details["bank"] for d in loud) == [0, 1, 2, 3, 4, 5, 6, 7]


def test_production_box_muller_exchange_has_no_conflict(compiler):
    """The production twin of the flawed exchange: one float4 per lane."""
    launch = dict(production_launches())["normals/paired"]
    assert not any(d.rule == "bank-conflict" and d.severity >= Severity.WARNING
                   for d in _findings(launch, compiler))


LATTICE = [("binomial-call", 2000), ("american-put", 100)]


def _lattice_launch(product: str, steps: int) -> Launch:
    """The flawed lattice with the launch the pricer gives its production twin."""
    spec = Spec(product, steps=steps)
    launch = binomial_launch(spec, np.full(8, 100.0), np.linspace(80, 120, 8))
    return replace(launch, source="flawed/lattice_no_barrier.cu", kernel="binomial_no_barrier")


@pytest.mark.parametrize("product,steps", LATTICE, ids=[p for p, _ in LATTICE])
def test_flawed_lattice_races_between_steps(product, steps, compiler):
    """One finding: a step writes `tile[step & 1][t]` while the neighbour, already on the
    next step, reads it as `from[t + 1]`; the threads shown are in two warps, so the fix
    is the missing `__syncthreads()`. The pair depends on the step counter, so the race
    is possible (a warning, logged by the pre-launch check), not definite."""
    found = _loud(_findings(_lattice_launch(product, steps), compiler))
    races = [d for d in found if d.rule == "shared-memory-race"]
    assert Counter(d.rule for d in found) == {"shared-memory-race": 1}
    [d] = races
    assert d.severity == Severity.WARNING and d.certainty == Certainty.POSSIBLE
    assert d.details["object"] == "tile" and d.details["kinds"] == "write-read"
    assert not d.details["same_warp"]
    assert "__syncthreads()" in d.help and d.related


def test_production_lattice_has_no_race_or_divergent_barrier(compiler):
    """The production twin synchronises every step: nothing from the two rules the flawed
    twin is for."""
    for product, steps in LATTICE:
        launch = dict(production_launches())[f"{product}/{steps}"]
        assert not [d for d in _findings(launch, compiler)
                    if d.rule in ("shared-memory-race", "barrier-divergence")
                    and d.severity >= Severity.WARNING]


@pytest.mark.parametrize("steps", (33, 129, 225, 257, 1023, 1025, 2047))
def test_lattice_launch_of_any_size_is_clean(steps, compiler):
    """Sizes whose last group of levels is not a multiple of 4 steps: nvcc's 4-times
    unrolled step loop counts `d - d % 4` down to 0 and is entered only when `d - 1 >=
    3`; the analysis keeps both facts (issue 20), so the step counter stays in 1..29
    and `from[t + 1]` is read only by threads below 255."""
    launch = binomial_launch(Spec("american-put", steps=steps))
    assert [f"{d.line}: {d.message} [{d.rule}]" for d in _loud(_findings(launch, compiler))] \
        == []


@pytest.mark.parametrize("arch", ("sm_100", "sm_120"))
def test_monte_carlo_launch_for_newer_targets_is_clean(arch, compiler):
    """NVRTC declares the buffer parameters `.ptr .align 1` for sm_100 and sm_120: no
    evidence against the 256-byte alignment of cudaMalloc, so the 16-byte store of
    `partial` is aligned."""
    launch = dict(production_launches())["european-call/philox/thread"]
    ptx = compile_ptx(launch.source, arch, launch.defines).ptx
    found = prelaunch.check(launch, ptx, arch).findings
    assert [f"{d.line}: {d.message} [{d.rule}]" for d in _loud(found)] == []
