"""Whether two racing stores write the same value (a *benign* write-write race:
`converged = 1` stored by every thread that sees convergence).

Equal when proven from the stored operands alone:

- the same constant: two immediates of one spelling, registers the final facts pin to
  one number (the same one) at both stores, or the same `mov` of a constant;
- the same block-uniform value: both operands are the same expression (`thread_exprs`)
  of no thread index, over leaves both stores read with one value (`RaceFinder`'s
  `_stable`: no definition of them can run between the two stores).

Both must be scalar `st` of one width: PTX requires a store's address to be a multiple of
its width, so two overlapping stores of one width write the same bytes, and equal values
make equal bytes. Anything else (atomics, vectors, mixed widths) is not benign.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir.instructions.memory import St
from ..ir.operands import Immediate, Register
from .thread_exprs import Node

if TYPE_CHECKING:
    from ..interp.facts import Access
    from .races import Race, RaceFinder


def same_stored_value(finder: RaceFinder, r: Race) -> str | None:
    """The value every writer of the write-write race `r` stores (as text), or None when
    the two stores may write different values."""
    a, b = finder.accs[r.i], finder.accs[r.j]
    if not (isinstance(a.insn, St) and isinstance(b.insn, St)) or a.width != b.width \
            or a.insn.vector_width != 1 or b.insn.vector_width != 1:
        return None
    va, vb = _operand(a), _operand(b)
    if isinstance(va, Immediate) and isinstance(vb, Immediate):
        return va.text if va.text == vb.text else None
    ca, cb = _constant(a, va), _constant(b, vb)
    if ca is not None and cb is not None:
        mask = (1 << 8 * a.width) - 1
        return str(ca & mask) if ca & mask == cb & mask else None
    if not (isinstance(va, Register) and isinstance(vb, Register)):
        return None
    na = finder.builder.at(a.insn, a.state).register(va, a.insn)
    nb = finder.builder.at(b.insn, b.state).register(vb, b.insn)
    if na.opaque or na.threads or not _same(na, nb):
        return None
    # a register never written (no definition) holds whatever each thread had: no leaf
    if not all(finder.stable(leaf.ident, r.i, r.j) and (leaf.defs or leaf.ident[0] != "reg")
               for leaf in na.leaves | nb.leaves):
        return None
    folded = _folded(na)
    if folded is not None:
        return str(folded & (1 << 8 * a.width) - 1)
    return f"`{va}`" if va == vb else f"`{va}` (= `{vb}`)"


def _folded(node: Node) -> int | None:
    """The constant a `mov` chain of a constant gives (None for anything else)."""
    while node.op == "mov" and len(node.args) == 1:
        node = node.args[0]
    return int(node.value) if node.op == "const" else None  # type: ignore[arg-type]


def _operand(acc: Access):
    ops = acc.insn.operands
    return ops[1] if len(ops) > 1 else None


def _constant(acc: Access, op) -> int | None:
    if isinstance(op, Immediate):
        return None if op.is_float else int(op.value)
    if isinstance(op, Register) and acc.state is not None:
        v = acc.state.regs.get(op.key)
        if v is not None and v.region is None:
            return v.singleton()
    return None


def _same(a: Node, b: Node) -> bool:
    """The same computation on the same leaves (structurally, not by hash)."""
    if a is b:
        return True
    if a.op != b.op or a.mode != b.mode or a.bits != b.bits or a.signed != b.signed \
            or len(a.args) != len(b.args):
        return False
    if a.op in ("leaf", "count"):
        return a.ident == b.ident
    if a.value != b.value:
        return False
    return all(_same(x, y) for x, y in zip(a.args, b.args))


__all__ = ["same_stored_value"]
