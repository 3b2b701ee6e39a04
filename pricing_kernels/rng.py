"""Host twins of the device generators (`kernels/rng.cuh`, `kernels/gen.cuh`), in numpy.

The raw 32-bit words match the device bit for bit; `uniform01` is exact too (an odd
multiple of 2^-24, converted without rounding). Box-Muller normals agree with the device
to float32 rounding only: the device uses the fast `__logf`/`__sincosf`. The Sobol words,
their inverse-normal transforms and Brownian-bridge increments, and MT607's words are
bit for bit.
"""
from __future__ import annotations

import math

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



# ---- Sobol points (Gray-code order, digitally shifted) ------------------------------------------
# Point i of a replication is the Antonov-Saleev Gray-code point: the XOR of the direction
# numbers v_(b+1) of the bits b set in gray(i) = i ^ (i >> 1) (the sequence x_(i+1) = x_i ^
# v_(c(i)+1), c(i) the lowest zero bit of i, computed directly from i). The 64-bit sample
# index gives the point index (low word) and the replication (high word); every
# replication XORs its points with its own digital shift, the Philox words of the counter
# (draw, replication, SOBOL_TAG, 0) under the seed's key, one word per dimension.
SOBOL_TAG = 0x50B01


def sobol_words(samples: np.ndarray, draw: int, key, directions: np.ndarray) -> np.ndarray:
    """Dimensions 4 draw .. 4 draw + 3 of the points of the 64-bit `samples` (shape (T,)):
    shape (4, T) uint32, as `draw4` of RNG_SOBOL."""
    s = np.asarray(samples, dtype=np.uint64)
    idx = s & np.uint64(MASK32)
    rep = s >> np.uint64(32)
    gray = idx ^ (idx >> np.uint64(1))
    v = directions[4 * draw:4 * draw + 4].astype(np.uint64)  # (4, 32)
    x = np.zeros((4, s.size), dtype=np.uint64)
    for b in range(32):
        bit = (gray >> np.uint64(b)) & np.uint64(1)
        x ^= v[:, b:b + 1] * bit[None, :]
    shift = philox4x32_10((draw, rep, SOBOL_TAG, 0), key).astype(np.uint64)
    return (x ^ shift).astype(U32)


# ---- inverse normal (Wichura's AS 241, PPND7) in float32, bit-exact with the device -------------
# Every operation is one IEEE round-to-nearest float32 operation in a fixed order (the
# device uses __fmul_rn, __fadd_rn, __fdiv_rn, __fsqrt_rn, which are never contracted into
# FMAs), and the logarithm is computed from those operations too (`log_f32`), so host and
# device agree bit for bit. PPND7 is Wichura's single-precision form (about 7 digits);
# its far tail (-log p > 25) is never needed: uniform01 is at least 2^-24.
F = np.float32
PPND7_A = [F(v) for v in (59.109374720, 159.29113202, 50.434271938, 3.3871327179)]
PPND7_B = [F(v) for v in (67.187563600, 78.757757664, 17.895169469, 1.0)]
PPND7_C = [F(v) for v in (0.17023821103, 1.3067284816, 2.7568153900, 1.4234372777)]
PPND7_D = [F(v) for v in (0.12021132975, 0.73700164250, 1.0)]
PPND7_SPLIT1, PPND7_CONST1, PPND7_SPLIT2 = F(0.425), F(0.180625), F(1.6)
LN2_F = F(0.693147180559945)
SQRT2_F = F(1.41421356237)


def log_f32(x: np.ndarray) -> np.ndarray:
    """log of positive normal float32s: x = 2^e f, f in [sqrt(1/2), sqrt(2)); log f =
    2 atanh(s), s = (f - 1) / (f + 1), to s^9 (|s| < 0.172)."""
    x = np.asarray(x, dtype=F)
    bits = x.view(U32)
    e = ((bits >> U32(23)) & U32(0xFF)).astype(np.int32) - 127
    f = ((bits & U32(0x7FFFFF)) | U32(0x3F800000)).view(F)
    big = f > SQRT2_F
    f = np.where(big, f * F(0.5), f)
    e = e + big.astype(np.int32)
    s = (f - F(1)) / (f + F(1))
    s2 = s * s
    poly = (((F(1 / 9) * s2 + F(1 / 7)) * s2 + F(1 / 5)) * s2 + F(1 / 3)) * s2 + F(1)
    return e.astype(F) * LN2_F + (F(2) * s) * poly


def _horner(coef, x):
    acc = coef[0] * x
    for c in coef[1:-1]:
        acc = (acc + c) * x
    return acc + coef[-1]


def inverse_normal(u: np.ndarray) -> np.ndarray:
    """The standard normal quantile of float32 uniforms in [2^-24, 1 - 2^-24], as
    `inv_normal` in rng.cuh (bit for bit): q = u - 1/2; for |q| <= 0.425 a rational
    function of 0.180625 - q^2, else of sqrt(-log min(u, 1 - u)) - 1.6."""
    u = np.asarray(u, dtype=F)
    q = u - F(0.5)
    r = PPND7_CONST1 - q * q
    central = (q * _horner(PPND7_A, r)) / _horner(PPND7_B, r)
    p = np.minimum(u, F(1) - u)
    t = np.sqrt(-log_f32(p)) - PPND7_SPLIT2
    tail = _horner(PPND7_C, t) / _horner(PPND7_D, t)
    tail = np.where(q < F(0), -tail, tail)
    return np.where(np.abs(q) <= PPND7_SPLIT1, central, tail).astype(F)


def normal4_icdf(words: np.ndarray) -> np.ndarray:
    """Four normals per thread by the inverse transform of `uniform01` (RNG_SOBOL)."""
    return inverse_normal(uniform01(words))


# ---- Brownian bridge ---------------------------------------------------------------------------
def bridge_schedule(n: int):
    """The order in which the bridge fills W_1 .. W_n (W in units of sqrt(dt), W_0 = 0):
    first W_n = sqrt(n) z_0, then breadth first the middle m = (l + r) // 2 of each
    interval (l, r) of known points: W_m = a W_l + b W_r + c z_k with a = (r - m)/(r - l),
    b = (m - l)/(r - l), c = sqrt((m - l)(r - m)/(r - l)). Returns the int arrays m, l,
    r and the float32 arrays a, b, c (n entries each; entry 0 has l = r = 0, a = b = 0)."""
    m, l, r = [n], [0], [0]
    a, b, c = [0.0], [0.0], [math.sqrt(n)]
    queue = [(0, n)]
    while queue:
        lo, hi = queue.pop(0)
        if hi - lo < 2:
            continue
        mid = (lo + hi) // 2
        m.append(mid), l.append(lo), r.append(hi)
        a.append((hi - mid) / (hi - lo)), b.append((mid - lo) / (hi - lo))
        c.append(math.sqrt((mid - lo) * (hi - mid) / (hi - lo)))
        queue += [(lo, mid), (mid, hi)]
    ints = [np.array(x, dtype=np.uint32) for x in (m, l, r)]
    return (*ints, *(np.array(x, dtype=F) for x in (a, b, c)))


def bridge_increments(z: np.ndarray, schedule) -> np.ndarray:
    """The n standardised increments W_(j+1) - W_j of the bridge from the normals z
    (shape (n, T), float32), as `sobol_bridge` and the Asian kernel compute them."""
    m, l, r, a, b, c = schedule
    n = z.shape[0]
    w = np.zeros((n + 1,) + z.shape[1:], dtype=F)
    for k in range(n):
        w[m[k]] = (a[k] * w[l[k]] + b[k] * w[r[k]]) + c[k] * z[k].astype(F)
    return w[1:] - w[:-1]


# ---- MT607, one generator per thread (parameters from pricing_kernels/params.py) ----------------
MT607_N, MT607_M = 19, 9
MT607_UPPER, MT607_LOWER = 0xFFFFFFFE, 0x00000001


def mt607_state(seed: int, threads: int) -> np.ndarray:
    """The gen_state of RNG_MT607 for `threads` threads, structure of arrays: word k of
    thread g at [k * threads + g] (k < 19: Philox words of the counter (k // 4, g, 3, 0)
    under the seed's key), then a, b and c of thread g at [(19 + j) * threads + g]:
    parameter set g mod (number of sets)."""
    from .params import mt607_params  # noqa: PLC0415

    g = np.arange(threads, dtype=np.uint64)
    words = np.concatenate([philox4x32_10((k, g, 3, 0), seed_key(seed)) for k in range(5)])
    sets = mt607_params()
    abc = sets[np.arange(threads) % len(sets)].T  # (3, threads)
    return np.concatenate([words[:MT607_N], abc]).reshape(-1).astype(U32)


def mt607_draws(state: np.ndarray, draws: int, pos: int = 0) -> tuple[np.ndarray, int]:
    """`draws` tempered words of every thread (shape (draws, threads)) from the gen_state
    `state` (advanced in place) starting at position `pos`; returns them and the new
    position."""
    from .params import MT607_SHIFTS  # noqa: PLC0415

    threads = state.size // (MT607_N + 3)
    s = state.reshape(MT607_N + 3, threads)
    a, b, c = s[MT607_N], s[MT607_N + 1], s[MT607_N + 2]
    u, sh, t, l = (U32(v) for v in MT607_SHIFTS)
    out = np.empty((draws, threads), dtype=U32)
    for d in range(draws):
        i = pos
        nxt = (i + 1) % MT607_N
        y = (s[i] & U32(MT607_UPPER)) | (s[nxt] & U32(MT607_LOWER))
        v = s[(i + MT607_M) % MT607_N] ^ (y >> U32(1)) ^ np.where(y & U32(1), a, U32(0))
        s[i] = v
        v = v ^ (v >> u)
        v = v ^ ((v << sh) & b)
        v = v ^ ((v << t) & c)
        out[d] = v ^ (v >> l)
        pos = nxt
    return out, pos


__all__ = ["philox4x32_10", "seed_key", "lcg_seeds", "lcg_draws", "mt_seed", "mt_twist",
           "mt_temper", "mt19937", "mt_warp_draws", "uniform01", "normal4_thread",
           "normal4_paired", "MT_N", "MT_ROUNDS", "sobol_words", "inverse_normal",
           "log_f32", "normal4_icdf", "bridge_schedule", "bridge_increments",
           "mt607_state", "mt607_draws", "SOBOL_TAG"]
