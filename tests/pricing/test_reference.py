"""The numpy references against closed forms and each other."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pricing_kernels import reference as ref

CASES = [(100, 100, 0.05, 0.2, 1.0), (100, 90, 0.05, 0.2, 1.0), (100, 110, 0.03, 0.25, 0.5),
         (50, 55, 0.01, 0.3, 2.0), (100, 100, 0.0, 0.2, 1.0)]


def test_black_scholes_known_value_and_parity():
    # the textbook case S = K = 100, r = 5%, vol = 20%, T = 1
    assert ref.black_scholes(100, 100, 0.05, 0.2, 1.0) == pytest.approx(10.450583572, abs=1e-8)
    for s, k, r, v, t in CASES:
        call = ref.black_scholes(s, k, r, v, t)
        put = ref.black_scholes(s, k, r, v, t, put=True)
        assert call - put == pytest.approx(s - k * math.exp(-r * t), abs=1e-10)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("put", (False, True))
def test_binomial_2000_steps_within_1e_3_of_black_scholes(case, put):
    assert abs(ref.binomial(*case, 2000, put=put) - ref.black_scholes(*case, put=put)) < 1e-3


def test_american_lattice():
    s, k, r, v, t = CASES[0]
    euro_put = ref.binomial(s, k, r, v, t, 500, put=True)
    amer_put = ref.binomial(s, k, r, v, t, 500, put=True, american=True)
    assert amer_put > euro_put + 0.3  # early exercise is worth something for a put
    # and nothing for a call without dividends
    assert ref.binomial(s, k, r, v, t, 500, american=True) == pytest.approx(
        ref.binomial(s, k, r, v, t, 500), abs=1e-12)


def test_lattice_probability_outside_0_1_is_refused():
    with pytest.raises(ValueError, match="outside"):
        ref.crr_parameters(0.9, 0.01, 1.0, 10)


def test_geometric_asian_monte_carlo_within_3_standard_errors():
    args = (100, 100, 0.05, 0.2, 1.0, 64)
    exact = ref.geometric_asian_call(*args)
    est = ref.mc_geometric_asian(*args, paths=200_000, seed=11)
    assert abs(est.price - exact) < 3 * est.stderr


def test_geometric_asian_with_one_step_is_a_european_call():
    s, k, r, v, t = CASES[2]
    assert ref.geometric_asian_call(s, k, r, v, t, 1) == pytest.approx(
        ref.black_scholes(s, k, r, v, t), rel=1e-12)


def test_control_variate_agrees_and_reduces_variance():
    args = (100, 100, 0.05, 0.2, 1.0, 32)
    plain = ref.mc_asian_call(*args, paths=100_000, seed=3, control_variate=False)
    cv = ref.mc_asian_call(*args, paths=100_000, seed=4)
    assert cv.stderr < plain.stderr / 10
    assert abs(cv.price - plain.price) < 3 * math.hypot(cv.stderr, plain.stderr)
    # the arithmetic average dominates the geometric one
    assert cv.price > ref.geometric_asian_call(*args)


def test_everest_bounds():
    corr = np.full((3, 3), 0.3) + 0.7 * np.eye(3)
    est = ref.mc_everest(0.05, 0.2, 1.0, corr, paths=50_000, seed=5)
    disc = math.exp(-0.05)
    assert disc <= est.price < disc * 1.2  # at least the discounted capital
    one = ref.mc_everest(0.05, 0.2, 1.0, np.eye(1), paths=50_000, seed=5)
    # one asset: max(1, S_T/S_0) = 1 + call struck at the initial price, per unit
    assert abs(one.price - (disc + ref.black_scholes(1, 1, 0.05, 0.2, 1.0))) < 4 * one.stderr


def test_monte_carlo_european_within_3_standard_errors():
    est = ref.mc_european(100, 100, 0.05, 0.2, 1.0, paths=200_000, seed=9, put=True)
    assert abs(est.price - ref.black_scholes(100, 100, 0.05, 0.2, 1.0, put=True)) < 3 * est.stderr


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("put", (False, True))
def test_trinomial_2000_steps_within_1e_3_of_black_scholes(case, put):
    assert abs(ref.trinomial(*case, 2000, put=put) - ref.black_scholes(*case, put=put)) < 1e-3


def test_trinomial_american_put_agrees_with_the_binomial_lattice():
    """Two discretisations of the same American put: within their O(1/n) errors."""
    s, k, r, v, t = CASES[0]
    tri = ref.trinomial(s, k, r, v, t, 2000, put=True, american=True)
    bino = ref.binomial(s, k, r, v, t, 2000, put=True, american=True)
    assert abs(tri - bino) < 2e-3
    assert tri > ref.black_scholes(s, k, r, v, t, put=True) + 0.3
