"""Reference concrete semantics of the PTX compute instructions on Python ints.

Written from the PTX ISA's semantics sections (integer arithmetic 9.7.1-9.7.2, logic and
shift 9.7.9, comparison 9.7.7, conversion and movement 9.7.10), independently of
ptxlint's implementation: bit loops where the ISA gives bit loops, plain integer
arithmetic elsewhere. Operands are register bits (unsigned ints); results are the
destination's bits, or None where the ISA leaves the result unspecified (division by
zero, 24-bit multiplies of wider values, fns with base > 31).
"""
from __future__ import annotations

import math
import struct


def u(x: int, w: int) -> int:
    return x & ((1 << w) - 1)


def sv(x: int, w: int) -> int:
    x = u(x, w)
    return x - (1 << w) if x >> (w - 1) & 1 else x


def rd(x: int, w: int, signed: bool) -> int:
    """The register's bits read as a number of the type."""
    return sv(x, w) if signed else u(x, w)


def limits(w: int, signed: bool) -> tuple[int, int]:
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)


def clamp(x: int, w: int, signed: bool) -> int:
    lo, hi = limits(w, signed)
    return min(max(x, lo), hi)


def bit(x: int, i: int) -> int:
    return x >> i & 1


# ---- integer arithmetic ----------------------------------------------------------------------
def add(a, b, w, signed, sat=False):
    r = rd(a, w, signed) + rd(b, w, signed)
    return u(clamp(r, w, signed) if sat else r, w)


def sub(a, b, w, signed, sat=False):
    r = rd(a, w, signed) - rd(b, w, signed)
    return u(clamp(r, w, signed) if sat else r, w)


def mul(a, b, w, signed, mode):
    t = rd(a, w, signed) * rd(b, w, signed)  # the full 2w-bit product
    if mode == "wide":
        return u(t, 2 * w)
    return u(t >> w, w) if mode == "hi" else u(t, w)


def mad(a, b, c, w, signed, mode, sat=False):
    if mode == "wide":
        return u(rd(a, w, signed) * rd(b, w, signed) + rd(c, 2 * w, signed), 2 * w)
    part = rd(mul(a, b, w, signed, mode), w, signed)
    r = part + rd(c, w, signed)
    return u(clamp(r, w, signed) if sat else r, w)


def mul24(a, b, signed, mode):
    """t = a * b of two 24-bit values; d = t<31..0> (lo) or t<47..16> (hi)."""
    x, y = rd(a, 32, signed), rd(b, 32, signed)
    lo, hi = limits(24, signed)
    if not (lo <= x <= hi and lo <= y <= hi):
        return None
    t = u(x * y, 48)
    return u(t >> 16, 32) if mode == "hi" else u(t, 32)


def mad24(a, b, c, signed, mode, sat=False):
    t = mul24(a, b, signed, mode)
    if t is None:
        return None
    r = rd(t, 32, signed) + rd(c, 32, signed)
    return u(clamp(r, 32, signed) if sat else r, 32)


def sad(a, b, c, w, signed):
    x, y = rd(a, w, signed), rd(b, w, signed)
    return u(rd(c, w, signed) + (y - x if x < y else x - y), w)


def _tdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def div(a, b, w, signed):
    x, y = rd(a, w, signed), rd(b, w, signed)
    if y == 0 or (signed and x == limits(w, True)[0] and y == -1):
        return None
    return u(_tdiv(x, y), w)


def rem(a, b, w, signed):
    x, y = rd(a, w, signed), rd(b, w, signed)
    if y == 0 or (signed and x == limits(w, True)[0] and y == -1):
        return None
    return u(x - y * _tdiv(x, y), w)


def abs_(a, w):
    return u(abs(sv(a, w)), w)


def neg(a, w):
    return u(-sv(a, w), w)


def min_(a, b, w, signed, relu=False):
    r = min(rd(a, w, signed), rd(b, w, signed))
    return u(max(r, 0) if relu else r, w)


def max_(a, b, w, signed, relu=False):
    r = max(rd(a, w, signed), rd(b, w, signed))
    return u(max(r, 0) if relu else r, w)


# ---- carries: each returns (d, CC.CF) ----------------------------------------------------------
def add_cc(a, b, w, cf=0):
    total = u(a, w) + u(b, w) + cf
    return u(total, w), total >> w


def sub_cc(a, b, w, cf=0):
    """d = a - (b + CF); the borrow is set when that goes below zero."""
    total = u(a, w) - (u(b, w) + cf)
    return u(total, w), int(total < 0)


def mad_cc(a, b, c, w, signed, mode, cf=0):
    part = mul(a, b, w, signed, mode)
    return add_cc(part, c, w, cf)


# ---- logic and shifts --------------------------------------------------------------------------
def and_(a, b, w):
    return u(a & b, w)


def or_(a, b, w):
    return u(a | b, w)


def xor(a, b, w):
    return u(a ^ b, w)


def not_(a, w):
    return u(~a, w)


def cnot(a, w):
    return 1 if u(a, w) == 0 else 0


def shl(a, n, w):
    n = u(n, 32)
    return 0 if n >= w else u(u(a, w) << n, w)


def shr(a, n, w, signed):
    n = min(u(n, 32), w)
    return u(rd(a, w, signed) >> n, w)


def lop3(a, b, c, lut):
    d = 0
    for i in range(32):
        d |= bit(lut, bit(a, i) << 2 | bit(b, i) << 1 | bit(c, i)) << i
    return d


def shf(a, b, c, left, clamp_mode):
    n = min(u(c, 32), 32) if clamp_mode else u(c, 32) & 0x1F
    a, b = u(a, 32), u(b, 32)
    if left:
        return u((b << n) | (a >> (32 - n)), 32)
    return u((b << (32 - n)) | (a >> n), 32)


# ---- bit fields --------------------------------------------------------------------------------
def bfe(a, b, c, w, signed):
    msb = w - 1
    pos, length = u(b, 32) & 0xFF, u(c, 32) & 0xFF
    sbit = 0 if not signed or length == 0 else bit(a, min(pos + length - 1, msb))
    d = 0
    for i in range(w):
        d |= (bit(a, pos + i) if i < length and pos + i <= msb else sbit) << i
    return d


def bfi(a, b, c, d, w):
    msb = w - 1
    pos, length = u(c, 32) & 0xFF, u(d, 32) & 0xFF
    f = u(b, w)
    i = 0
    while i < length and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | bit(a, i) << (pos + i)
        i += 1
    return f


def popc(a, w):
    return sum(bit(a, i) for i in range(w))


def clz(a, w):
    n = 0
    for i in range(w - 1, -1, -1):
        if bit(a, i):
            break
        n += 1
    return n


def brev(a, w):
    return sum(bit(a, i) << (w - 1 - i) for i in range(w))


def bfind(a, w, signed, shiftamt):
    msb = w - 1
    a = u(a, w)
    if signed and bit(a, msb):
        a = u(~a, w)
    d = 0xFFFFFFFF
    for i in range(msb, -1, -1):
        if bit(a, i):
            d = i
            break
    if shiftamt and d != 0xFFFFFFFF:
        d = msb - d
    return d


def fns(mask, base, offset):
    base, offset = u(base, 32), sv(offset, 32)
    if base > 31:
        return None
    if offset == 0:
        return base if bit(mask, base) else 0xFFFFFFFF
    if offset > 0:
        found = [p for p in range(base, 32) if bit(mask, p)]
    else:
        found = [p for p in range(base, -1, -1) if bit(mask, p)]
    k = abs(offset) - 1
    return found[k] if k < len(found) else 0xFFFFFFFF


def szext(a, b, clamp_mode, signed):
    a, b = u(a, 32), u(b, 32)
    b1 = b & 0x1F
    too_large = b >= 32 and clamp_mode
    mask = 0 if too_large else u(0xFFFFFFFF << b1, 32)
    sign_pos = (b1 - 1) & 0x1F
    sign_bit = 0 if b1 == 0 or too_large or not signed else bit(a, sign_pos)
    return (a & u(~mask, 32)) | (mask if sign_bit else 0)


def bmsk(a, b, clamp_mode):
    a, b = u(a, 32), u(b, 32)
    a1, b1 = a & 0x1F, b & 0x1F
    mask0 = u(0xFFFFFFFF << a1, 32)
    total = a1 + b1
    mask1 = u(0xFFFFFFFF << total, 32) if total < 32 else 0
    overflow = total >= 32
    if clamp_mode:
        if a >= 32:
            overflow, mask0 = True, 0
        if b >= 32:
            overflow = True
    if overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    return mask0 & u(~mask1, 32)


# ---- dot products, carryless multiply, permute ---------------------------------------------------
def _elements(x, n, size, signed):
    return [rd(x >> (size * i), size, signed) for i in range(n)]


def dp4a(a, b, c, sa, sb):
    signed = sa or sb
    d = rd(c, 32, signed)
    for x, y in zip(_elements(a, 4, 8, sa), _elements(b, 4, 8, sb)):
        d += x * y
    return u(d, 32)


def dp2a(a, b, c, sa, sb, hi):
    signed = sa or sb
    d = rd(c, 32, signed)
    va, vb = _elements(a, 2, 16, sa), _elements(b, 4, 8, sb)
    sel = 2 if hi else 0
    for i in range(2):
        d += va[i] * vb[sel + i]
    return u(d, 32)


def clmad(a, b, c, hi):
    a, b = u(a, 64), u(b, 64)
    t = 0
    for i in range(64):
        if bit(b, i):
            t ^= a << i
    part = t >> 64 if hi else u(t, 64)
    return u(part ^ c, 64)


# ISA table: for each mode and selector c[1:0], the source byte of d.b3, d.b2, d.b1, d.b0.
PRMT_TABLE = {
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}


def prmt(a, b, c, mode):
    tmp64 = u(b, 32) << 32 | u(a, 32)
    byte = lambda k: tmp64 >> (8 * k) & 0xFF  # noqa: E731
    d = 0
    for i in range(4):  # target byte i
        if mode is None:
            ctl = c >> (4 * i) & 0xF
            value = byte(ctl & 7)
            if ctl & 8:
                value = 0xFF if value & 0x80 else 0x00
        else:
            value = byte(PRMT_TABLE[mode][c & 3][3 - i])
        d |= value << (8 * i)
    return d


# ---- comparisons -------------------------------------------------------------------------------
_UNSIGNED_OPS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def compare(op, a, b, w, signed):
    if op in _UNSIGNED_OPS:
        op, signed = _UNSIGNED_OPS[op], False
    x, y = rd(a, w, signed), rd(b, w, signed)
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
            "ge": x >= y}[op]


def boolop(op, x, y):
    return {"and": x & y, "or": x | y, "xor": x ^ y}[op]


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", u(bits, 32)))[0]


def float_compare(op, x, y):
    nan = math.isnan(x) or math.isnan(y)
    if op == "num":
        return not nan
    if op == "nan":
        return nan
    if op.endswith("u") and nan:
        return True
    if nan:
        return False
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
            "ge": x >= y}[op.rstrip("u")]


# ---- conversions ---------------------------------------------------------------------------------
def cvt(a, fw, fs, tw, ts, sat):
    x = rd(a, fw, fs)
    return u(clamp(x, tw, ts) if sat else x, tw)


def cvt_pack(a, b, c, size, signed):
    ta, tb = clamp(sv(a, 32), size, signed), clamp(sv(b, 32), size, signed)
    td = u(tb, size) | u(ta, size) << size
    if size == 16:
        return td
    d = td
    for i in range(2 * size, 32):
        d |= bit(c, i - 2 * size) << i
    return d
