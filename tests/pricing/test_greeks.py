"""Dividend yield, Greeks and batches (issue #23): prices and Greeks against closed forms
within their error bars, on the CPU path and on ptxlint's emulator.

The Monte Carlo checks are |estimate - Black-Scholes| <= 3 standard errors, no absolute
slack: every estimator is unbiased for the model it simulates (float32 rounding of the
kernels is far below the standard errors at these path counts). The seeds are fixed, so
each test is deterministic; `test_greek_z_scores_look_normal` checks over 16 seeds that
the standardised errors are not systematically off (a bias would show long before a
3-sigma test fails). An Asian with one monitoring step is a European call, so the Asian
kernel's estimators are checked against Black-Scholes too.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from pricing_kernels import catalog, cpu, pricer
from pricing_kernels import reference as ref
from pricing_kernels.spec import InputError, Spec

MARKET = dict(spot=100.0, strike=95.0, rate=0.05, vol=0.25, maturity=0.7, div=0.03)
GREEKS = ("delta", "gamma", "vega", "theta", "rho")


def _bs(spec: Spec) -> dict:
    return ref.bs_greeks(spec.spot, spec.strike, spec.rate, spec.vol, spec.maturity,
                         put=spec.put, div=spec.div)


def _check_within_3_se(result) -> dict:
    """Price and every Greek within 3 standard errors of Black-Scholes; the z-scores."""
    s = result.spec
    bs_price = ref.black_scholes(s.spot, s.strike, s.rate, s.vol, s.maturity, put=s.put,
                                 div=s.div)
    z = {"price": (result.price - bs_price) / result.stderr}
    bs = _bs(s)
    for name in GREEKS:
        g = result.greeks[name]
        assert g["stderr"] > 0
        z[name] = (g["value"] - bs[name]) / g["stderr"]
    assert all(abs(v) <= 3 for v in z.values()), z
    return z


MC_CASES = [("european-call", {}), ("european-put", {}),
            ("european-call", {"antithetic": True}),
            ("asian-call", {"steps": 1}),  # one monitoring date: a European call
            ("asian-call", {"steps": 1, "antithetic": True, "rng": "mt"})]


@pytest.mark.parametrize("product,extra", MC_CASES)
def test_cpu_greeks_within_3_se_of_black_scholes(product, extra):
    spec = Spec(product, **MARKET, paths=200_000, seed=2024, greeks=True, **extra)
    result = pricer.price(spec, "cpu")
    _check_within_3_se(result)
    # standard errors shrink like 1/sqrt(paths): these are the precisions tested
    assert result.greeks["delta"]["stderr"] < 3e-3
    assert result.greeks["vega"]["stderr"] < 0.3


@pytest.mark.parametrize("product,extra", [("european-call", {}), ("european-put", {}),
                                           ("asian-call", {"steps": 1})])
def test_emulator_greeks_within_3_se_and_equal_to_the_cpu_twin(product, extra, compiler):
    spec = Spec(product, **MARKET, paths=8192, seed=77, greeks=True, **extra)
    emu = pricer.price(spec, "emulator")
    assert emu.device == "emulator" and emu.lint["warnings"] == 0
    _check_within_3_se(emu)
    host = pricer.price(spec, "cpu")  # the same numbers: float32 kernels vs float64 numpy
    assert emu.price == pytest.approx(host.price, rel=1e-5)
    for name in GREEKS:
        assert emu.greeks[name]["value"] == pytest.approx(host.greeks[name]["value"],
                                                          rel=1e-4, abs=1e-6)
        assert emu.greeks[name]["stderr"] == pytest.approx(host.greeks[name]["stderr"],
                                                           rel=1e-3)


def test_greek_z_scores_look_normal():
    """16 seeds x 5 Greeks of a European put at 20,000 paths: the standardised errors
    have mean near 0 and spread near 1 (unbiased estimators, right standard errors)."""
    zs = []
    for seed in range(16):
        spec = Spec("european-put", **MARKET, paths=20_000, seed=seed, greeks=True)
        r = pricer.price(spec, "cpu")
        bs = _bs(spec)
        zs += [(r.greeks[n]["value"] - bs[n]) / r.greeks[n]["stderr"] for n in GREEKS]
    zs = np.array(zs)
    assert abs(zs.mean()) < 0.5  # the mean of 80 correlated z-scores
    assert 0.5 < zs.std() < 1.6
    assert np.abs(zs).max() < 4.5


def _crn_difference(spec: Spec, field: str, h: float) -> float:
    """Central difference of the CPU price with common random numbers (same seed)."""
    up = pricer.price(replace(spec, **{field: getattr(spec, field) + h}), "cpu").price
    down = pricer.price(replace(spec, **{field: getattr(spec, field) - h}), "cpu").price
    return (up - down) / (2 * h)


@pytest.mark.parametrize("field,greek,h", [("vol", "vega", 1e-3), ("rate", "rho", 1e-4),
                                           ("maturity", "theta", 1e-4)])
def test_everest_pathwise_greeks_match_bump_and_reprice(field, greek, h):
    """The Everest note's pathwise vega (every volatility shifted together), rho and
    theta against central differences of the price on the same paths."""
    spec = Spec("everest", assets=3, corr=(0.3,), vols=(0.2, 0.3, 0.25), div=0.01,
                paths=50_000, seed=5, greeks=True)
    r = pricer.price(spec, "cpu")
    g = r.greeks[greek]
    if field == "vol":  # a parallel shift of the per-asset volatilities
        vols = np.array(spec.vols)
        up = pricer.price(replace(spec, vols=tuple(vols + h)), "cpu").price
        down = pricer.price(replace(spec, vols=tuple(vols - h)), "cpu").price
        fd = (up - down) / (2 * h)
    else:
        fd = _crn_difference(spec, field, h) * (-1 if greek == "theta" else 1)
    # the two estimators use the same paths: they differ far less than one stderr
    assert abs(g["value"] - fd) < 0.2 * g["stderr"], (g, fd)
    assert r.greeks["delta"]["value"] == pytest.approx(r.price / spec.spot)
    assert r.greeks["gamma"]["value"] == 0


@pytest.mark.parametrize("field,greek,h", [("spot", "delta", 0.05), ("vol", "vega", 1e-3),
                                           ("rate", "rho", 1e-4),
                                           ("maturity", "theta", 1e-4)])
def test_asian_pathwise_greeks_match_bump_and_reprice(field, greek, h):
    """The 16-step Asian's pathwise Greeks against central differences on the same paths
    (the same seed gives every bumped run the same normals)."""
    spec = Spec("asian-call", **MARKET, steps=16, paths=50_000, seed=9, greeks=True)
    g = pricer.price(spec, "cpu").greeks[greek]
    fd = _crn_difference(spec, field, h) * (-1 if greek == "theta" else 1)
    assert abs(g["value"] - fd) < 0.2 * g["stderr"], (g, fd)


def test_asian_gamma_within_3_se_of_bump_and_reprice_delta():
    """The Asian's gamma (likelihood ratio of the first step) against a central
    difference of the pathwise delta on the same paths; its stderr is large (the weight
    is z1 / (vol sqrt(dt))), so the check uses more paths."""
    spec = Spec("asian-call", **MARKET, steps=8, paths=200_000, seed=3, greeks=True)
    gamma = pricer.price(spec, "cpu").greeks["gamma"]
    h = 1.0
    up = pricer.price(replace(spec, spot=spec.spot + h), "cpu").greeks["delta"]
    down = pricer.price(replace(spec, spot=spec.spot - h), "cpu").greeks["delta"]
    fd = (up["value"] - down["value"]) / (2 * h)
    assert abs(gamma["value"] - fd) <= 3 * gamma["stderr"], (gamma, fd)


# ---- lattices ----------------------------------------------------------------------------
@pytest.mark.parametrize("product", ("binomial-call", "binomial-put"))
def test_lattice_greeks_near_black_scholes(product):
    """1024 levels: within 0.5% (gamma, delta and theta from the nodes two levels down,
    vega and rho by repricing), plus a small absolute slack for near-zero values."""
    spec = Spec(product, **MARKET, greeks=True)
    r = pricer.price(spec, "cpu")
    bs = _bs(spec)
    for name in GREEKS:
        g = r.greeks[name]
        assert g["stderr"] is None
        assert abs(g["value"] - bs[name]) <= 5e-3 * abs(bs[name]) + 1e-4, (name, g, bs)


def test_american_call_without_dividend_has_the_european_greeks():
    spec = Spec("american-call", **{**MARKET, "div": 0.0}, steps=1024, greeks=True)
    r = pricer.price(spec, "cpu", reference=True)
    assert r.ref_greeks is not None
    for name in GREEKS:
        assert abs(r.greeks[name]["value"] - r.ref_greeks[name]) \
            <= 5e-3 * abs(r.ref_greeks[name]) + 1e-4


def test_american_put_greeks_against_the_trinomial_lattice():
    """Delta and gamma from the binomial nodes against central differences of the
    (independent) trinomial lattice. A lattice price wiggles with the spot (the strike's
    place among the nodes), so the differences take 4000 levels and a 2% bump, and the
    tolerance is 1% (at h = 1 and 2000 levels the trinomial's gamma is 4% off its
    limit; the node gamma moves by 0.05% from 1024 to 4096 levels)."""
    spec = Spec("american-put", **MARKET, steps=1024, greeks=True)
    g = pricer.price(spec, "cpu").greeks

    def tri(s):
        return ref.trinomial(s, spec.strike, spec.rate, spec.vol, spec.maturity, 4000,
                             put=True, american=True, div=spec.div)
    h = 2.0
    up, mid, down = tri(100.0 + h), tri(100.0), tri(100.0 - h)
    assert g["delta"]["value"] == pytest.approx((up - down) / (2 * h), rel=5e-3)
    assert g["gamma"]["value"] == pytest.approx((up - 2 * mid + down) / h**2, rel=1e-2)


def test_lattice_greeks_on_the_emulator_equal_the_cpu(compiler):
    spec = Spec("american-put", **MARKET, steps=96, greeks=True)
    emu, host = pricer.price(spec, "emulator"), pricer.price(spec, "cpu")
    assert emu.lint["warnings"] == 0
    assert emu.price == pytest.approx(host.price, rel=1e-12)
    for name in GREEKS:
        assert emu.greeks[name]["value"] == pytest.approx(host.greeks[name]["value"],
                                                          rel=1e-8, abs=1e-10)


# ---- dividends ---------------------------------------------------------------------------
@pytest.mark.parametrize("product", ("european-call", "european-put"))
def test_dividend_prices_within_3_se(product):
    spec = Spec(product, **{**MARKET, "div": 0.06}, paths=100_000, seed=1)
    r = pricer.price(spec, "cpu", reference=True)
    assert r.reference == pytest.approx(ref.black_scholes(100, 95, 0.05, 0.25, 0.7,
                                                          put=spec.put, div=0.06))
    assert abs(r.price - r.reference) <= 3 * r.stderr


def test_dividend_lowers_a_call_and_raises_a_put():
    for product, sign in (("binomial-call", -1), ("binomial-put", 1)):
        base = pricer.price(Spec(product, steps=256), "cpu").price
        paid = pricer.price(Spec(product, steps=256, div=0.04), "cpu").price
        assert sign * (paid - base) > 0.5


def test_lattice_with_dividend_converges_to_black_scholes():
    for put in (False, True):
        lattice = ref.binomial(100, 95, 0.05, 0.25, 0.7, 2000, put=put, div=0.03)
        assert lattice == pytest.approx(ref.black_scholes(100, 95, 0.05, 0.25, 0.7,
                                                          put=put, div=0.03), abs=2e-3)


def test_american_call_with_dividend_is_worth_more_and_uses_the_trinomial_reference():
    spec = Spec("american-call", spot=100, strike=90, rate=0.02, div=0.08, steps=512)
    r = pricer.price(spec, "cpu", reference=True)
    european = ref.black_scholes(100, 90, 0.02, 0.2, 1.0, div=0.08)
    assert r.price > european + 0.1  # early exercise pays when the dividend is high
    assert r.reference_method.startswith("trinomial lattice")
    assert abs(r.price - r.reference) < 0.02


def test_geometric_asian_closed_form_with_dividend():
    args = (100.0, 95.0, 0.05, 0.25, 0.7, 12)
    exact = ref.geometric_asian_call(*args, div=0.04)
    est = ref.mc_geometric_asian(*args, paths=200_000, seed=11, div=0.04)
    assert abs(est.price - exact) <= 3 * est.stderr
    assert exact < ref.geometric_asian_call(*args)


def test_asian_with_dividend_within_3_se_of_the_reference():
    spec = Spec("asian-call", **MARKET, steps=12, paths=100_000, seed=4)
    r = pricer.price(spec, "cpu", reference=True)
    assert abs(r.price - r.reference) <= 3 * math.hypot(r.stderr, r.reference_error)


def test_everest_per_asset_volatilities_and_dividends():
    spec = Spec("everest", assets=3, corr=(0.4,), vols=(0.15, 0.3, 0.2),
                divs=(0.0, 0.02, 0.05), paths=100_000, seed=8)
    r = pricer.price(spec, "cpu", reference=True)
    assert abs(r.price - r.reference) <= 3 * math.hypot(r.stderr, r.reference_error)
    # a higher dividend on one asset lowers the worst performance: the note is worth less
    richer = replace(spec, divs=(0.0, 0.02, 0.15))
    assert pricer.price(richer, "cpu").price < r.price
    a = catalog.everest_asset(spec)
    assert a[:3] == pytest.approx((0.05 - np.array([0, 0.02, 0.05])
                                   - 0.5 * np.array([0.15, 0.3, 0.2]) ** 2), rel=1e-6)


@pytest.mark.parametrize("kwargs,message", [
    ({"product": "european-call", "div": float("nan")}, "--div must be a finite"),
    ({"product": "european-call", "div": 1.0}, "--div must be a finite dividend yield"),
    ({"product": "european-call", "vols": (0.2, 0.3)},
     "--vol takes one value for european-call"),
    ({"product": "everest", "assets": 3, "vols": (0.2, 0.3)},
     "--vol takes one value or one per asset (3 for --assets 3), got 2"),
    ({"product": "everest", "assets": 2, "divs": (0.01, 2.0)}, "--div must be a finite"),
    ({"product": "everest", "assets": 2, "vols": (0.2, -0.1)}, "--vol must be positive"),
    ({"product": "binomial-call", "steps": 2, "greeks": True}, "--steps of at least 3"),
])
def test_input_errors(kwargs, message):
    with pytest.raises(InputError) as err:
        Spec(**kwargs)
    assert message in str(err.value)


# ---- batches -----------------------------------------------------------------------------
def test_mc_batch_prices_each_strike_on_the_same_paths():
    spec = Spec("european-put", **MARKET, paths=20_000, seed=6, greeks=True)
    grid = pricer.price_grid(spec, [90, 100, 110], [0.5, 1.0], "cpu")
    assert [(r.spec.maturity, r.spec.strike) for r in grid] == [
        (0.5, 90), (0.5, 100), (0.5, 110), (1.0, 90), (1.0, 100), (1.0, 110)]
    for r in grid:
        one = pricer.price(replace(spec, strike=r.spec.strike, maturity=r.spec.maturity),
                           "cpu")
        assert r.price == pytest.approx(one.price, rel=1e-12)
        assert r.greeks["vega"]["value"] == pytest.approx(one.greeks["vega"]["value"],
                                                          rel=1e-12)
    # the same paths: prices are monotone in the strike
    assert grid[0].price < grid[1].price < grid[2].price


class _Recording:
    """Records launches, returns ones in `result` (any number of pairs)."""

    name, arch = "recording", "sm_80"

    def __init__(self) -> None:
        self.launches = []

    def run(self, launch, ptx):
        self.launches.append((launch, ptx))
        return {a.name: np.ones_like(a.data) for a in launch.args
                if getattr(a, "output", False)}, 0.0


def test_mc_batch_is_one_launch_per_maturity(compiler, monkeypatch):
    recording_runner = _Recording()
    monkeypatch.setattr(pricer, "open_runner", lambda *a: recording_runner)
    spec = Spec("asian-call", paths=4096, steps=8)
    pricer.price_grid(spec, [90, 100, 110], [0.5, 1.0], "gpu")
    kernels = [(launch.kernel, launch.defines.get("NSTRIKES"))
               for launch, _ in recording_runner.launches]
    assert kernels == [("asian", 3), ("reduce_final", None)] * 2


def test_emulator_batch_equals_the_cpu(compiler):
    spec = Spec("european-call", **MARKET, paths=4096, seed=3)
    emu = pricer.price_grid(spec, [80, 95, 120], None, "emulator")
    host = pricer.price_grid(spec, [80, 95, 120], None, "cpu")
    assert emu[0].lint["warnings"] == 0
    for e, h in zip(emu, host):
        assert e.price == pytest.approx(h.price, rel=1e-5)


def test_more_strikes_than_a_launch_takes_are_split():
    spec = Spec("european-call", paths=4000, seed=1)
    strikes = list(range(70, 70 + 3 * catalog.MAX_STRIKES, 3))
    grid = pricer.price_grid(spec, strikes, None, "cpu")
    s1, _ = cpu.mc_sums_n(spec, 4000, strikes=strikes[-4:])
    assert grid[-1].price == pytest.approx(
        math.exp(-spec.rate * spec.maturity) * s1[-1] / 4000, rel=1e-12)


def test_lattice_batch():
    spec = Spec("american-put", steps=128, greeks=True)
    grid = pricer.price_grid(spec, [90, 110], [0.25, 2.0], "cpu")
    for r in grid:
        one = pricer.price(replace(spec, strike=r.spec.strike, maturity=r.spec.maturity),
                           "cpu")
        assert r.price == one.price and r.greeks == one.greeks


# ---- command line ------------------------------------------------------------------------
def test_cli_greeks_text(capsys):
    from pricing_kernels.cli import main  # noqa: PLC0415

    assert main(["european-call", "--device", "cpu", "--paths", "50000", "--div", "0.03",
                 "--greeks", "--reference"]) == 0
    out = capsys.readouterr().out
    for name in GREEKS:
        line = next(x for x in out.splitlines() if x.strip().startswith(name))
        assert " ± " in line and "Black-Scholes" in line
    assert "div 0.03" in out


def test_cli_greeks_json(capsys):
    import json  # noqa: PLC0415

    from pricing_kernels.cli import main  # noqa: PLC0415

    assert main(["european-put", "--device", "cpu", "--paths", "50000", "--div", "0.02",
                 "--strike", "105", "--greeks", "--reference", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["greeks"]) == set(GREEKS)
    assert out["inputs"]["div"] == 0.02 and out["inputs"]["strike"] == 105.0
    assert out["reference_method"] == "Black-Scholes closed form"
    for name in GREEKS:
        g = out["greeks"][name]
        assert set(g) == {"value", "stderr", "method"}
        assert abs(g["value"] - out["reference_greeks"][name]) <= 3 * g["stderr"]


def test_cli_json_without_greeks_has_no_greek_keys(capsys):
    import json  # noqa: PLC0415

    from pricing_kernels.cli import main  # noqa: PLC0415

    assert main(["european-call", "--device", "cpu", "--paths", "1000", "--format",
                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "greeks" not in out and out["inputs"]["div"] == 0.0


def test_cli_batch_json_and_table(capsys):
    import json  # noqa: PLC0415

    from pricing_kernels.cli import main  # noqa: PLC0415

    args = ["european-call", "--device", "cpu", "--paths", "20000", "--strike",
            "90,100,110", "--maturity", "0.5,1", "--greeks"]
    assert main(args + ["--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out, list) and len(out) == 6
    assert [(o["inputs"]["maturity"], o["inputs"]["strike"]) for o in out] == [
        (0.5, 90.0), (0.5, 100.0), (0.5, 110.0), (1.0, 90.0), (1.0, 100.0), (1.0, 110.0)]
    assert all(set(o["greeks"]) == set(GREEKS) for o in out)
    assert main(args) == 0
    text = capsys.readouterr().out.splitlines()
    header = text[1].split()
    assert header[:4] == ["maturity", "strike", "price", "stderr"]
    assert header[4:] == list(GREEKS)
    assert len([x for x in text if x.strip().startswith(("0.5 ", "1 "))]) == 6


def test_cli_lattice_batch(capsys):
    import json  # noqa: PLC0415

    from pricing_kernels.cli import main  # noqa: PLC0415

    assert main(["binomial-put", "--device", "cpu", "--steps", "200", "--strike", "90,100",
                 "--div", "0.01", "--reference", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["inputs"]["strike"] for o in out] == [90.0, 100.0]
    assert all(abs(o["price"] - o["reference"]) < 0.02 for o in out)


@pytest.mark.parametrize("args,message", [
    (["european-call", "--div", "abc"], "--div takes comma-separated numbers, got 'abc'"),
    (["european-call", "--strike", "90,x"], "--strike takes comma-separated numbers"),
    (["european-call", "--strike", "90,100,90"], "--strike lists 90 twice"),
    (["european-call", "--maturity", "1,-1"], "--maturity must be positive, got -1.0"),
    (["european-call", "--vol", "0.2,0.3"], "--vol takes one value for european-call"),
    (["european-call", "--spot", "100,90"], "--spot takes one value, got 2"),
    (["everest", "--spot", "100,90"], "the note pays on the performances"),
    (["everest", "--strike", "90,100"], "--strike does not apply to everest"),
    (["everest", "--assets", "3", "--div", "0.01,0.02"],
     "--div takes one value or one per asset (3 for --assets 3), got 2"),
    (["binomial-call", "--steps", "2", "--greeks"], "--steps of at least 3"),
    (["binomial-call", "--vol", "0.01", "--rate", "0.5", "--steps", "4", "--maturity",
      "0.5,1"], "outside (0, 1)"),
    (["european-call", "--div", "-1.5"], "--div must be a finite dividend yield"),
])
def test_cli_invalid_inputs_exit_2(args, message, capsys):
    from pricing_kernels.cli import main  # noqa: PLC0415

    assert main([*args, "--device", "cpu", "--paths" if "binomial" not in args[0] else
                 "--no-lint", *(["1000"] if "binomial" not in args[0] else [])]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
