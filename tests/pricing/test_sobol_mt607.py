"""The Sobol and MT607 generators (issue 23): the parameter searches of params.py on
known cases, the shipped data against the searches, the host twins against
straightforward implementations, and the device kernels (ptxlint's emulator) bit for
bit against the host twins; the flawed array-of-structures MT607 twin is reported."""
from __future__ import annotations

import math
from collections import Counter
from statistics import NormalDist

import numpy as np
import pytest

from pricing_kernels import Spec, catalog, params, pricer, rng
from pricing_kernels.build import compile_ptx
from pricing_kernels.catalog import BLOCK, Buffer, Launch, Scalar
from pricing_kernels.emulator import EmulatorRunner
from ptxlint import Severity

pytestmark = pytest.mark.slow  # the quick loop (-m 'not slow') leaves it out


# ---- GF(2) polynomial searches -------------------------------------------------------------
def test_primitive_polynomials_known_and_counted():
    """The first primitive polynomials (x + 1, x^2 + x + 1, x^3 + x + 1, x^3 + x^2 + 1,
    x^4 + x + 1, x^4 + x^3 + 1), and phi(2^d - 1) / d of each degree d <= 10."""
    polys = params.primitive_polynomials(10)
    assert polys[:6] == [0b11, 0b111, 0b1011, 0b1101, 0b10011, 0b11001]
    many = params.primitive_polynomials(120)
    by_degree = Counter(p.bit_length() - 1 for p in many)
    totient = lambda n: sum(math.gcd(n, k) == 1 for k in range(1, n + 1))  # noqa: E731
    for d in range(1, 8):
        assert by_degree[d] == totient(2**d - 1) // d
    assert not params.primitive(0b10101)  # x^4 + x^2 + 1 = (x^2 + x + 1)^2


def test_mersenne_irreducibility_test_on_known_polynomials():
    """x^(2^p) = x mod phi decides irreducibility for prime p: x^7 + x + 1 and the
    primitive trinomials x^607 + x^105 + 1, x^607 + x^273 + 1 pass; x^7 + x^3 + x^2 + 1
    (divisible by x + 1) and x^607 + x^2 + 1 fail, and agree with the order test for
    every polynomial of degree 7."""
    assert params.irreducible_mersenne((1 << 7) | 0b11)
    assert params.irreducible_mersenne((1 << 607) | (1 << 105) | 1)
    assert params.irreducible_mersenne((1 << 607) | (1 << 273) | 1)
    assert not params.irreducible_mersenne((1 << 7) | 0b1101)
    assert not params.irreducible_mersenne((1 << 607) | 0b101)
    for p in range(1 << 7, 1 << 8):
        if p & 1:
            assert params.irreducible_mersenne(p) == params.primitive(p), bin(p)


def test_berlekamp_massey_finds_the_lfsr_polynomial():
    """The sequence of x^7 + x + 1 (s_(n+7) = s_(n+1) + s_n) from a nonzero start."""
    s = [1, 0, 0, 1, 1, 0, 1]
    while len(s) < 40:
        s.append(s[-6] ^ s[-7])
    assert params.berlekamp_massey(s) == (1 << 7) | 0b11


def test_small_factor_sieve():
    assert params._has_small_factor(0b111 * ((1 << 30) | 0b1001))  # (x^2 + x + 1) g
    assert not params._has_small_factor((1 << 607) | (1 << 105) | 1)


# ---- Sobol --------------------------------------------------------------------------------------
def test_shipped_sobol_file_is_what_the_search_makes():
    rows = [line.split() for line in params.SOBOL_FILE.read_text().splitlines()
            if line and not line.startswith("#")]
    assert len(rows) == params.SOBOL_DIMS - 1
    want = params.sobol_table(params.SOBOL_DIMS)
    assert [[int(x) for x in r] for r in rows] == [[j, s, p, *m] for j, s, p, m in want]
    for j, s, p, m in want:
        assert params.primitive(p) and p.bit_length() - 1 == s
        assert all(x % 2 == 1 and x < 2 ** (k + 1) for k, x in enumerate(m))


def _points(n: int, dims: int) -> np.ndarray:
    """Unshifted points 0..n-1 (Gray-code order), shape (dims, n), from the recursion
    x_(i+1) = x_i ^ v_(c(i)), c(i) the lowest zero bit of i: the straightforward form."""
    v = params.sobol_directions()[:dims].astype(np.int64)
    out = np.zeros((dims, n), dtype=np.int64)
    x = np.zeros(dims, dtype=np.int64)
    for i in range(n):
        out[:, i] = x
        c = (~i & (i + 1)).bit_length() - 1
        x ^= v[:, c]
    return out


def test_sobol_words_are_the_gray_code_points_shifted():
    n, dims = 512, 8
    plain = _points(n, dims)
    key = rng.seed_key(99)
    for rep in (0, 5):
        samples = (np.uint64(rep) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
        words = np.concatenate([rng.sobol_words(samples, d, key, params.sobol_directions())
                                for d in range(dims // 4)]).astype(np.int64)
        shift = words ^ plain  # the same shift for every point of the replication
        assert (shift == shift[:, :1]).all()
        want = rng.philox4x32_10((np.arange(2), rep, rng.SOBOL_TAG, 0), key).T.reshape(-1)
        assert shift[:, 0].tolist() == want.astype(np.int64).tolist()


def test_sobol_points_are_stratified():
    """Each coordinate of the first 2^k points takes every interval [j/2^k, (j+1)/2^k)
    once, also after a digital shift; dimensions 0 and 1 form a (0, m, 2)-net: every
    elementary box of area 2^-m holds one of the first 2^m points."""
    pts = _points(1 << 10, 64)
    for k in (4, 7, 10):
        strata = pts[:, :1 << k] >> (32 - k)
        assert all(sorted(row) == list(range(1 << k)) for row in strata.tolist())
        shifted = (pts[:, :1 << k] ^ 0x5A5A5A5A) >> (32 - k)
        assert all(len(set(row)) == 1 << k for row in shifted.tolist())
    m = 8
    for a in range(m + 1):
        boxes = {(int(x) >> (32 - a), int(y) >> (32 - (m - a)))
                 for x, y in zip(pts[0, :1 << m], pts[1, :1 << m])}
        assert len(boxes) == 1 << m


def test_inverse_normal_accuracy_and_symmetry():
    words = np.arange(0, 2**32, 2**16 + 7, dtype=np.uint64).astype(np.uint32)
    u = rng.uniform01(np.concatenate([words, np.array([0, 0xFFFFFFFF], np.uint32)]))
    z = rng.inverse_normal(u).astype(np.float64)
    want = np.array([NormalDist().inv_cdf(float(x)) for x in u])
    assert np.max(np.abs(z - want) / np.maximum(1, np.abs(want))) < 1e-6
    assert (rng.inverse_normal(np.float32(1) - u) == -rng.inverse_normal(u)).all()
    assert np.all(np.isfinite(z)) and z[-2] == pytest.approx(-5.29470, abs=1e-5)
    x = u[:-2]
    assert np.max(np.abs(rng.log_f32(x) - np.log(x.astype(np.float64)))) < 2e-6


def test_brownian_bridge_is_an_orthogonal_map():
    """Each of W_1..W_n is set once, from points already known, and the increments are
    an orthogonal transform of the normals (independent standard normals again)."""
    for n in (1, 5, 16, 64, 100):
        m, l, r, *_ = rng.bridge_schedule(n)
        assert sorted(m.tolist()) == list(range(1, n + 1))
        known = {0}
        for k in range(n):
            assert int(l[k]) in known and (k == 0 or int(r[k]) in known)
            known.add(int(m[k]))
        basis = np.eye(n, dtype=np.float32)
        inc = rng.bridge_increments(basis, rng.bridge_schedule(n)).astype(np.float64)
        assert np.allclose(inc @ inc.T, np.eye(n), atol=1e-5)
        assert np.allclose(inc[:, 0], 1 / math.sqrt(n), atol=1e-6)  # z_0: the endpoint


# ---- MT607 ------------------------------------------------------------------------------------
def _rows():
    return [line.split() for line in params.MT607_FILE.read_text().splitlines()
            if line and not line.startswith("#")]


def test_mt607_parameters_definition():
    assert params.MT607_N * 32 - 1 == 607 and 1 <= params.MT607_M < params.MT607_N
    assert len(_rows()) >= 16  # the reuse rule is g mod sets


@pytest.mark.parametrize("index", (0, 1))
def test_shipped_mt607_set_is_what_the_search_finds(index):
    """The shipped `a` of set id is the search's first hit for id (id in the low 16
    bits), its characteristic polynomial (Berlekamp-Massey, from a different state
    than the search's) has degree 607 and is irreducible, hence primitive; the recorded
    k(v) are the tempered generator's."""
    row = _rows()[index]
    ident, a, b, c = int(row[0]), int(row[1], 16), int(row[2], 16), int(row[3], 16)
    assert a & 0xFFFF == ident and a >> 31 == 1
    assert params.find_a(ident) == (a, int(row[4]))
    state = [(0x9E3779B9 * (k + 1)) & 0xFFFFFFFF for k in range(19)]
    bits = [(w >> 7) & 1 for w in params.mt607_words(a, state, 2 * 607)]
    phi = params.berlekamp_massey(bits)
    assert phi.bit_length() - 1 == 607 and params.irreducible_mersenne(phi)
    if index == 0:
        ks = params.equidistribution(a, b, c)
        assert ks == [int(k) for k in row[5:]]
        assert all(k <= 607 // v for v, k in zip(range(1, 33), ks))
        assert ks[0] == 607


def test_mt607_rejects_a_reducible_matrix():
    """a = 0x80000001 gives a characteristic polynomial of lower degree (or reducible)."""
    phi = params.characteristic(0x80000001)
    assert phi.bit_length() - 1 < 607 or not params.irreducible_mersenne(phi)


def test_mt607_host_twin_equals_the_straightforward_generator():
    threads = 40
    state = rng.mt607_state(5, threads)
    s = state.reshape(22, threads).copy()
    got, pos = rng.mt607_draws(state, 45)
    assert pos == 45 % 19
    sets = params.mt607_params()
    for g in (0, 1, 17, 39):
        a, b, c = (int(x) for x in s[19:, g])
        assert (a, b, c) == tuple(int(x) for x in sets[g % len(sets)])
        want = [params.mt607_temper(w, b, c)
                for w in params.mt607_words(a, [int(x) for x in s[:19, g]], 45)]
        assert got[:, g].tolist() == want


# ---- device kernels on the emulator, bit for bit ------------------------------------------------
@pytest.fixture(scope="module")
def emulator():
    return EmulatorRunner("sm_80")


def test_emulated_mt607_raw_matches_host(emulator, compiler):
    launch = catalog.mt607_raw_launch(11, 1, 25)
    out, _ = pricer.run_launch(emulator, launch, lint=False, records=[])
    state = rng.mt607_state(11, BLOCK)
    want, _ = rng.mt607_draws(state, 25)
    assert (out["out"].reshape(25, BLOCK) == want).all()
    assert (out["state"] == state).all()  # written back in place


def test_emulated_sobol_words_and_normals_match_host(emulator, compiler):
    n, draws, rep, seed = 300, 2, 3, 7
    out, _ = pricer.run_launch(emulator, catalog.sobol_raw_launch(n, draws, rep, seed),
                               lint=False, records=[])
    samples = (np.uint64(rep) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
    words = np.concatenate([rng.sobol_words(samples, d, rng.seed_key(seed),
                                            params.sobol_directions()) for d in range(draws)])
    assert (out["words"].reshape(4 * draws, n) == words).all()
    assert (out["normals"].reshape(4 * draws, n).view(np.uint32)
            == rng.normal4_icdf(words).view(np.uint32)).all()


def test_emulated_brownian_bridge_matches_host(emulator, compiler):
    n, steps, rep, seed = 256, 13, 1, 7
    out, _ = pricer.run_launch(emulator, catalog.sobol_bridge_launch(n, steps, rep, seed),
                               lint=False, records=[])
    samples = (np.uint64(rep) << np.uint64(32)) | np.arange(n, dtype=np.uint64)
    z = np.concatenate([rng.normal4_icdf(rng.sobol_words(samples, d, rng.seed_key(seed),
                                                         params.sobol_directions()))
                        for d in range(-(-steps // 4))])[:steps]
    inc = rng.bridge_increments(z, rng.bridge_schedule(steps))
    assert (out["out"].reshape(steps, n).view(np.uint32) == inc.view(np.uint32)).all()


@pytest.mark.parametrize("spec", [
    Spec("asian-call", paths=1024, steps=16, rng="sobol", antithetic=True),
    Spec("european-put", paths=2048, rng="sobol"),
    Spec("asian-call", paths=1024, steps=12, rng="mt607"),
    Spec("everest", paths=512, rng="mt607", assets=3),
], ids=["asian-sobol", "european-sobol", "asian-mt607", "everest-mt607"])
def test_emulated_prices_equal_the_cpu_path(spec, emulator, compiler, monkeypatch):
    """Same points and streams on both: the prices and standard errors agree to the
    float32 arithmetic of the paths; the launches are clean at warning level."""
    cpu = pricer.price(spec, "cpu")
    monkeypatch.setattr(pricer, "open_runner", lambda *a: emulator)
    dev = pricer.price(spec, "emulator")
    assert dev.price == pytest.approx(cpu.price, rel=1e-5)
    assert dev.stderr == pytest.approx(cpu.stderr, rel=1e-3)
    assert dev.lint["warnings"] == 0


def test_flawed_mt607_aos_is_uncoalesced(compiler):
    """Every load and store of a state word (and the parameters) with lanes 88 bytes
    apart; the production twin (mt607_raw, structure of arrays) is clean."""
    blocks, draws = 2, 40
    aos = rng.mt607_state(7, blocks * BLOCK).reshape(22, -1).T.copy().reshape(-1)
    launch = Launch("flawed/mt607_aos.cu", {"BLOCK": BLOCK}, "mt607_raw_aos", blocks, BLOCK, [
        Buffer("out", np.zeros(draws * blocks * BLOCK, np.uint32), output=True),
        Buffer("state", aos, output=True), Scalar("draws", draws)])
    from pricing_kernels import prelaunch

    ptx = compile_ptx(launch.source, "sm_80", launch.defines).ptx
    loud = [d for d in prelaunch.check(launch, ptx, "sm_80").findings
            if d.severity >= Severity.WARNING]
    assert loud and {d.rule for d in loud} == {"uncoalesced-access"}
    assert {d.details["stride_bytes"] for d in loud} == {88}
    good = catalog.mt607_raw_launch(7, blocks, draws)
    ptx = compile_ptx(good.source, "sm_80", good.defines).ptx
    assert not [d for d in prelaunch.check(good, ptx, "sm_80").findings
                if d.severity >= Severity.WARNING]
