"""Atomics and reductions (`atom`, `red`) on global and shared memory, generic addresses
included. Within one instruction the lanes apply their operations in thread order
(block-major, then linear thread id), so results are deterministic: lanes on distinct
addresses go in one vectorised step; lanes sharing an address go in rounds (round k
applies every address's k-th lane), except integer `add`, done at once with a segmented
prefix sum. `atom.add.f32` on global memory flushes subnormals, as the ISA documents
for the current hardware; on shared memory it does not.

Vector atomics (`atom.global.v4.f32.add`, `red.global.v8.f16.max.noftz`, ...) access
adjacent elements, each atomically on its own (PTX ISA `atom`), one after the other here.
The address must be a multiple of the whole access (16 bytes for `.v4.f32`); an element
that is not aligned to its own size is reported and not performed.
"""
from __future__ import annotations

import numpy as np

from ..ir.instructions.atomic import Atom, Red
from ..ir.operands import Address
from .floats import BF16, F16, F32, decode, encode, flush, round_narrow
from .memops import check_alignment
from .memory import Hit
from .operands import UINT, np_type
from .operands import elements as _elements
from .semantics import Compiler, executes

_HALF = {"f16": F16, "bf16": BF16, "f16x2": F16, "bf16x2": BF16}


def _combine(op: str, t, old, b, cmp=None, flush_f32=False):
    """The new memory value from the old one (arrays of the element dtype)."""
    name = t.name
    if op == "exch":
        return b
    if op == "cas":
        return np.where(old == cmp, b, old)
    if op in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](old, b)
    if op == "inc":
        return np.where(old >= b, old.dtype.type(0), old + old.dtype.type(1))
    if op == "dec":
        return np.where((old == 0) | (old > b), b, old - old.dtype.type(1))
    if name in _HALF:
        return _half(op, name, old, b)
    if op == "add":
        if name == "f32" and flush_f32:
            return flush(flush(old, F32) + flush(b, F32), F32).astype(np.float32)
        return old + b
    if op == "min":
        return np.minimum(old, b) if t.kind.value != "f" else np.fmin(old, b)
    if op == "max":
        return np.maximum(old, b) if t.kind.value != "f" else np.fmax(old, b)
    raise ValueError(op)


def _half(op: str, name: str, old, b):
    fmt = _HALF[name]
    lanes = 2 if name.endswith("x2") else 1
    out = np.zeros_like(old)
    for i in range(lanes):
        sh = old.dtype.type(16 * i)
        x = decode((old >> sh) & old.dtype.type(0xFFFF), fmt)
        y = decode((np.asarray(b, old.dtype) >> sh) & old.dtype.type(0xFFFF), fmt)
        if op == "add":
            r = round_narrow(x + y, None, fmt)  # both halves exact in float64: one rounding
        else:
            r = np.fmin(x, y) if op == "min" else np.fmax(x, y)
        out |= encode(r, fmt).astype(old.dtype) << sh
    return out


def apply(hit: Hit, dt: np.dtype, op: str, t, b, cmp, flush_f32: bool) -> np.ndarray:
    """Perform the atomics of one storage hit in lane order; returns the old values."""
    w = dt.itemsize
    view = hit.flat[: len(hit.flat) // w * w].view(dt)
    idx = hit.off // w
    n = len(idx)
    b = np.broadcast_to(np.asarray(b, dt), (n,))
    cmp = None if cmp is None else np.broadcast_to(np.asarray(cmp, dt), (n,))
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    first = np.concatenate([[True], sidx[1:] != sidx[:-1]])
    if first.all():  # no two lanes share an address
        old = view[idx]
        view[idx] = _combine(op, t, old, b, cmp, flush_f32)
        return old
    if op == "add" and dt.kind in "iu" and t.name not in _HALF:  # halves are stored as bits
        vals = b[order]
        incl = np.cumsum(vals, dtype=dt)
        excl = incl - vals
        seg = np.cumsum(first) - 1
        seg_start = excl[first]
        before = excl - seg_start[seg]
        old_sorted = view[sidx] + before
        last = np.concatenate([first[1:], [True]])
        view[sidx[last]] = old_sorted[last] + vals[last]
        old = np.empty(n, dt)
        old[order] = old_sorted
        return old
    # rounds: the k-th lane of every address in round k
    pos = np.arange(n)
    starts = pos[first]
    rank = pos - starts[np.cumsum(first) - 1]
    old = np.empty(n, dt)
    for k in range(int(rank.max()) + 1):
        lanes = order[rank == k]
        cur = view[idx[lanes]]
        old[lanes] = cur
        view[idx[lanes]] = _combine(op, t, cur, b[lanes], None if cmp is None else cmp[lanes],
                                    flush_f32)
    return old


@executes(Atom, Red)
def atom(insn, c: Compiler):
    t, op = insn.type, insn.op
    count = insn.vector_width
    if t is None or op is None or t.bits > 64:
        raise c.unsupported()
    is_atom = insn.opcode == "atom"
    a_op = insn.operands[1 if is_atom else 0]
    if not isinstance(a_op, Address):
        raise c.unsupported()
    space = insn.space
    if space not in ("global", "shared", "generic") or (count > 1 and op == "cas"):
        raise c.unsupported()
    dt = np_type(t) if t.name in ("f32", "f64") else (np_type(t) if t.kind.value != "f" else UINT[t.bits])
    addr = c.ops.address(a_op, space)
    value = insn.value if is_atom else insn.operands[1]
    bs = [c.read(e, dt) for e in _elements(value, count)]
    ds = [c.write(e, dt) for e in _elements(insn.operands[0], count)] if is_atom else None
    cmp = c.read(insn.compare, dt) if op == "cas" else None
    if len(bs) != count or (ds is not None and len(ds) != count):
        raise c.unsupported()
    w = dt.itemsize

    def run(m):
        threads = m.active()
        a = addr(m)
        n = len(a)
        hits, bad, spaces = m.mem.locate(space, a, threads, w * count)
        m.obs.access(m, "atomic", w * count, a, threads, spaces, bad)
        check_alignment(m, w * count, a, threads, hits)
        old = [np.zeros(n, dt) for _ in range(count)]
        bv = [np.broadcast_to(np.asarray(b(m), dt), (n,)) for b in bs]
        cv = None if cmp is None else np.broadcast_to(np.asarray(cmp(m), dt), (n,))
        for h in hits:
            pos = np.arange(n) if h.pos is None else h.pos
            ok = np.flatnonzero(h.off % w == 0)  # an element must be aligned to operate on
            if not len(ok):
                continue
            pos, off = pos[ok], h.off[ok]
            flush_f32 = h.name != "shared" and t.name == "f32"
            for j in range(count):
                hj = Hit(h.flat, pos, off + j * w, h.name)
                old[j][pos] = apply(hj, dt, op, t, bv[j][pos], None if cv is None else cv[pos],
                                    flush_f32)
        if ds is not None:
            for d, o in zip(ds, old):
                d(m, o)
    return run
