"""The CPU path (the kernels re-enacted in numpy) against the references."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pricing_kernels import Spec, catalog, cpu, price, rng
from pricing_kernels.reference import black_scholes

RNGS = ("philox", "mt", "lcg")


def _within(result, reference: float, ref_stderr: float = 0.0, k: float = 3.0) -> bool:
    return abs(result.price - reference) < k * math.hypot(result.stderr, ref_stderr)


@pytest.mark.parametrize("gen", RNGS)
@pytest.mark.parametrize("normals", ("thread", "paired"))
def test_european_within_3_standard_errors(gen, normals):
    for product in ("european-call", "european-put"):
        r = price(Spec(product, paths=40_000, rng=gen, normals=normals, seed=21), "cpu")
        assert _within(r, black_scholes(100, 100, 0.05, 0.2, 1.0, put=product.endswith("put")))


@pytest.mark.parametrize("gen", RNGS)
def test_asian_within_3_standard_errors(gen):
    r = price(Spec("asian-call", paths=20_000, steps=16, rng=gen, seed=5), "cpu")
    # the reference is itself an estimate (control variate, 100k paths)
    assert r.reference_method.startswith("numpy Monte Carlo")
    assert _within(r, r.reference, 0.002)


@pytest.mark.parametrize("gen", RNGS)
def test_everest_within_3_standard_errors(gen):
    spec = Spec("everest", paths=20_000, assets=5, corr=(0.3,), rng=gen, normals="paired")
    r = price(spec, "cpu")
    assert _within(r, r.reference, 0.03)


def test_antithetic_reduces_the_error():
    plain = price(Spec("european-call", paths=40_000), "cpu")
    anti = price(Spec("european-call", paths=40_000, antithetic=True), "cpu")
    assert anti.stderr < 0.8 * plain.stderr
    assert _within(anti, black_scholes(100, 100, 0.05, 0.2, 1.0))


def test_lattice_on_the_cpu():
    r = price(Spec("binomial-put", steps=2000), "cpu")
    assert r.stderr is None and r.paths is None and r.rng is None
    assert abs(r.price - r.reference) < 1e-3
    american = price(Spec("american-put", steps=500), "cpu")
    assert american.price > r.price


def test_samples_past_the_end_do_not_count():
    """Thread items cover whole groups; the last group's extra samples are dropped."""
    spec = Spec("european-call", paths=5, rng="philox")
    s1, s2 = cpu.mc_sums(spec, 5)
    z = rng.normal4_thread(rng.philox4x32_10((0, np.arange(2, dtype=np.uint64), 0, 0),
                                             rng.seed_key(spec.seed))).astype(np.float64)
    mu, sig = catalog.mc_scalars(spec)
    payoff = np.maximum(100 * np.exp(mu + sig * z.T.reshape(-1)[[0, 1, 2, 3, 4]]) - 100, 0)
    # item i, normal k is sample 4i + k: the (4, items) array read item by item
    assert s1 == pytest.approx(payoff.sum(), rel=1e-12)
    assert s2 == pytest.approx((payoff**2).sum(), rel=1e-12)


def test_progress_reports_every_round():
    seen = []
    spec = Spec("european-put", paths=4 * catalog.MAX_BLOCKS * catalog.BLOCK * 2 + 8)
    cpu.mc_sums(spec, spec.paths, lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
