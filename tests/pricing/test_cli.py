"""`python -m pricing_kernels`: JSON keys, text output, invalid input."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pricing_kernels.cli import main, whole

KEYS = {"product", "price", "stderr", "ci95", "reference", "reference_method",
        "reference_error", "device", "rng", "paths", "seconds", "lint", "inputs"}


def test_json_output_keys(capsys):
    assert main(["european-put", "--device", "cpu", "--paths", "20000", "--format", "json",
                 "--reference"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == KEYS
    assert out["product"] == "european-put" and out["device"] == "cpu"
    assert out["rng"] == "philox" and out["paths"] == 20000 and out["lint"] is None
    lo, hi = out["ci95"]
    assert lo < out["price"] < hi
    assert out["reference_method"] == "Black-Scholes closed form"
    assert out["reference_error"] == 0
    assert abs(out["price"] - out["reference"]) < 4 * out["stderr"]


def test_json_echoes_the_inputs(capsys):
    assert main(["asian-call", "--device", "cpu", "--paths", "3000", "--steps", "8",
                 "--spot", "95", "--strike", "90", "--rate", "0.03", "--vol", "0.25",
                 "--maturity", "0.5", "--seed", "99", "--rng", "mt", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"] == {"product": "asian-call", "spot": 95.0, "strike": 90.0,
                             "rate": 0.03, "vol": 0.25, "div": 0.0, "maturity": 0.5, "steps": 8,
                             "paths": 3000, "seed": 99, "rng": "mt", "normals": "thread",
                             "antithetic": False}
    assert out["reference"] is None and out["reference_method"] is None  # not asked for


def test_json_lattice(capsys):
    assert main(["american-put", "--device", "cpu", "--steps", "200", "--format", "json",
                 "--reference"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == KEYS and out["stderr"] is None and out["ci95"] is None
    assert out["inputs"]["steps"] == 200 and out["inputs"]["rng"] is None
    # the reference is another method than the priced lattice, with its own error
    assert out["reference_method"].startswith("trinomial lattice")
    assert 0 < out["reference_error"] < 1e-3
    assert out["price"] != out["reference"]


def test_text_output(capsys):
    assert main(["asian-call", "--device", "cpu", "--paths", "5000", "--steps", "8",
                 "--rng", "mt", "--antithetic"]) == 0
    out = capsys.readouterr().out
    for word in ("price", "95% CI", "device     cpu, rng mt, 5,000 paths",
                 "inputs     spot 100, strike 100, rate 0.05, vol 0.2, div 0, maturity 1, steps 8, "
                 "seed 1234, antithetic true"):
        assert word in out
    assert "reference" not in out  # only with --reference


def test_text_reference(capsys):
    assert main(["asian-call", "--device", "cpu", "--paths", "5000", "--steps", "8",
                 "--reference"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "reference" in x)
    assert "numpy Monte Carlo, 100,000 paths, geometric control variate, its error" in line


@pytest.mark.parametrize("text,value", [("1e6", 1_000_000), ("1000000", 1_000_000),
                                        ("1_000_000", 1_000_000), ("2.5E3", 2500),
                                        ("4294967293", 4294967293)])
def test_counts_take_scientific_notation(text, value):
    assert whole(text) == value


@pytest.mark.parametrize("text", ("1.5", "1e-3", "abc", "inf", "nan"))
def test_counts_must_be_whole(text, capsys):
    with pytest.raises(SystemExit) as done:
        main(["european-call", "--device", "cpu", "--paths", text])
    assert done.value.code == 2
    assert "expected a whole number" in capsys.readouterr().err


def test_paths_in_scientific_notation(capsys):
    assert main(["european-call", "--device", "cpu", "--paths", "2e3", "--format",
                 "json"]) == 0
    assert json.loads(capsys.readouterr().out)["paths"] == 2000


@pytest.mark.parametrize("product", ("european-call", "european-put", "everest"))
def test_steps_refused_where_ignored(product, capsys):
    assert main([product, "--device", "cpu", "--steps", "5"]) == 2
    err = capsys.readouterr().err
    assert f"--steps does not apply to {product}" in err and "Traceback" not in err


def test_paths_refused_for_a_lattice(capsys):
    assert main(["binomial-call", "--device", "cpu", "--paths", "1000"]) == 2
    assert "--paths does not apply to binomial-call" in capsys.readouterr().err


def test_assets_only_validated_for_everest(capsys):
    assert main(["european-call", "--device", "cpu", "--paths", "1000", "--assets", "0"]) == 0
    capsys.readouterr()
    assert main(["everest", "--device", "cpu", "--paths", "1000", "--assets", "0"]) == 2
    assert "--assets must be between 1 and" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("pricing_kernels (ptxlint ")


def test_strict_gpu_fails_without_a_gpu(capsys, monkeypatch):
    """No usable GPU: the CPU path with a notice, or under --strict exit 2."""
    from pricing_kernels import gpu  # noqa: PLC0415

    def unusable():
        raise gpu.DeviceUnavailable("device unavailable: simulated for the test")

    monkeypatch.setattr(gpu, "GpuRunner", unusable)
    assert main(["european-call", "--paths", "1000", "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["device"] == "cpu"
    assert out.err.strip() == "device unavailable: simulated for the test: using the CPU path"
    assert main(["european-call", "--paths", "1000", "--strict"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "device unavailable: simulated for the test" in out.err
    assert "--strict" in out.err and "Traceback" not in out.err


def test_cache_is_the_user_cache_directory(monkeypatch, tmp_path):
    from pricing_kernels import build  # noqa: PLC0415

    monkeypatch.delenv("PRICING_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert build.default_cache_dir() == tmp_path / "xdg" / "ptxlint-pricing"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert build.default_cache_dir() == tmp_path / "home" / ".cache" / "ptxlint-pricing"
    monkeypatch.setenv("PRICING_CACHE_DIR", str(tmp_path / "mine"))
    assert build.default_cache_dir() == tmp_path / "mine"


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
                 "json", "--reference"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == "emulator" and out["lint"]["enabled"]
    assert [r["kernel"] for r in out["lint"]["launches"]] == ["european", "reduce_final"]
    assert abs(out["price"] - out["reference"]) < 4 * out["stderr"]


def test_no_lint_flag(capsys):
    assert main(["binomial-call", "--device", "emulator", "--steps", "64", "--no-lint",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["lint"] == {"enabled": False}
