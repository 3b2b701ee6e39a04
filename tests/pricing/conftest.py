"""Shared helpers of the pricing tests: the CUDA compiler (skip when there is none) and a
runner that records launches instead of running them."""
from __future__ import annotations

import numpy as np
import pytest

from pricing_kernels import build


@pytest.fixture(scope="session")
def compiler() -> str:
    """The compiler `compile_ptx` uses; skips the test when neither NVRTC nor nvcc is
    installed."""
    found = build.available()
    if found is None:
        pytest.skip("neither NVRTC (pip install 'ptxlint[cuda]') nor nvcc is installed")
    return found


class RecordingRunner:
    """Stands in for the GPU: remembers each launch and returns zeroed outputs."""

    name = "recording"
    arch = "sm_80"

    def __init__(self) -> None:
        self.launches = []

    def run(self, launch, ptx):
        self.launches.append((launch, ptx))
        outputs = {a.name: np.zeros_like(a.data) for a in launch.args
                   if getattr(a, "output", False)}
        if "result" in outputs:
            outputs["result"][:] = (1.0, 1.0)
        return outputs, 0.0


@pytest.fixture
def recording_runner() -> RecordingRunner:
    return RecordingRunner()
