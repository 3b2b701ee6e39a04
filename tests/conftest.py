"""Shared test helpers: sample discovery and the CUDA tools (skip when absent)."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "ptx_samples"


def sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.rglob("*.ptx") if ".cache" not in p.parts)


def ptxas_path() -> str | None:
    return shutil.which("ptxas")


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


def ptxas_max_version() -> tuple[int, int] | None:
    """The newest PTX ISA version the installed ptxas accepts (CUDA 13.0: 9.0)."""
    exe = ptxas_path()
    if exe is None:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    # CUDA 12.x ships PTX ISA 8.x, CUDA 13.0 ships 9.0, each minor release adds one.
    return (major - 4, minor) if major >= 12 else None


def load_cccl_generator():
    path = SAMPLES / "cccl" / "generate.py"
    if not path.exists():
        pytest.skip("ptx_samples/cccl/generate.py is missing")
    spec = importlib.util.spec_from_file_location("cccl_generate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- golden files
GOLDENS = Path(__file__).resolve().parent / "goldens"


def pytest_collection_modifyitems(items):
    """Property tests (hypothesis: a hundred examples or more each) are `slow`: the quick
    loop, `python -m pytest -m "not slow"`, leaves them out (README, docs/ci.md). Other
    slow tests carry the mark themselves."""
    from hypothesis import is_hypothesis_test

    for item in items:
        if is_hypothesis_test(getattr(item, "obj", None)):
            item.add_marker(pytest.mark.slow)


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite tests/goldens/* from the current output")


@pytest.fixture
def golden(request):
    """`golden(name, text)`: compare with tests/goldens/<name>, or rewrite it under
    --update-goldens."""
    update = request.config.getoption("--update-goldens")

    def check(name: str, actual: str) -> None:
        path = GOLDENS / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        assert path.exists(), f"missing golden {path.name}: run pytest --update-goldens"
        expected = path.read_text(encoding="utf-8")
        assert actual == expected, f"{path.name} differs (pytest --update-goldens rewrites it)"

    return check
