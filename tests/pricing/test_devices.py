"""The real kernels on a device: the GPU (CUDA driver API), ptxlint's CPU emulator
(`ptxlint.emulate`, running the PTX), and the kernels' CUDA C compiled as C++ for CPU
threads (host_runner.py, needs g++). The emulator runs twice: on the PTX `compile_ptx`
makes by default (NVRTC, nvcc without it) and on `nvcc -ptx`'s, which unrolls and folds
addresses differently. Each skips with its reason where it is not available: the GPU
on machines without one (CI), emulator-nvcc without nvcc on PATH, host without g++.

Checks: raw generator outputs bit-identical to the host twins; Box-Muller normals equal
to float32 accuracy; prices within 3 standard errors of the references; paths
identical to the CPU path's (same streams per thread), so device and CPU prices agree
closely.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from pricing_kernels import Spec, build, catalog, pricer, rng
from pricing_kernels.emulator import EmulatorRunner
from pricing_kernels.gpu import DeviceUnavailable, GpuRunner
from pricing_kernels.reference import binomial, black_scholes

from ..conftest import nvcc_path
from . import host_runner

PATHS = {"gpu": 200_000, "emulator": 4096, "host": 8192}


@pytest.fixture(scope="module", params=["gpu", "emulator", "emulator-nvcc", "host"])
def runner(request, tmp_path_factory):
    """`emulator-nvcc`: the emulator on `nvcc -ptx`'s PTX (`pricer.compile_ptx` is
    patched while this runner lives; the module's tests run grouped by runner)."""
    if request.param == "gpu":
        try:
            found = GpuRunner()
        except DeviceUnavailable as exc:
            pytest.skip(str(exc))
        yield found
        found.close()
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
    spec = Spec(product, paths=PATHS[runner.name], steps=16, rng=gen, normals="paired")
    r = pricer.price(spec, runner.name)
    ref_err = 0.0 if product.startswith("european") else 0.03  # MC references: 100k paths
    assert abs(r.price - r.reference) < 3 * math.hypot(r.stderr, ref_err)


@pytest.mark.parametrize("gen", ("philox", "mt", "lcg"))
@pytest.mark.parametrize("normals", ("thread", "paired"))
def test_paths_match_the_cpu_path(runner, gen, normals, compiler, monkeypatch):
    """The CPU path gives every thread the device's generator stream."""
    spec = Spec("asian-call", paths=PATHS[runner.name], steps=16, antithetic=True, rng=gen,
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
