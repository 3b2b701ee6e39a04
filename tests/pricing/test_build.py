"""Every kernel compiles for every supported target; older targets are refused clearly;
the PTX cache is keyed by source, options and compiler; nvcc stands in for NVRTC."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pricing_kernels import build
from pricing_kernels.build import BuildError, compile_ptx, parse_arch

ARCHS = ("sm_75", "sm_80", "sm_90", "sm_120")
SOURCES = sorted(p.relative_to(build.KERNELS).as_posix() for p in build.KERNELS.rglob("*.cu"))
ENTRIES = {
    "mc.cu": ("european", "asian", "everest"),
    "reduce.cu": ("reduce_final",),
    "binomial.cu": ("binomial",),
    "rng.cu": ("philox_raw", "lcg_raw", "mt_raw", "normals", "box_muller", "sobol_raw",
               "sobol_bridge_raw", "mt607_raw"),
    "flawed/aos_state.cu": ("lcg_raw_aos",),
    "flawed/box_muller_conflict.cu": ("normals_paired_rows",),
    "flawed/lattice_no_barrier.cu": ("binomial_no_barrier",),
    "flawed/mt607_aos.cu": ("mt607_raw_aos",),
}


def test_every_source_is_listed():
    assert SOURCES == sorted(ENTRIES)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", SOURCES)
def test_kernel_compiles(source, arch, compiler, tmp_path):
    b = compile_ptx(source, arch, cache_dir=tmp_path, use_cache=False)
    assert f".target {arch}" in b.ptx
    assert ".loc" in b.ptx  # -lineinfo
    for entry in ENTRIES[source]:
        assert f".entry {entry}(" in b.ptx


@pytest.mark.parametrize("rng", (1, 2, 3, 4, 5))
@pytest.mark.parametrize("normals", (1, 2))
def test_monte_carlo_variants_compile(rng, normals, compiler, tmp_path):
    defines = {"RNG": rng, "NORMALS": normals, "ANTITHETIC": 1, "NASSETS": 7, "BLOCK": 128}
    b = compile_ptx("mc.cu", "sm_80", defines, cache_dir=tmp_path)
    assert all(f"-D{k}={v}" in b.options for k, v in defines.items())


@pytest.mark.parametrize("arch", ("sm_70", "sm_61", "compute_52", "7.0"))
def test_old_architectures_are_refused_clearly(arch):
    with pytest.raises(BuildError, match=r"CUDA 13 compiles only for sm_75 \(Turing\) and newer"):
        compile_ptx("mc.cu", arch)


@pytest.mark.parametrize("arch,cc", (("sm_90", 90), ("compute_80", 80), ("sm_90a", 90),
                                     ("8.6", 86), ("120", 120)))
def test_parse_arch(arch, cc):
    assert parse_arch(arch) == cc


def test_unknown_arch_is_an_error():
    with pytest.raises(BuildError, match="unknown GPU architecture"):
        parse_arch("volta")


def test_cache_hits_and_keys(compiler, tmp_path):
    first = compile_ptx("reduce.cu", "sm_80", {"BLOCK": 128}, cache_dir=tmp_path)
    again = compile_ptx("reduce.cu", "sm_80", {"BLOCK": 128}, cache_dir=tmp_path)
    other = compile_ptx("reduce.cu", "sm_80", {"BLOCK": 64}, cache_dir=tmp_path)
    assert (first.cached, again.cached, other.cached) == (False, True, False)
    assert again.ptx == first.ptx and other.ptx != first.ptx
    assert len(list(tmp_path.glob("*.ptx"))) == 2
    assert (tmp_path / ".gitignore").read_text() == "*\n"


def test_cache_key_covers_source_headers_options_and_compiler(tmp_path, monkeypatch):
    kernels = tmp_path / "kernels"
    shutil.copytree(build.KERNELS, kernels)
    monkeypatch.setattr(build, "KERNELS", kernels)
    path = kernels / "reduce.cu"

    def key(options=("-DA=1",), version="nvrtc 13.0"):
        return build._cache_key(path, options, version)
    first = key()
    assert first == key()
    assert first != key(options=("-DA=2",)) and first != key(version="nvrtc 13.1")
    path.write_text(path.read_text() + "\n// edited\n")
    edited = key()
    assert edited != first
    header = kernels / "rng.cuh"  # not included by reduce.cu: every header counts
    header.write_text(header.read_text() + "\n// edited\n")
    assert key() != edited


def test_nvrtc_builds_when_its_wheel_is_installed(tmp_path):
    """The test extra installs cuda-python and the pinned nvidia-cuda-nvrtc wheel, so the
    kernels above were compiled by NVRTC, not by an nvcc that happens to be on PATH."""
    if importlib.util.find_spec("cuda") is None or build._wheel_nvrtc() is None:
        pytest.skip("cuda-python or the nvidia-cuda-nvrtc wheel is not installed")
    b = compile_ptx("reduce.cu", "sm_80", cache_dir=tmp_path, use_cache=False)
    assert b.compiler.startswith("nvrtc 13.0")
    assert re.search(r"^\.version 9\.0$", b.ptx, re.M)  # what CUDA 13.0's ptxas takes


def test_pinned_nvcc_wheel_agrees_with_its_ptxas(tmp_path):
    """The nvidia-cuda-nvcc wheel's nvcc, with the pinned nvvm and crt, emits PTX its own
    ptxas assembles (a newer nvvm beside it would emit `.version 9.5`)."""
    spec = importlib.util.find_spec("nvidia")
    bins = [Path(r) / "cu13" / "bin" for r in (spec.submodule_search_locations or [])] \
        if spec else []
    found = [b for b in bins if (b / "nvcc").exists() and (b / "ptxas").exists()]
    if not found:
        pytest.skip("the nvidia-cuda-nvcc wheel is not installed")
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n")
    ptx = tmp_path / "k.ptx"
    subprocess.run([str(found[0] / "nvcc"), "-ptx", "-arch=sm_80", str(source), "-o",
                    str(ptx)], check=True, capture_output=True)
    done = subprocess.run([str(found[0] / "ptxas"), "-arch=sm_80", str(ptx), "-o",
                           str(tmp_path / "k.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_nvcc_fallback_when_nvrtc_is_missing(tmp_path, monkeypatch):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")

    def no_nvrtc():
        raise BuildError("cuda-python is not installed (simulated)")

    monkeypatch.setattr(build, "_load_nvrtc", no_nvrtc)
    build._backend.cache_clear()
    try:
        b = compile_ptx("binomial.cu", "sm_80", cache_dir=tmp_path)
    finally:
        build._backend.cache_clear()
    assert b.compiler.startswith("nvcc ") and ".entry binomial(" in b.ptx


def test_no_compiler_is_a_clear_error(tmp_path, monkeypatch):
    def missing():
        raise BuildError("simulated")

    monkeypatch.setattr(build, "_load_nvrtc", missing)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    build._backend.cache_clear()
    try:
        with pytest.raises(BuildError, match="no CUDA compiler.*pip install 'ptxlint\\[cuda\\]'"):
            compile_ptx("reduce.cu", "sm_80", cache_dir=tmp_path)
    finally:
        build._backend.cache_clear()


def test_compile_error_shows_the_log(compiler, tmp_path):
    with pytest.raises(BuildError, match="RNG must be"):
        compile_ptx("mc.cu", "sm_80", {"RNG": 9}, cache_dir=tmp_path)


def test_ptx_names_the_real_source_files(compiler, tmp_path):
    """The PTX's `.file` lines (what findings quote as CUDA locations) are the real
    paths of the source and its headers, whatever the current directory."""
    b = compile_ptx("mc.cu", "sm_80", {"RNG": 1}, cache_dir=tmp_path, use_cache=False)
    files = re.findall(r'^\s*\.file\s+\d+\s+"([^"]+)"', b.ptx, re.M)
    assert str(build.KERNELS / "mc.cu") in files
    assert all(Path(f).is_file() for f in files), files


def test_target_arch_for_newer_gpus(compiler):
    """A GPU the compiler knows is targeted as itself; a newer one gets the newest
    architecture the compiler supports below it (the driver JIT-compiles the PTX)."""
    archs = build.supported_archs()
    assert archs and min(archs) >= build.MIN_ARCH
    assert build.target_arch(80) == 80
    assert build.target_arch(1000) == max(archs)
    below = max(a for a in archs if a < 80)
    assert build.target_arch(79) == below
