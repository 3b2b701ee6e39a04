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
    r = price(Spec("asian-call", paths=20_000, steps=16, rng=gen, seed=5), "cpu",
              reference=True)
    # the reference is itself an estimate (control variate, 100k paths)
    assert r.reference_method.startswith("numpy Monte Carlo")
    assert 0 < r.reference_error < 0.002
    assert _within(r, r.reference, r.reference_error)


@pytest.mark.parametrize("gen", RNGS)
def test_everest_within_3_standard_errors(gen):
    spec = Spec("everest", paths=20_000, assets=5, corr=(0.3,), rng=gen, normals="paired")
    r = price(spec, "cpu", reference=True)
    assert 0 < r.reference_error < 0.03
    assert _within(r, r.reference, r.reference_error)


def test_antithetic_reduces_the_error():
    plain = price(Spec("european-call", paths=40_000), "cpu")
    anti = price(Spec("european-call", paths=40_000, antithetic=True), "cpu")
    assert anti.stderr < 0.8 * plain.stderr
    assert _within(anti, black_scholes(100, 100, 0.05, 0.2, 1.0))


def test_lattice_on_the_cpu():
    r = price(Spec("binomial-put", steps=2000), "cpu", reference=True)
    assert r.stderr is None and r.paths is None and r.rng is None
    assert r.reference_method == "Black-Scholes closed form" and r.reference_error == 0
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


def test_references_are_optional():
    r = price(Spec("asian-call", paths=2000, steps=8), "cpu")
    assert r.ref is None and r.reference is None and r.to_json()["reference"] is None


def test_american_put_reference_is_another_method():
    """The CPU path prices on the binomial lattice; the reference is a trinomial lattice,
    so the difference is not identically 0, and the two agree within the lattice error
    (O(1/n): about 2 / steps at the money, as the European lattice's error shows) plus
    the reference's own error."""
    r = price(Spec("american-put", steps=500), "cpu", reference=True)
    assert r.reference_method.startswith("trinomial lattice")
    assert r.price != r.reference
    assert abs(r.price - r.reference) < 2.5 / 500 + 3 * r.reference_error
    assert 0 < r.reference_error < 1e-3
    call = price(Spec("american-call", steps=500), "cpu", reference=True)
    assert call.reference_method.startswith("Black-Scholes")
    assert abs(call.price - call.reference) < 2.5 / 500


def test_sample_indices_past_2_32_get_their_own_numbers():
    """Samples [2^32 - 1024, 2^32 + 1024): their Philox counters carry the index's high
    word (counter (0, s mod 2^32, s div 2^32, 0)), so the samples past 2^32 are not the
    first samples again, and the sums are those of the samples' own normals."""
    spec = Spec("european-call", rng="philox", seed=3)
    first, count = (1 << 32) - 1024, 2048
    s1, s2 = cpu.mc_sums(spec, count, first=first)
    items = (first + np.arange(count // 4, dtype=np.uint64) * 4) // np.uint64(4)
    words = rng.philox4x32_10((0, items & np.uint64(0xFFFFFFFF), items >> np.uint64(32), 0),
                              rng.seed_key(spec.seed))
    z = rng.normal4_thread(words).astype(np.float64).T.reshape(-1)  # sample 4i + k
    mu, sig = catalog.mc_scalars(spec)
    payoff = np.maximum(100 * np.exp(mu + sig * z) - 100, 0)
    assert s1 == pytest.approx(payoff.sum(), rel=1e-12)
    assert s2 == pytest.approx((payoff**2).sum(), rel=1e-12)
    wrapped, _ = cpu.mc_sums(spec, 1024, first=0)  # what a 32-bit index would reuse
    assert s1 - cpu.mc_sums(spec, 1024, first=first)[0] != pytest.approx(wrapped)


def test_extreme_uniforms_give_finite_normals():
    """Words giving the smallest and largest uniforms, 2^-24 and 1 - 2^-24: the radius's
    radicand is clamped at 0 (as on the device), so no NaN."""
    low, high = 0x000001FF, 0xFFFFFFFF
    assert rng.uniform01(np.array([low, high])).tolist() == [2.0**-24, 1 - 2.0**-24]
    words = np.array([[high, low, low, high], [low, high, high, low]], np.uint32).T
    for form in (rng.normal4_thread, rng.normal4_paired):
        z = form(words)
        assert np.isfinite(z).all()
