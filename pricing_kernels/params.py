"""Generator parameters made here, and the searches that make them (`python -m
pricing_kernels.params` rewrites the data files in `pricing_kernels/data/`).

Sobol direction numbers (`sobol_dirs.txt`, SOBOL_DIMS dimensions)
-----------------------------------------------------------------
Dimension 0 is the van der Corput sequence in base 2 (v_k = 2^(32-k)). Dimension j >= 1
takes the j-th primitive polynomial over GF(2), counted by degree and, within a degree,
by the integer whose bits are its coefficients (x^3 + x + 1 is 0b1011 = 11); a
polynomial p of degree s is primitive when the order of x modulo p is 2^s - 1 (x^(2^s-1)
= 1 and x^((2^s-1)/q) != 1 for each prime factor q of 2^s - 1), tested by `primitive`.
Its initial direction numbers m_1 .. m_s (m_k odd, below 2^k) are chosen
deterministically: m_k is the top k bits of the first word of Philox4x32-10 of the
counter (j, k, 0, 0) under the key SOBOL_KEY, with the lowest of those bits set. The rest
follow Bratley and Fox's recurrence m_k = 2 a_1 m_(k-1) ^ 4 a_2 m_(k-2) ^ ... ^
2^(s-1) a_(s-1) m_(k-s+1) ^ 2^s m_(k-s) ^ m_(k-s) (a_i the inner coefficients), and the
32-bit direction numbers are v_k = m_k 2^(32-k), k = 1..32. The file keeps (j, s, p,
m_1..m_s); `sobol_directions` expands it.

MT607 parameter sets (`mt607_params.txt`, MT607_SETS sets)
---------------------------------------------------------
A Mersenne Twister with w = 32, n = 19, r = 1 (p = n w - r = 607, a Mersenne exponent),
m = 9 and tempering shifts (u, s, t, l) = (12, 7, 15, 18): state words x_0 .. x_18 of
which the lowest bit of the oldest does not count (x_k^u: its top w - r = 31 bits, x_(k+1)^l:
the lowest r = 1 bit), x_(k+n) = x_(k+m) ^ ((x_k^u | x_(k+1)^l) A)
with (y A) = (y >> 1) ^ (a if y is odd), output T(x) with the masks b, c. The search
for set `id` (Matsumoto and Nishimura, "Dynamic creation of pseudorandom number
generators", 2000, as implemented here):

1. candidates a = (h << 16) | id, h the 16 high bits of a Philox word of the counter
   (id, attempt, 1, 0) with the top bit forced (the id in the low 16 bits makes the
   characteristic polynomials of different ids differ);
2. the characteristic polynomial phi of the recurrence is the minimal polynomial of the
   sequence of the lowest bit of the untempered words from a nonzero state, found by
   Berlekamp-Massey on 2 p bits (`berlekamp_massey`); a candidate whose minimal polynomial
   has degree below p is rejected;
3. a sieve rejects phi with a factor of degree <= SIEVE_DEGREE (phi mod each
   irreducible polynomial of that degree, cheap by folding the coefficient vector by the
   order of x), then phi is irreducible iff x^(2^p) = x mod phi (p prime: there is no
   other degree to rule out), and since 2^607 - 1 is prime every irreducible
   polynomial of degree 607 is primitive: the period is 2^607 - 1;
4. tempering masks: TEMPER_TRIES pairs (b, c) from Philox words of (id, try, 2, 0) (c's
   low 15 bits cleared: (y << 15) & c never reads them) are
   scored by the dimensions of equidistribution k(v) of the top v bits, v = 1..TEMPER_V
   (`equidistribution`: the largest k such that k consecutive outputs' top v bits are
   onto from the state, a rank over GF(2)); the pair with the smallest total defect
   sum_v (floor(p / v) - k(v)) is kept (ties: the first).

How threads use the sets: see gen.cuh (thread g of the grid takes set g mod MT607_SETS
and its own seed, so threads sharing a set run different parts of the same period).
"""
from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from . import rng

DATA = Path(__file__).resolve().parent / "data"
SOBOL_FILE = DATA / "sobol_dirs.txt"
MT607_FILE = DATA / "mt607_params.txt"
SOBOL_DIMS = 1024
SOBOL_KEY = (0x536F626F, 0x6C000001)  # "Sobo", "l" + 1
MT607_SETS = 256
MT607_KEY = (0x4D543630, 0x37000001)  # "MT60", "7" + 1
SIEVE_DEGREE = 10
TEMPER_TRIES = 8
TEMPER_V = 32


# ---- GF(2) polynomials as Python ints (bit i: the coefficient of x^i) -------------------------
def pmod(a: int, m: int) -> int:
    dm = m.bit_length()
    while a.bit_length() >= dm:
        a ^= m << (a.bit_length() - dm)
    return a


def pmulmod(a: int, b: int, m: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a.bit_length() >= m.bit_length():
            a ^= m
    return pmod(r, m)


def ppowmod(a: int, e: int, m: int) -> int:
    r = 1
    a = pmod(a, m)
    while e:
        if e & 1:
            r = pmulmod(r, a, m)
        a = pmulmod(a, a, m)
        e >>= 1
    return r


def _prime_factors(n: int) -> list[int]:
    out, d = [], 2
    while d * d <= n:
        if n % d == 0:
            out.append(d)
            while n % d == 0:
                n //= d
        d += 1
    return out + ([n] if n > 1 else [])


def primitive(p: int) -> bool:
    """Whether the polynomial p (degree >= 1) is primitive over GF(2)."""
    s = p.bit_length() - 1
    if s == 1:
        return p == 0b11
    if not p & 1:
        return False
    order = (1 << s) - 1
    if ppowmod(2, order, p) != 1:
        return False
    return all(ppowmod(2, order // q, p) != 1 for q in _prime_factors(order))


def primitive_polynomials(count: int) -> list[int]:
    out, p = [], 2
    while len(out) < count:
        p += 1
        if primitive(p):
            out.append(p)
    return out


# ---- Sobol -----------------------------------------------------------------------------------
def sobol_table(dims: int = SOBOL_DIMS) -> list[tuple[int, int, int, list[int]]]:
    """(dimension, degree, polynomial, initial m) for dimensions 1 .. dims - 1."""
    rows = []
    for j, p in enumerate(primitive_polynomials(dims - 1), start=1):
        s = p.bit_length() - 1
        words = rng.philox4x32_10((j, np.arange(1, s + 1, dtype=np.uint64), 0, 0), SOBOL_KEY)[0]
        m = [((int(w) >> (32 - k)) | 1) for k, w in zip(range(1, s + 1), words)]
        rows.append((j, s, p, m))
    return rows


def write_sobol(path: Path = SOBOL_FILE, dims: int = SOBOL_DIMS) -> None:
    lines = ["# Sobol direction numbers made by pricing_kernels/params.py (see its docstring).",
             f"# {dims} dimensions; dimension 0 is van der Corput. Columns: dimension, degree "
             "s, primitive polynomial (bits = coefficients), m_1 .. m_s"]
    lines += [f"{j} {s} {p} " + " ".join(map(str, m)) for j, s, p, m in sobol_table(dims)]
    path.write_text("\n".join(lines) + "\n")


@functools.lru_cache(maxsize=1)
def sobol_directions() -> np.ndarray:
    """The direction numbers, shape (SOBOL_DIMS, 32), uint32: row d, column b is v_(b+1)
    of dimension d (bit b of the Gray-code index selects it)."""
    rows = [line.split() for line in SOBOL_FILE.read_text().splitlines()
            if line and not line.startswith("#")]
    v = np.zeros((len(rows) + 1, 32), dtype=np.uint64)
    v[0] = [1 << (31 - b) for b in range(32)]
    for d, row in enumerate(rows, start=1):
        s, p = int(row[1]), int(row[2])
        m = [int(x) for x in row[3:3 + s]]
        for k in range(s, 32):
            new = m[k - s] ^ (m[k - s] << s)
            for i in range(1, s):
                if (p >> (s - i)) & 1:
                    new ^= m[k - i] << i
            m.append(new)
        v[d] = [m[k] << (31 - k) for k in range(32)]
    return (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)


# ---- MT607 -----------------------------------------------------------------------------------
MT607_N, MT607_M, MT607_P = 19, 9, 607
MT607_SHIFTS = (12, 7, 15, 18)
MT607_UPPER, MT607_LOWER = 0xFFFFFFFE, 0x00000001  # w - r = 31 bits of x_k, r = 1 of x_(k+1)


def mt607_words(a: int, state: list[int], count: int) -> list[int]:
    """`count` untempered words of the MT607 recurrence with matrix `a` from `state` (19
    words), straightforwardly (one word per step)."""
    x = list(state)
    out = []
    n, m = MT607_N, MT607_M
    for k in range(count):
        i = k % n
        y = (x[i] & MT607_UPPER) | (x[(i + 1) % n] & MT607_LOWER)
        x[i] = x[(i + m) % n] ^ (y >> 1) ^ (a if y & 1 else 0)
        out.append(x[i])
    return out


def mt607_temper(y: int, b: int, c: int) -> int:
    u, s, t, l = MT607_SHIFTS
    y ^= y >> u
    y ^= (y << s) & b & 0xFFFFFFFF
    y ^= (y << t) & c & 0xFFFFFFFF
    return y ^ (y >> l)


def berlekamp_massey(bits: list[int]) -> int:
    """The minimal polynomial (connection polynomial reversed into the characteristic
    one, as an int) of a GF(2) sequence."""
    c, b = 1, 1  # connection polynomials, bit i = coefficient of D^i
    L, m = 0, 1
    window = 0  # bit i: s_(n-i)
    for n, bit in enumerate(bits):
        window = (window << 1) | bit
        d = (c & window).bit_count() & 1
        if d == 0:
            m += 1
        elif 2 * L <= n:
            t = c
            c ^= b << m
            L, b, m = n + 1 - L, t, 1
        else:
            c ^= b << m
            m += 1
    # characteristic polynomial: x^L C(1/x)
    return sum(((c >> i) & 1) << (L - i) for i in range(L + 1))


@functools.lru_cache(maxsize=1)
def _sieve_polys() -> list[tuple[int, int]]:
    """(irreducible polynomial, order of x modulo it) for degrees 1 .. SIEVE_DEGREE."""
    out = []
    for d in range(1, SIEVE_DEGREE + 1):
        for p in range(1 << d, 1 << (d + 1)):
            if _irreducible_small(p):
                order = next(e for e in sorted(_divisors((1 << d) - 1))
                             if ppowmod(2, e, p) == 1) if p != 0b10 else 0
                out.append((p, order))
    return out


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _irreducible_small(p: int) -> bool:
    d = p.bit_length() - 1
    return all(pmod(p, q) != 0 for q in range(2, p) if 0 < q.bit_length() - 1 <= d // 2)


def _has_small_factor(phi: int) -> bool:
    if not phi & 1:
        return True
    bits = np.array([(phi >> i) & 1 for i in range(phi.bit_length())], dtype=np.uint8)
    for p, order in _sieve_polys():
        if p == 0b10:
            continue
        pad = -bits.size % order
        folded = np.bitwise_xor.reduce(np.concatenate([bits, np.zeros(pad, np.uint8)])
                                       .reshape(-1, order), axis=0)
        r = int("".join(map(str, folded[::-1])), 2) if folded.any() else 0
        if pmod(r, p) == 0:
            return True
    return False


def irreducible_mersenne(phi: int) -> bool:
    """For phi of prime degree p: irreducible iff x^(2^p) = x (mod phi)."""
    p = phi.bit_length() - 1
    x = 2
    for _ in range(p):
        x = pmod(_square(x), phi)
    return x == 2


def _square(a: int) -> int:
    """a^2 over GF(2): the bits spread out (a zero between any two)."""
    return int("0".join(bin(a)[2:]), 2)


def characteristic(a: int) -> int:
    state = [int(w) for w in rng.philox4x32_10((np.arange(MT607_N, dtype=np.uint64), 9, 9, 9),
                                               (1, 2))[0]]
    bits = [w & 1 for w in mt607_words(a, state, 2 * MT607_P)]
    return berlekamp_massey(bits)


def find_a(ident: int, max_tries: int = 20000) -> tuple[int, int]:
    """(a, attempts) of the first candidate for `ident` whose characteristic polynomial
    is primitive of degree 607."""
    for attempt in range(max_tries):
        h = int(rng.philox4x32_10((ident, attempt, 1, 0), MT607_KEY)[0]) >> 16
        a = ((h | 0x8000) << 16) | ident
        phi = characteristic(a)
        if phi.bit_length() - 1 != MT607_P or _has_small_factor(phi):
            continue
        if irreducible_mersenne(phi):
            return a, attempt + 1
    raise RuntimeError(f"no primitive MT607 matrix for id {ident} in {max_tries} tries")


def equidistribution(a: int, b: int, c: int, vmax: int = TEMPER_V) -> list[int]:
    """k(v) for v = 1..vmax: the largest k such that the top v bits of k consecutive
    tempered outputs are onto from the 607-bit state (rank k v over GF(2))."""
    n, p = MT607_N, MT607_P
    # the state basis: bits 1..31 of word 0 and every bit of words 1..18 (607 states)
    basis = np.zeros((p, n), dtype=np.uint32)
    for j in range(p):
        word, bit = divmod(j + 1, 32)
        basis[j, word] = np.uint32(1) << np.uint32(bit)
    steps = p  # k(1) <= 607
    outs = np.empty((steps, p), dtype=np.uint32)
    x = basis.copy()
    A = np.uint32(a)
    for k in range(steps):
        i = k % n
        y = (x[:, i] & np.uint32(MT607_UPPER)) | (x[:, (i + 1) % n] & np.uint32(MT607_LOWER))
        x[:, i] = x[:, (i + MT607_M) % n] ^ (y >> np.uint32(1)) ^ np.where(y & np.uint32(1), A,
                                                                          np.uint32(0))
        outs[k] = _temper_np(x[:, i], b, c)
    ks = []
    for v in range(1, vmax + 1):
        pivots: dict[int, int] = {}
        k = 0
        ok = True
        while ok and k < p // v:
            for bit in range(31, 31 - v, -1):
                f = _column(outs[k], bit)
                while f:
                    top = f.bit_length() - 1
                    if top not in pivots:
                        pivots[top] = f
                        break
                    f ^= pivots[top]
                if f == 0:
                    ok = False
                    break
            if ok:
                k += 1
        ks.append(k)
    return ks


def _column(words: np.ndarray, bit: int) -> int:
    """Bit `bit` of the output as a linear functional of the state: a 607-bit int."""
    col = ((words >> np.uint32(bit)) & np.uint32(1)).astype(np.uint8)
    return int.from_bytes(np.packbits(col[::-1]).tobytes(), "big") >> (-col.size % 8)


def _temper_np(y: np.ndarray, b: int, c: int) -> np.ndarray:
    u, s, t, l = (np.uint32(v) for v in MT607_SHIFTS)
    y = y ^ (y >> u)
    y = y ^ ((y << s) & np.uint32(b))
    y = y ^ ((y << t) & np.uint32(c))
    return y ^ (y >> l)


def find_tempering(ident: int, a: int) -> tuple[int, int, list[int]]:
    best = None
    for t in range(TEMPER_TRIES):
        w = rng.philox4x32_10((ident, t, 2, 0), MT607_KEY)
        b, c = int(w[0]), int(w[1]) & 0xFFFF8000  # c only acts on bits >= 15
        ks = equidistribution(a, b, c)
        defect = sum(MT607_P // v - k for v, k in zip(range(1, TEMPER_V + 1), ks))
        if best is None or defect < best[0]:
            best = (defect, b, c, ks)
    return best[1], best[2], best[3]


def write_mt607(path: Path = MT607_FILE, sets: int = MT607_SETS, log=print) -> None:
    lines = ["# MT607 parameter sets made by pricing_kernels/params.py (see its docstring).",
             f"# w=32 n={MT607_N} m={MT607_M} r=1 shifts {MT607_SHIFTS}. Columns: id, a, b, "
             f"c (hex), attempts, k(v) for v = 1..{TEMPER_V}"]
    for ident in range(sets):
        a, tries = find_a(ident)
        b, c, ks = find_tempering(ident, a)
        lines.append(f"{ident} {a:08x} {b:08x} {c:08x} {tries} " + " ".join(map(str, ks)))
        log(lines[-1])
    path.write_text("\n".join(lines) + "\n")


@functools.lru_cache(maxsize=1)
def mt607_params() -> np.ndarray:
    """The shipped sets, shape (MT607_SETS, 3) uint32: a, b, c."""
    rows = [line.split() for line in MT607_FILE.read_text().splitlines()
            if line and not line.startswith("#")]
    return np.array([[int(r[1], 16), int(r[2], 16), int(r[3], 16)] for r in rows],
                    dtype=np.uint32)


if __name__ == "__main__":
    import sys

    DATA.mkdir(exist_ok=True)
    what = sys.argv[1:] or ["sobol", "mt607"]
    if "sobol" in what:
        write_sobol()
    if "mt607" in what:
        write_mt607(sets=int(sys.argv[2]) if len(sys.argv) > 2 else MT607_SETS)
