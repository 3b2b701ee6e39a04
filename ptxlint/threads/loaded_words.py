"""Conditions on loaded values, for pairs of threads: thread t writes `s[t + 1]` only when
`row[t] > 0`, thread t + 1 writes `s[t + 1]` only when `row[t] <= 0`. Both read the same
word of `row`, so the two writes never both happen.

A register deciding whether a thread reaches an access (`RaceFinder._constraints`) is a
*loaded word* when, in every thread that gets there, it holds the value a plain `ld` read
at an address that is a function of the thread index and of values fixed for the whole
run of the block:

- its only definition is that `ld`, dominating the access; or
- nvcc's `x = cond ? row[i] : c`: two definitions, `mov`-like D0 in block B0 (or above
  it), which ends in `@p bra J`, and the `ld` alone in B0's fall-through B1, whose only
  way on is J; J dominates the access and B0 is in no loop. Then x is the loaded word
  in the threads where p was false at B0 (`applies`), and D0's value in the others
  (B0 dominates J: every way to the access passes the branch).

The word is the same for every thread and every read when nothing in the kernel may
write that memory: no store, atomic or reduction to the load's object (or to an unknown
one), no bulk copy, no call and no unmodelled instruction. The address's leaves must be block-uniform values fixed once per
block (`%ctaid`, a parameter loaded at the entry): two threads computing the same
address then read the same word, so value sets the facts narrowed at the two accesses
that do not meet rule the pair out (`pairs_clash` in `thread_pairs`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..domains.strided import StridedInterval as SI
from ..ir.instruction import Instruction
from ..ir.instructions.compare import Setp
from ..ir.instructions.memory import Ld
from ..ir.operands import Address, Immediate, Register
from ..ir.traits import Call
from ..ir.types import Kind
from .thread_exprs import Node, const

if TYPE_CHECKING:
    from .thread_exprs import Anchored, ExprBuilder

WRITES = ("store", "atomic", "reduce")
#: a comparison with its operands swapped (`c < r` is `r > c`)
_SWAP = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le",
         "lo": "hi", "hi": "lo", "ls": "hs", "hs": "ls"}


@dataclass(frozen=True, eq=False)
class Word:
    """`reg` holds the word at `address` (where `applies` is nonzero, or everywhere when
    None), and the facts keep it in `si` (`bits` wide) at the access."""

    memory: tuple  # (space, object, type, width): loads comparable word for word
    address: Node
    applies: Node | None
    si: SI
    bits: int


class LoadedWords:
    """The loaded-word constraints of one kernel (`word`), with the objects written."""

    def __init__(self, builder: ExprBuilder):
        self.b = builder
        facts = builder.facts
        self._loads = {id(a.insn): a for a in facts.accesses if a.insn.access_kind == "load"}
        written = [a for a in facts.accesses if a.insn.access_kind in WRITES]
        # a call, an unmodelled instruction or a bulk copy may write anything
        self._calls = any(isinstance(i, Call) or i.is_unmodelled
                          for i in facts.function.instructions) \
            or any(a.insn.access_kind == "copy" for a in facts.accesses)
        self._written = {a.address.region.obj if a.address.region is not None else None
                         for a in written}
        self._loops = set().union(*(lp.body for lp in builder.cfg.natural_loops().values()))

    def word(self, view: Anchored, reg: Register, si: SI, at: Instruction) -> Word | None:
        if self._calls:
            return None
        defs = self.b.defs.get(reg.key, [])
        if len(defs) == 1:
            load, applies = defs[0], None
            if not isinstance(load, Ld) or not self.b.dominates(load, at):
                return None
        elif len(defs) == 2:
            found = self._diamond(view, defs, at)
            if found is None:
                return None
            load, applies = found
        else:
            return None
        memory = self._memory(load)
        address = self._address(load)
        if memory is None or address is None:
            return None
        return Word(memory, address, applies, si, load.type.bits)  # type: ignore[attr-defined]

    def from_predicate(self, view: Anchored, pred: Register, value: int,
                       at: Instruction) -> Word | None:
        """A predicate the facts know at `at` (`value`), set by `setp.cmp p, r, c` with a
        constant c: the word in r lies where the comparison gives that value (the facts
        do not always carry the outcome back to r through `or.pred`)."""
        defs = self.b.defs.get(pred.key, [])
        if len(defs) != 1 or not isinstance(defs[0], Setp) or defs[0].guard is not None:
            return None
        d = defs[0]
        t = d.type
        if d.combine is not None or d.compare is None or t is None or t.kind is Kind.FLOAT \
                or not self.b.dominates(d, at) or d.compare not in _SWAP:
            return None
        op, (a, b) = d.compare, d.sources[:2]
        if isinstance(b, Register) and isinstance(a, Immediate):
            op, a, b = _SWAP[op], b, a
        if not (isinstance(a, Register) and isinstance(b, Immediate)) or b.is_float:
            return None
        holds = bool(value) != (d.pred_complement == pred and d.pred != pred)
        yes, no = SI.full(t.bits, t.is_signed).refine(op, SI.const(int(b.value)), t.bits,
                                                       t.is_signed)
        return self.word(view, a, yes if holds else no, d)

    def _memory(self, load: Instruction) -> tuple | None:
        acc = self._loads.get(id(load))
        t = getattr(load, "type", None)
        if acc is None or load.guard is not None or t is None or t.kind is Kind.FLOAT \
                or getattr(load, "vector_width", 1) != 1 or acc.address.region is None:
            return None
        obj = acc.address.region.obj
        if obj is None or obj in self._written or None in self._written:
            return None
        return acc.address.region.space, obj, str(t), acc.width

    def _address(self, load: Instruction) -> Node | None:
        """The load's byte address; None unless its leaves are fixed for the block."""
        addr = getattr(load, "address", None)
        if not isinstance(addr, Address):
            return None
        base, offset = self.b.at(load).address()
        if base.opaque or any(not self._fixed(leaf) for leaf in base.leaves):
            return None
        return base if not offset else Node("add", (base, const(offset)), bits=base.bits)

    def _fixed(self, leaf: Node) -> bool:
        kind = leaf.ident[0] if leaf.ident else None
        if kind == "special":
            return True
        if kind != "reg" or len(leaf.defs) != 1:
            return False
        d = leaf.defs[0]
        return self.b.cfg.block_of(d) not in self._loops \
            and not self.b.variance.varies_after(d, leaf.value)

    def _diamond(self, view: Anchored, defs: list[Instruction], at: Instruction
                 ) -> tuple[Instruction, Node] | None:
        cfg = self.b.cfg
        loads = [d for d in defs if isinstance(d, Ld)]
        if len(loads) != 1:
            return None
        load = loads[0]
        other = defs[1] if defs[0] is load else defs[0]
        b1 = cfg.block_of(load)
        blk = cfg.blocks[b1]
        if other.guard is not None or len(blk.preds) != 1 or len(blk.succs) != 1:
            return None
        b0 = blk.preds[0]
        term = cfg.blocks[b0].terminator
        join = blk.succs[0]
        if term is None or term.guard is None or term.opcode != "bra" or b1 != b0 + 1 \
                or set(cfg.blocks[b0].succs) != {b1, join} or b0 in self._loops \
                or not self.b.dominates(other, term) or not cfg.dominates(b0, join) \
                or not (cfg.block_of(at) == join or cfg.dominates(join, cfg.block_of(at))):
            return None
        p = view.register(term.guard.register, term)
        if p.opaque:
            return None
        # the load's value is the register's where the branch fell through to it
        fell = p if term.guard.negated else Node("not", (p,), bits=1)
        return load, fell


def loaded_words(builder: ExprBuilder) -> LoadedWords:
    hit = getattr(builder, "_loaded_words", None)
    if hit is None:
        hit = builder._loaded_words = LoadedWords(builder)  # type: ignore[attr-defined]
    return hit


__all__ = ["Word", "LoadedWords", "loaded_words"]
