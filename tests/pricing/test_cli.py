"""`python -m pricing_kernels`: JSON keys, text output, invalid input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pricing_kernels.cli import main

KEYS = {"product", "price", "stderr", "ci95", "reference", "device", "rng", "paths",
        "seconds", "lint"}


def test_json_output_keys(capsys):
    assert main(["european-put", "--device", "cpu", "--paths", "20000", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == KEYS
    assert out["product"] == "european-put" and out["device"] == "cpu"
    assert out["rng"] == "philox" and out["paths"] == 20000 and out["lint"] is None
    lo, hi = out["ci95"]
    assert lo < out["price"] < hi
    assert abs(out["price"] - out["reference"]) < 4 * out["stderr"]


def test_json_lattice(capsys):
    assert main(["american-put", "--device", "cpu", "--steps", "200", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == KEYS and out["stderr"] is None and out["ci95"] is None


def test_text_output(capsys):
    assert main(["asian-call", "--device", "cpu", "--paths", "5000", "--steps", "8",
                 "--rng", "mt", "--antithetic"]) == 0
    out = capsys.readouterr().out
    for word in ("price", "95% CI", "reference", "device     cpu, rng mt, 5,000 paths"):
        assert word in out


@pytest.mark.parametrize("args,message", [
    (["--vol", "-0.2"], "--vol must be positive"),
    (["--paths", "0"], "--paths must be at least 1"),
    (["--spot", "0"], "--spot must be positive"),
    (["--steps", "0"], "--steps must be at least 1"),
])
def test_invalid_input_exits_2(args, message, capsys):
    assert main(["european-call", "--device", "cpu", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_non_positive_definite_correlation_exits_2(capsys):
    assert main(["everest", "--device", "cpu", "--assets", "3", "--corr", "-0.6"]) == 2
    err = capsys.readouterr().err
    assert "not positive definite" in err and "must exceed -0.5" in err


@pytest.mark.parametrize("corr", ("0.2,0.3", "1.5", "a,b"))
def test_bad_correlations_exit_2(corr, capsys):
    assert main(["everest", "--device", "cpu", "--assets", "3", "--corr", corr]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_lattice_probability_out_of_range_exits_2(capsys):
    assert main(["binomial-call", "--device", "cpu", "--vol", "0.01", "--rate", "0.5",
                 "--steps", "4"]) == 2
    assert "outside (0, 1)" in capsys.readouterr().err


def test_old_arch_exits_2(capsys):
    assert main(["european-call", "--device", "emulator", "--arch", "sm_70"]) == 2
    assert "sm_75" in capsys.readouterr().err


def test_unknown_product_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "pricing_kernels", "bermudan"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_module_entry_point_runs():
    done = subprocess.run([sys.executable, "-m", "pricing_kernels", "european-call",
                           "--device", "cpu", "--paths", "1000", "--format", "json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == KEYS


def test_emulator_device(capsys):
    assert main(["european-call", "--device", "emulator", "--paths", "2048", "--format",
                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == "emulator" and out["lint"]["enabled"]
    assert [r["kernel"] for r in out["lint"]["launches"]] == ["european", "reduce_final"]
    assert abs(out["price"] - out["reference"]) < 4 * out["stderr"]


def test_no_lint_flag(capsys):
    assert main(["binomial-call", "--device", "emulator", "--steps", "64", "--no-lint",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["lint"] == {"enabled": False}
