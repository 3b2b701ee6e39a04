"""The soundness suite on random small kernels (`kernels.py`): each generated kernel is
linted and emulated under its launch; any breach fails (with the
kernel's PTX, which hypothesis shrinks)."""
from __future__ import annotations

import subprocess

from hypothesis import HealthCheck, given, settings

from differential import run_case

from ..conftest import ptxas_path
from .kernels import programs

import pytest


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs())
def test_random_kernel_is_sound(prog):
    result = run_case(prog.case())
    assert result.sound, prog.text + "\n" + "\n".join(result.problems())


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs())
def test_random_kernel_assembles(prog, tmp_path_factory):
    path = tmp_path_factory.mktemp("rk") / "rk.ptx"
    path.write_text(prog.text)
    done = subprocess.run([ptxas_path(), "-arch=sm_80", str(path), "-o", str(path) + ".o"],
                          capture_output=True, text=True)
    assert done.returncode == 0, prog.text + done.stderr
