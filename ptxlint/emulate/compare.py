"""Comparison and selection (PTX ISA 9.7.7-9.7.8): `setp` and `set` with every
comparison (signed, unsigned `lo ls hi hs`, ordered and unordered float, `num`, `nan`)
and the `.and/.or/.xor` combine with a (possibly negated) predicate; `selp`, `slct`.

For the packed `.f16x2/.bf16x2` forms `setp` writes the low halves' result to `p` and
the high halves' to `q`; `set` writes one result per half.
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.compare import Selp, Set, Setp, Slct
from ..ir.types import Kind
from .floatops import fmt_of, reader64
from .floats import F16, F32, encode, flush
from .operands import BOOL, UINT
from .semantics import Compiler, executes
from .vec import select

_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_OPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}
_COMBINE = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def int_compare(op: str, x, y):
    return _OPS[_UNSIGNED.get(op, op)](x, y)


def float_compare(op: str, x, y):
    nan = np.isnan(x) | np.isnan(y)
    if op == "num":
        return ~nan
    if op == "nan":
        return nan
    if op.endswith("u") and op != "nu":
        return _OPS[op[:-1]](x, y) | nan
    return _OPS[op](x, y) & ~nan  # ordered: false on NaN (ne included)


def _sources(insn, c: Compiler):
    """`f(m)` -> list of (x, y) pairs to compare (one, or two for packed halves)."""
    t = insn.types[-1]
    op = insn.compare
    if op is None:
        raise c.unsupported()
    if t.kind is Kind.FLOAT:
        fmt, lanes = fmt_of(c, t)
        a, b = reader64(c, insn.a, fmt, lanes), reader64(c, insn.b, fmt, lanes)
        ftz = insn.ftz

        def floats(m):
            xs, ys = a(m), b(m)
            if ftz:
                xs, ys = [flush(x, fmt) for x in xs], [flush(y, fmt) for y in ys]
            return [float_compare(op, x, y) for x, y in zip(xs, ys)]
        return floats, lanes
    dt = c.dtype(t)
    if op in _UNSIGNED:
        dt = UINT[dt.itemsize * 8]
    elif op not in ("eq", "ne") and t.kind is Kind.BITS:
        raise c.unsupported()
    a, b = c.read(insn.a, dt), c.read(insn.b, dt)
    return (lambda m: [int_compare(op, a(m), b(m))]), 1


@executes(Setp)
def setp(insn, c: Compiler):
    results, lanes = _sources(insn, c)
    combine = _COMBINE.get(insn.bool_op or "")
    other = c.pred(insn.combine) if combine is not None and insn.combine is not None else None
    p = c.write(insn.pred, BOOL) if insn.pred is not None else None
    q = c.write(insn.pred_complement, BOOL) if insn.pred_complement is not None else None

    def run(m):
        ts = results(m)
        if lanes == 2:
            first, second = ts
        else:
            first = ts[0]
            second = ~np.asarray(first)
        if other is not None:
            o = other(m)
            first, second = combine(first, o), combine(second, o)
        if p is not None:
            p(m, first)
        if q is not None:
            q(m, second)
    return run


@executes(Set)
def set_(insn, c: Compiler):
    results, lanes = _sources(insn, c)
    combine = _COMBINE.get(insn.bool_op or "")
    other = c.pred(insn.combine) if combine is not None and insn.combine is not None else None
    dtype = insn.types[0]
    bits = 32 if lanes == 2 else dtype.bits
    w = c.write(insn.operands[0], UINT[bits])
    if dtype.kind is Kind.FLOAT:
        one = int(encode(np.array([1.0]), F32 if dtype.bits == 32 and lanes == 1 else F16)[0])
        if dtype.name.startswith("bf16"):
            one = 0x3F80
    else:
        one = (1 << (bits // lanes)) - 1
    half = bits // lanes

    def run(m):
        ts = results(m)
        out = np.uint64(0)
        for i, t in enumerate(ts):
            if other is not None:
                t = combine(t, other(m))
            out = out | (np.where(t, np.uint64(one), np.uint64(0)) << np.uint64(half * i))
        w(m, np.asarray(out).astype(UINT[bits]))
    return run


@executes(Selp)
def selp(insn, c: Compiler):
    dt = c.dtype()
    a, b, p, w = c.read(insn.a, dt), c.read(insn.b, dt), c.pred(insn.c), c.write(insn.operands[0], dt)

    def run(m):
        w(m, select(p(m), a(m), b(m), raw=True))
    return run


@executes(Slct)
def slct(insn, c: Compiler):
    dt = c.dtype()
    ct = insn.types[-1]
    a, b, w = c.read(insn.a, dt), c.read(insn.b, dt), c.write(insn.operands[0], dt)
    z = c.read(insn.c, c.dtype(ct))
    ftz = insn.ftz and ct.is_float

    def run(m):
        cond = z(m)
        if ftz:
            cond = flush(cond, F32)
        w(m, select(np.asarray(cond >= 0), a(m), b(m), raw=True))
    return run
