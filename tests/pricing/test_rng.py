"""Host generators against published known answers, and the vectorised forms against
straightforward ones."""
from __future__ import annotations

import numpy as np
import pytest

from pricing_kernels import rng

# Philox4x32-10 known-answer vectors published with Random123 (Salmon et al., SC'11):
# counter (4 words), key (2 words) -> output (4 words).
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]

# MT19937 seeded with 5489 (init_genrand): its first outputs (Matsumoto and Nishimura's
# reference output) and its 10000th, which C++11 requires of std::mt19937.
MT_FIRST = [3499211612, 581869302, 3890346734, 3586334585, 545404204, 4161255391,
            3922919429, 949333985, 2715962298, 1323567403]
MT_10000TH = 4123659995


@pytest.mark.parametrize("counter,key,expected", PHILOX_KAT)
def test_philox_known_answers(counter, key, expected):
    assert tuple(int(x) for x in rng.philox4x32_10(counter, key)) == expected


def test_philox_vectorises_over_counters():
    c0 = np.arange(5, dtype=np.uint64)
    out = rng.philox4x32_10((c0, 7, 0, 0), (1, 2))
    assert out.shape == (4, 5) and out.dtype == np.uint32
    for i in range(5):
        assert (out[:, i] == rng.philox4x32_10((i, 7, 0, 0), (1, 2))).all()


def test_mt19937_reference_outputs():
    out = rng.mt19937(5489, 10000)
    assert [int(x) for x in out[:10]] == MT_FIRST
    assert int(out[-1]) == MT_10000TH


def _twist_sequential(mt: list[int]) -> list[int]:
    mt = list(mt)
    for i in range(624):
        y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
        mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
    return mt


def test_sliced_twist_equals_the_sequential_recurrence():
    state = rng.mt_seed([1, 2, 3])
    want = [_twist_sequential([int(v) for v in row]) for row in state]
    rng.mt_twist(state)
    assert state.tolist() == want


def test_warp_draws_follow_the_generator_order():
    """Lane l of draw d takes word 32 (d mod 19) + l of twist d // 19: the reference
    stream with the last 16 words of each twist skipped."""
    seed = 5489
    out = rng.mt_warp_draws(rng.mt_seed([seed]), 40)  # (draws, warps, 32)
    stream = rng.mt19937(seed, 3 * 624).reshape(3, 624)[:, :608].reshape(-1)
    assert (out[:, 0, :].reshape(-1) == stream[:40 * 32]).all()


def test_lcg_recurrence_and_seeds():
    seeds = rng.lcg_seeds(7, 64)
    assert len(set(seeds.tolist())) == 64
    words, final = rng.lcg_draws(seeds[:2], 3)
    x = int(seeds[0])
    for d in range(3):
        x = (1664525 * x + 1013904223) % 2**32
        assert int(words[d, 0]) == x
    assert int(final[0]) == x


def test_uniform01_is_open_and_exact():
    words = np.array([0, 511, 512, 0xFFFFFFFF], dtype=np.uint32)
    u = rng.uniform01(words)
    assert u.dtype == np.float32
    assert u.tolist() == [2.0**-24, 2.0**-24, 3 * 2.0**-24, 1 - 2.0**-24]


@pytest.mark.parametrize("form", (rng.normal4_thread, rng.normal4_paired))
def test_box_muller_moments(form):
    words = rng.philox4x32_10((0, np.arange(1 << 16, dtype=np.uint64), 0, 0), (3, 4))
    z = form(words).astype(np.float64).reshape(-1)
    n = z.size
    assert abs(z.mean()) < 4 / np.sqrt(n)
    assert abs(z.var() - 1) < 4 * np.sqrt(2 / n)
    assert abs((z**4).mean() - 3) < 0.1  # kurtosis of a normal


def test_paired_form_pairs_neighbouring_lanes():
    words = rng.philox4x32_10((0, np.arange(4, dtype=np.uint64), 0, 0), (5, 6))
    z = rng.normal4_paired(words)
    u = rng.uniform01(words)
    r = np.sqrt(-2 * np.log(u[:, 0].astype(np.float64)))
    a = 2 * np.pi * (u[:, 1].astype(np.float64) - 0.5)
    assert np.allclose(z[:, 0], r * np.cos(a), rtol=1e-5)
    assert np.allclose(z[:, 1], r * np.sin(a), rtol=1e-5)
