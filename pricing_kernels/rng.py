"""Host twins of the device generators (`kernels/rng.cuh`, `kernels/gen.cuh`), in numpy.

The raw 32-bit words match the device bit for bit; `uniform01` is exact too (an odd
multiple of 2^-24, converted without rounding). Box-Muller normals agree with the device
to float32 rounding only: the device uses the fast `__logf`/`__sincosf`.
"""
from __future__ import annotations

import numpy as np

U32 = np.uint32
MASK32 = 0xFFFFFFFF

# ---- Philox4x32-10 ---------------------------------------------------------------------------
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85


def philox4x32_10(counter, key) -> np.ndarray:
    """Philox4x32-10 of `counter` (four uint32 arrays or scalars, broadcast together)
    under `key` (two uint32): an array of shape (4, ...) of uint32."""
    c = [np.asarray(x, dtype=np.uint64) & MASK32 for x in counter]
    c = list(np.broadcast_arrays(*c))
    k0, k1 = (int(k) & MASK32 for k in key)
    for _ in range(10):
        p0 = c[0] * np.uint64(PHILOX_M0)  # a 64-bit product of two 32-bit words is exact
        p1 = c[2] * np.uint64(PHILOX_M1)
        hi0, lo0 = p0 >> np.uint64(32), p0 & np.uint64(MASK32)
        hi1, lo1 = p1 >> np.uint64(32), p1 & np.uint64(MASK32)
        c = [hi1 ^ c[1] ^ np.uint64(k0), lo1, hi0 ^ c[3] ^ np.uint64(k1), lo0]
        k0, k1 = (k0 + PHILOX_W0) & MASK32, (k1 + PHILOX_W1) & MASK32
    return np.stack(c).astype(U32)


def seed_key(seed: int) -> tuple[int, int]:
    """The Philox key of a 64-bit seed: its low and high words."""
    return seed & MASK32, (seed >> 32) & MASK32


# ---- LCG -------------------------------------------------------------------------------------
LCG_A, LCG_C = 1664525, 1013904223


def lcg_seeds(seed: int, threads: int) -> np.ndarray:
    """Starting states of `threads` LCG streams: Philox words of (thread, 0, 0, 0), so
    that neighbouring threads do not start from neighbouring states."""
    return philox4x32_10((np.arange(threads, dtype=np.uint64), 0, 0, 0), seed_key(seed))[0]


def lcg_draws(state: np.ndarray, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """`draws` successive words of every stream (shape (draws, streams)) and the final
    states."""
    x = np.asarray(state, dtype=np.uint64).copy()
    out = np.empty((draws, x.size), dtype=U32)
    for d in range(draws):
        x = (x * np.uint64(LCG_A) + np.uint64(LCG_C)) & np.uint64(MASK32)
        out[d] = x
    return out, x.astype(U32)


# ---- MT19937 ---------------------------------------------------------------------------------
MT_N, MT_M = 624, 397
MT_MATRIX_A, MT_UPPER, MT_LOWER = 0x9908B0DF, 0x80000000, 0x7FFFFFFF
MT_ROUNDS = 19  # full rounds of 32 words per twist used by the Monte Carlo kernels


def mt_seed(seeds) -> np.ndarray:
    """`init_genrand` of each seed: an array of shape (len(seeds), 624) of uint32."""
    seeds = np.atleast_1d(np.asarray(seeds, dtype=np.uint64)) & np.uint64(MASK32)
    s = np.empty((seeds.size, MT_N), dtype=np.uint64)
    s[:, 0] = seeds
    for i in range(1, MT_N):
        prev = s[:, i - 1]
        s[:, i] = (np.uint64(1812433253) * (prev ^ (prev >> np.uint64(30))) + np.uint64(i)) \
            & np.uint64(MASK32)
    return s.astype(U32)


def mt_twist(state: np.ndarray) -> None:
    """Twist every row of `state` (shape (streams, 624), uint32) in place.

    Word i becomes s[i + 397] ^ f(s[i], s[i + 1]), where s[i + 397] (indices mod 624) is
    already new for i >= 227. The recurrence is evaluated in slices whose inputs are all
    final: [0, 227) reads old words, [227, 454) reads [0, 227), [454, 623) reads
    [227, 396), and word 623 reads the new words 0 and 396.
    """
    s = state
    for lo, hi in ((0, 227), (227, 454), (454, 623), (623, 624)):
        i = np.arange(lo, hi)
        nxt = s[:, (i + 1) % MT_N]
        y = (s[:, i] & U32(MT_UPPER)) | (nxt & U32(MT_LOWER))
        mag = np.where(y & U32(1), U32(MT_MATRIX_A), U32(0))
        s[:, i] = s[:, (i + MT_M) % MT_N] ^ (y >> U32(1)) ^ mag


def mt_temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> U32(11))
    y = y ^ ((y << U32(7)) & U32(0x9D2C5680))
    y = y ^ ((y << U32(15)) & U32(0xEFC60000))
    return y ^ (y >> U32(18))


def mt19937(seed: int, count: int) -> np.ndarray:
    """The first `count` outputs of the reference MT19937 seeded with `seed`."""
    state = mt_seed([seed])
    out = []
    for _ in range(-(-count // MT_N)):
        mt_twist(state)
        out.append(mt_temper(state[0]))
    return np.concatenate(out)[:count] if out else np.empty(0, dtype=U32)


def mt_warp_draws(state: np.ndarray, draws: int) -> np.ndarray:
    """What the lanes of each warp draw in the Monte Carlo kernels (`mt_next`): per twist
    the first 19 rounds of 32 words, lane l taking word 32r + l of round r. Returns shape
    (draws, warps, 32); `state` (warps, 624) is advanced in place."""
    warps = state.shape[0]
    out = np.empty((draws, warps, 32), dtype=U32)
    for d0 in range(0, draws, MT_ROUNDS):
        mt_twist(state)
        rounds = min(MT_ROUNDS, draws - d0)
        words = mt_temper(state[:, :rounds * 32]).reshape(warps, rounds, 32)
        out[d0:d0 + rounds] = words.transpose(1, 0, 2)
    return out


# ---- uniforms and normals --------------------------------------------------------------------
def uniform01(words: np.ndarray) -> np.ndarray:
    """(2m + 1) / 2^24 from the top 23 bits m of each word, as float32 (exact)."""
    odd = ((np.asarray(words, dtype=U32) >> U32(9)) << U32(1)) | U32(1)
    return odd.astype(np.float32) * np.float32(2.0 ** -24)


def _radius(u: np.ndarray) -> np.ndarray:
    # clamped as bm_radius is (normals.cuh): the device's __logf may return >= 0 near 1
    return np.sqrt(np.maximum(np.float32(-2.0) * np.log(u), np.float32(0.0)))


def _angle(u: np.ndarray) -> np.ndarray:
    return np.float32(2.0 * np.pi) * (u - np.float32(0.5))


def normal4_thread(words: np.ndarray) -> np.ndarray:
    """Four normals per thread from its four words (shape (4, ...)): pairs (w0, w1) and
    (w2, w3), as `normal4_thread` in normals.cuh."""
    u = uniform01(words)
    r0, r1 = _radius(u[0]), _radius(u[2])
    a0, a1 = _angle(u[1]), _angle(u[3])
    return np.stack([r0 * np.cos(a0), r0 * np.sin(a0), r1 * np.cos(a1), r1 * np.sin(a1)])


def normal4_paired(words: np.ndarray) -> np.ndarray:
    """Four normals per thread with lanes 2k and 2k + 1 paired (`normal4_paired`): the
    last axis of `words` (shape (4, ..., threads), threads even) is the lane order; the
    even lane's words give the radii, the odd lane's the angles."""
    u = uniform01(words)
    r, a = _radius(u[..., 0::2]), _angle(u[..., 1::2])
    z = np.empty(u.shape, dtype=np.float32)
    z[..., 0::2] = r * np.cos(a)
    z[..., 1::2] = r * np.sin(a)
    return z


__all__ = ["philox4x32_10", "seed_key", "lcg_seeds", "lcg_draws", "mt_seed", "mt_twist",
           "mt_temper", "mt19937", "mt_warp_draws", "uniform01", "normal4_thread",
           "normal4_paired", "MT_N", "MT_ROUNDS"]
