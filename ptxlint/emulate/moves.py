"""`mov` (PTX ISA 9.7.10.3-4): copies, immediates, special registers, addresses of
variables and functions, and the pack/unpack forms `mov.b64 %rd, {%r1, %r2}` /
`mov.b64 {%r1, %r2}, %rd` (the first element is the least significant)."""
from __future__ import annotations

import numpy as np

from ..ir.instructions.move import Mov
from ..ir.operands import Sink, Vector
from .operands import UINT, elements
from .semantics import Compiler, executes


@executes(Mov)
def mov(insn, c: Compiler):
    t = insn.type
    if t is None or t.bits > 64:
        raise c.unsupported()
    d_op, a_op = insn.operands[0], insn.a
    vw = insn.vector_width
    if vw > 1 or (isinstance(d_op, Vector) and isinstance(a_op, Vector)):
        dt = c.dtype()
        pairs = [(c.write(x, dt), c.read(y, dt))
                 for x, y in zip(elements(d_op, vw), elements(a_op, vw)) if not isinstance(x, Sink)]

        def copy_all(m):
            for w, r in [(w, r(m)) for w, r in pairs]:  # read all before writing
                w(m, r)
        return copy_all
    if insn.is_pack:
        return _pack(c, t.bits, a_op.elements, c.write(d_op, UINT[t.bits]))
    if insn.is_unpack:
        return _unpack(c, t.bits, d_op.elements, c.read(a_op, UINT[t.bits]))
    dt = c.dtype()
    a, w = c.read(a_op, dt), c.write(d_op, dt)
    return lambda m: w(m, a(m))


def _pack(c: Compiler, bits: int, elements, w):
    part = bits // len(elements)
    u, up = UINT[bits], UINT[part]
    reads = [c.read(e, up) for e in elements]

    def run(m):
        out = np.asarray(reads[0](m)).astype(u)
        for i, r in enumerate(reads[1:], 1):
            out = out | (np.asarray(r(m)).astype(u) << u.type(part * i))
        w(m, out)
    return run


def _unpack(c: Compiler, bits: int, elements, read):
    part = bits // len(elements)
    u, up = UINT[bits], UINT[part]
    writes = [(i, c.write(e, up)) for i, e in enumerate(elements) if not isinstance(e, Sink)]
    mask = u.type((1 << part) - 1)

    def run(m):
        x = np.asarray(read(m), u)
        for i, w in writes:
            w(m, ((x >> u.type(part * i)) & mask).astype(up))
    return run
