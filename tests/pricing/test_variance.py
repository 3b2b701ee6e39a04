"""Variance reduction (issue 23): the control variate's estimator and known means, the
kernels' extra sums (emulator against the CPU path), Sobol replications against Philox
at equal paths, validation and the command line."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pricing_kernels import Spec, pricer, variance
from pricing_kernels.catalog import mc_scalars
from pricing_kernels.cli import main
from pricing_kernels.emulator import EmulatorRunner
from pricing_kernels.spec import InputError

pytestmark = pytest.mark.slow  # the quick loop (-m 'not slow') leaves it out


def _sums(y, c):
    return (np.array([y.sum(), c.sum(), (y * c).sum()]),
            np.array([(y * y).sum(), (c * c).sum(), ((y * c) ** 2).sum()]), y.size)


def test_estimate_is_the_regression_estimator():
    """beta = cov / var, price ybar - beta (cbar - E c), stderr of the residuals."""
    g = np.random.default_rng(3)
    c = g.standard_normal(20_000) + 5.0
    y = 2.0 * c + 0.5 * g.standard_normal(c.size)
    spec = Spec("european-call", control_variate=True)
    ec = variance.control_mean(spec)
    c = c - 5.0 + ec  # a control with the known mean
    est = variance.estimate(spec, [_sums(y, c)])
    cov = np.cov(y, c)
    beta = cov[0, 1] / cov[1, 1]
    assert est.info["beta"] == pytest.approx(beta, rel=1e-9)
    assert est.price == pytest.approx(y.mean() - beta * (c.mean() - ec), rel=1e-12)
    resid = y - beta * c
    assert est.stderr == pytest.approx(resid.std(ddof=1) / math.sqrt(y.size), rel=1e-3)
    assert est.info["factor"] == pytest.approx(cov[0, 0] / resid.var(ddof=1), rel=1e-3)


def test_perfect_and_useless_controls():
    g = np.random.default_rng(4)
    spec = Spec("european-call", control_variate=True)
    c = g.standard_normal(5000) + variance.control_mean(spec)
    assert variance.estimate(spec, [_sums(3 * c, c)]).stderr < 1e-6
    useless = variance.estimate(spec, [_sums(g.standard_normal(5000), c)])
    assert 0.99 < useless.info["factor"] < 1.01


def test_control_means():
    """European: the forward S0 e^((r - q) T); Asian: the geometric-average call's
    closed form against a numpy simulation of the same discrete average."""
    spec = Spec("european-call", div=0.02, control_variate=True)
    assert variance.control_mean(spec) == pytest.approx(100 * math.exp(0.03), rel=1e-6)
    spec = Spec("asian-call", steps=12, control_variate=True)
    mu, sig = mc_scalars(spec)
    z = np.random.default_rng(5).standard_normal((400_000, 12))
    g = 100 * np.exp(np.cumsum(mu + sig * z, axis=1).mean(axis=1))
    payoff = np.maximum(g - 100, 0)
    se = payoff.std() / math.sqrt(payoff.size)
    assert abs(variance.control_mean(spec) - payoff.mean()) < 4 * se


@pytest.mark.parametrize("product,least", [("european-call", 4.0), ("european-put", 1.5),
                                           ("asian-call", 200.0)])
def test_cpu_control_variate_prices_and_factor(product, least):
    spec = Spec(product, paths=20_000, control_variate=True, seed=8)
    r = pricer.price(spec, "cpu", reference=True)
    v = r.variance
    assert v["factor"] > least
    assert v["stderr_without_control"] ** 2 / r.stderr ** 2 == pytest.approx(v["factor"])
    err = math.hypot(r.stderr, r.reference_error)
    assert abs(r.price - r.reference) < 4 * err
    plain = pricer.price(Spec(product, paths=20_000, seed=8), "cpu")
    assert plain.stderr == pytest.approx(v["stderr_without_control"], rel=1e-9)
    assert plain.variance is None


def test_sobol_beats_philox_at_equal_paths():
    """Asian (Brownian bridge) and European: the replications' standard error against
    Philox's at the same paths; both within 3 standard errors of the references."""
    for product, least in (("asian-call", 5.0), ("european-call", 20.0)):
        p = pricer.price(Spec(product, paths=16_384, rng="philox"), "cpu", reference=True)
        s = pricer.price(Spec(product, paths=16_384, rng="sobol"), "cpu", reference=True)
        assert (p.stderr / s.stderr) ** 2 > least
        assert s.variance["replications"] == 16
        for r in (p, s):
            assert abs(r.price - r.reference) < 3 * math.hypot(r.stderr, r.reference_error)


def test_sobol_replications_cover_the_paths():
    ranges = variance.sobol_ranges(Spec("asian-call", rng="sobol"), 1000)
    assert sum(n for _, n in ranges) == 1000 and len(ranges) == 16
    assert [f >> 32 for f, _ in ranges] == list(range(16))
    eur = variance.sobol_ranges(Spec("european-call", rng="sobol"), 64)
    assert [f >> 34 for f, _ in eur] == list(range(16))  # items r * 2^32


@pytest.mark.parametrize("spec", [
    Spec("european-call", paths=4096, control_variate=True, antithetic=True),
    Spec("asian-call", paths=1024, steps=16, control_variate=True),
    Spec("asian-call", paths=1024, steps=8, rng="sobol", control_variate=True),
], ids=["european-antithetic", "asian", "asian-sobol"])
def test_emulated_control_sums_equal_the_cpu_path(spec, compiler, monkeypatch):
    runner = EmulatorRunner("sm_80")
    cpu = pricer.price(spec, "cpu")
    monkeypatch.setattr(pricer, "open_runner", lambda *a: runner)
    dev = pricer.price(spec, "emulator")
    assert dev.price == pytest.approx(cpu.price, rel=1e-5)
    assert dev.variance["beta"] == pytest.approx(cpu.variance["beta"], rel=1e-4)
    assert dev.variance["factor"] == pytest.approx(cpu.variance["factor"], rel=1e-3)
    assert dev.lint["warnings"] == 0


@pytest.mark.parametrize("kwargs,words", [
    (dict(product="everest", control_variate=True), "--control-variate applies"),
    (dict(product="european-call", control_variate=True, greeks=True), "--greeks"),
    (dict(product="asian-call", rng="sobol", steps=2000), "at most 1024 steps"),
    (dict(product="asian-call", rng="sobol", paths=20), "at least 32 paths"),
    (dict(product="european-call", rng="sobol", paths=(1 << 36) + 1), r"at most 2\^36"),
])
def test_invalid_combinations(kwargs, words):
    with pytest.raises(InputError, match=words):
        Spec(**kwargs)


def test_cli_reports_the_factor(capsys):
    assert main(["asian-call", "--device", "cpu", "--paths", "5000", "--control-variate",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    v = out["variance_reduction"]
    assert v["factor"] > 50 and v["control"].startswith("geometric")
    assert out["stderr"] == pytest.approx(v["stderr_without_control"] / math.sqrt(v["factor"]))
    assert main(["european-call", "--device", "cpu", "--paths", "5000", "--rng", "sobol",
                 "--control-variate"]) == 0
    text = capsys.readouterr().out
    assert "variance-reduction factor" in text and "16 shifted replications" in text
    assert main(["everest", "--device", "cpu", "--control-variate"]) == 2
    assert "--control-variate applies" in capsys.readouterr().err
