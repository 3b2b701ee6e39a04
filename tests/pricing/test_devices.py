"""The real kernels on a device: the GPU (CUDA driver API), the GPU runner over a fake
driver (fake_driver.py: `GpuRunner`'s set-up, packing and clean-up, the kernels run on
ptxlint's emulator from the PTX), ptxlint's CPU emulator (`ptxlint.emulate`, running the
PTX), and the kernels' CUDA C compiled as C++ for CPU threads (host_runner.py, needs
g++). The emulator runs twice: on the PTX `compile_ptx` makes by default (NVRTC, nvcc
without it) and on `nvcc -ptx`'s, which unrolls and folds addresses differently. Each
skips with its reason where it is not available: the GPU on machines without a usable
one (CI; also a driver too old for the PTX, a busy device), emulator-nvcc without nvcc
on PATH, host without g++.

Checks: raw generator outputs bit-identical to the host twins; Box-Muller normals equal
to float32 accuracy, and finite at the extreme uniforms; prices within 3 standard errors
of the references; paths identical to the CPU path's (same streams per thread), so
device and CPU prices agree closely, also for sample indices past 2^32; the lattice
converging like the float64 one (O(1/n)).

The lattice's convergence is checked up to 2048 steps on the emulator (an emulated
8192-step lattice takes about 45 s, the host runner's 50 s: `PRICING_SLOW=1` adds 4096
and 8192 steps on the emulator) and up to 16384 steps on a GPU.
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np
import pytest

from pricing_kernels import Spec, build, catalog, cpu, pricer, rng
from pricing_kernels.emulator import EmulatorRunner
from pricing_kernels.gpu import DeviceUnavailable, GpuRunner
from pricing_kernels.reference import binomial, black_scholes

from ..conftest import nvcc_path
from . import host_runner
from .fake_driver import FakeDriver

pytestmark = pytest.mark.slow  # the quick loop (-m 'not slow') leaves it out

PATHS = {"gpu": 200_000, "fake-gpu": 4096, "emulator": 4096, "host": 8192}
SLOW = os.environ.get("PRICING_SLOW") == "1"
LATTICE_STEPS = {"gpu": (2048, 4096, 8192, 16384), "emulator": (512, 1024, 2048)
                 + ((4096, 8192) if SLOW else ()), "fake-gpu": (256, 512, 1024),
                 "host": (256, 512, 1024)}


@pytest.fixture(scope="module", params=["gpu", "fake-gpu", "emulator", "emulator-nvcc",
                                        "host"])
def runner(request, tmp_path_factory):
    """`emulator-nvcc`: the emulator on `nvcc -ptx`'s PTX (`pricer.compile_ptx` is
    patched while this runner lives; the module's tests run grouped by runner).
    `fake-gpu`: `GpuRunner` over the fake driver (its `name` is "gpu"; sizes as on the
    emulator). The GPU is skipped when it cannot be used, also when it can be opened
    but its driver refuses the PTX (a module load of the first kernel)."""
    if request.param in ("gpu", "fake-gpu"):
        try:
            found = GpuRunner() if request.param == "gpu" else GpuRunner(driver=FakeDriver())
            pricer.run_launch(found, catalog.philox_raw_launch(1), lint=False, records=[])
        except DeviceUnavailable as exc:
            pytest.skip(str(exc))
        found.kind = request.param
        yield found
        found.close()
        if request.param == "fake-gpu":  # everything the runner made is released
            fake = found.cu
            assert (fake.memory, fake.modules, fake.events, fake.retained) == ({}, {}, {}, 0)
        return
    if request.param == "host":
        if host_runner.compiler() is None:
            pytest.skip("g++ is not installed")
        yield host_runner.HostRunner(tmp_path_factory.mktemp("host_kernels"))
        return
    if request.param == "emulator":
        yield EmulatorRunner("sm_80")
        return
    if nvcc_path() is None:
        pytest.skip("nvcc is not on PATH: the emulator runs only NVRTC's PTX here")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pricer, "compile_ptx", functools.partial(build.compile_ptx, compiler="nvcc"))
        yield EmulatorRunner("sm_80")


def run(runner, launch):
    outputs, _ = pricer.run_launch(runner, launch, lint=True, records=[])
    return outputs


def kind(runner) -> str:
    """Which sizes the runner gets (the GPU runner over the fake driver: "fake-gpu")."""
    return getattr(runner, "kind", runner.name)


def test_philox_bit_identical(runner, compiler):
    n = 1000
    out = run(runner, catalog.philox_raw_launch(n, (5, 6, 7, 8), (9, 10)))["out"]
    host = rng.philox4x32_10((5 + np.arange(n, dtype=np.uint64), 6, 7, 8), (9, 10))
    assert (out.reshape(n, 4).T == host).all()
    counter = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)
    kat = run(runner, catalog.philox_raw_launch(1, counter, (0xA4093822, 0x299F31D0)))["out"]
    assert kat[:4].tolist() == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def test_mt19937_bit_identical(runner, compiler):
    seeds, twists = [5489, 1, 2, 3, 4, 5, 6, 7], 2
    out = run(runner, catalog.mt_raw_launch(seeds, twists))["out"].reshape(-1, twists * 624)
    for w, seed in enumerate(seeds):
        assert (out[w] == rng.mt19937(seed, twists * 624)).all(), f"warp {w}"


def test_lcg_bit_identical(runner, compiler):
    launch = catalog.lcg_raw_launch(seed=3, blocks=2, draws=8)
    outs = run(runner, launch)
    words, final = rng.lcg_draws(launch.args[1].data, 8)
    assert (outs["out"].reshape(8, -1) == words).all()
    assert (outs["state"] == final).all()


@pytest.mark.parametrize("normals", ("thread", "paired"))
def test_normals_match_the_host(runner, normals, compiler):
    n = 2 * catalog.BLOCK
    out = run(runner, catalog.normals_launch(n, 77, normals))["out"].reshape(n, 4).T
    words = rng.philox4x32_10((0, np.arange(n, dtype=np.uint64), 0, 0), rng.seed_key(77))
    host = rng.normal4_paired(words) if normals == "paired" else rng.normal4_thread(words)
    assert np.allclose(out, host, rtol=1e-4, atol=1e-4)  # __logf/__sincosf are approximate


@pytest.mark.parametrize("product", ("european-call", "european-put", "asian-call", "everest"))
@pytest.mark.parametrize("gen", ("philox", "mt", "lcg"))
def test_price_within_3_standard_errors(runner, product, gen, compiler, monkeypatch):
    monkeypatch.setattr(pricer, "open_runner", lambda *a: runner)
    spec = Spec(product, paths=PATHS[kind(runner)], steps=16 if product == "asian-call"
                else None, rng=gen, normals="paired")
    r = pricer.price(spec, runner.name, reference=True)
    ref_err = 0.0 if product.startswith("european") else 0.03  # MC references: 100k paths
    assert r.reference_error <= ref_err
    assert abs(r.price - r.reference) < 3 * math.hypot(r.stderr, ref_err)


@pytest.mark.parametrize("gen", ("philox", "mt", "lcg"))
@pytest.mark.parametrize("normals", ("thread", "paired"))
def test_paths_match_the_cpu_path(runner, gen, normals, compiler, monkeypatch):
    """The CPU path gives every thread the device's generator stream."""
    spec = Spec("asian-call", paths=PATHS[kind(runner)], steps=16, antithetic=True, rng=gen,
                normals=normals)
    cpu = pricer.price(spec, "cpu")
    monkeypatch.setattr(pricer, "open_runner", lambda *a: runner)
    dev = pricer.price(spec, runner.name)
    assert dev.price == pytest.approx(cpu.price, rel=1e-4)  # float32 paths vs float64


@pytest.mark.parametrize("product", ("binomial-call", "american-put"))
@pytest.mark.parametrize("steps", (100, 1000))
def test_lattice_matches_numpy(runner, product, steps, compiler, monkeypatch):
    monkeypatch.setattr(pricer, "open_runner", lambda *a: runner)
    spec = Spec(product, steps=steps)
    r = pricer.price(spec, runner.name)
    want = binomial(100, 100, 0.05, 0.2, 1.0, steps, put=spec.put, american=spec.american)
    assert r.price == pytest.approx(want, rel=2e-4)  # float32 lattice
    if product == "binomial-call" and steps == 1000:
        assert abs(r.price - black_scholes(100, 100, 0.05, 0.2, 1.0)) < 5e-3


@pytest.mark.parametrize("normals", ("thread", "paired"))
def test_extreme_uniforms_give_finite_normals(runner, normals, compiler):
    """Words giving the extreme uniforms 2^-24 and 1 - 2^-24 in every position. Near 1,
    |log u| < 2^-23 is below __logf's absolute error, so the hardware (and the host
    runner, which returns the pessimistic side of that error) may compute log u >= 0:
    the radius's radicand is clamped, no NaN. Elsewhere the normals match the host twin."""
    low, high = 0x000001FF, 0xFFFFFFFF
    words = np.array([[high, low, high, low], [low, high, low, high], [high] * 4,
                      [low] * 4] * (catalog.BLOCK // 2), dtype=np.uint32)
    out = run(runner, catalog.box_muller_launch(words, normals))["out"].reshape(-1, 4)
    assert np.isfinite(out).all()
    twin = rng.normal4_paired if normals == "paired" else rng.normal4_thread
    assert np.allclose(out, twin(words.T).T, atol=2e-3)  # radius near 0 at u = 1 - 2^-24


@pytest.mark.parametrize("product", ("european-call", "asian-call"))
def test_sample_indices_past_2_32(runner, product, compiler):
    """A launch of the samples [2^32 - 1024, 2^32 + 1024): 64-bit counts and indices in
    the kernels. With 32-bit ones the European count (n + 3) / 4 wraps to 0 near 2^32
    (price 0) and the Asian and Everest loops `first += gridDim.x * BLOCK` wrap (an
    endless loop on a GPU). The device's sums are the CPU path's for the same samples,
    whose Philox counters carry the index's high word."""
    spec = Spec(product, rng="philox", steps=8 if product == "asian-call" else None)
    first, count = (1 << 32) - 1024, 2048
    launch = catalog.mc_launch(spec, count, first)
    assert launch.args[2].value == first and launch.args[3].value == count
    partial = run(runner, launch)["partial"]
    result = run(runner, catalog.reduce_launch(partial))["result"]
    s1, s2 = cpu.mc_sums(spec, count, first=first)
    assert result[0] == pytest.approx(s1, rel=1e-5) and result[1] == pytest.approx(s2, rel=1e-5)
    low, _ = cpu.mc_sums(spec, count, first=0)
    assert abs(s1 - low) > 1e-3 * s1  # other samples than the first 2048


def test_lattice_converges_like_float64(runner, compiler, monkeypatch):
    """The lattice's error against Black-Scholes halves when the steps double (O(1/n))
    and the device's price is the float64 numpy lattice's to 1% of that error. With
    float32 coefficients the bias (about n x 3e-8 relative) reached the lattice's own
    error near 1000 steps (2048 steps: 10.450377 against 10.449607). Not linted here:
    the lattice launches are linted in test_lint.py."""
    monkeypatch.setattr(pricer, "open_runner", lambda *a: runner)
    bs = black_scholes(100, 100, 0.05, 0.2, 1.0)
    errors = []
    for steps in LATTICE_STEPS[kind(runner)]:
        got = pricer.price(Spec("binomial-call", steps=steps), runner.name, lint=False).price
        want = binomial(100, 100, 0.05, 0.2, 1.0, steps)
        assert abs(got - want) < 0.01 * abs(want - bs), steps
        errors.append(got - bs)
    for coarse, fine in zip(errors, errors[1:], strict=False):
        assert 0.45 < fine / coarse < 0.55
