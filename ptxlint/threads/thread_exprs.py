"""Registers as expressions over the thread indices, for questions about *pairs of threads*.

The interpreter's lane form says how a value varies across the lanes of one warp; a race
between two threads of a block needs each thread's own value, and relations the
non-relational domains drop: `tile + ((s + 1) & 1) * 1024` and `tile + (s & 1) * 1024`
never meet in one step `s`, and `partial[tid + s]` read under `tid < s` is never
`partial[tid']` written under `tid' < s`. `ExprBuilder` follows a register back through
its definitions to an expression DAG whose leaves are

- thread indices (`%tid.x/y/z`, `%laneid`): evaluated per thread (`thread_eval.py`);
- constants and object symbols (`tile`: offset 0 of its object);
- *uniform leaves*: a register every thread of the block agrees on (`BlockVariance`),
  with its value set from the final facts; defined once (a kernel parameter, a load)
  or several times (a loop counter);
- *induction counts*: a register `r = init; ...; r += C` in a loop is `init + C*k`, `k`
  an iteration count (a leaf of its own, possibly different in every thread);
- *tables*: a load from an initialised `.const` array of integers (`perm[lane]`) is
  the table looked up at the thread's own index (`table`, holding the values).

A definition is followed only when it is the register's only one and dominates the use
(nvcc's PTX is almost SSA); anything else (floats, `.cc` chains, vectors) is `opaque`:
not a function of the thread index the evaluator can compute.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter

from ..domains.strided import StridedInterval as SI
from ..ir.instruction import Instruction
from ..ir.instructions.compare import Setp
from ..ir.instructions.convert import Cvt
from ..ir.instructions.memory import Cvta
from ..ir.operands import (Address, Expression, Immediate, Negated, PredicatePair,
                           Register, Symbol)
from ..ir.types import Kind, lookup
from .block_uniform import BlockVariance, block_variance, is_varying_special
from .induction import self_increment, trip_range
from .toggles import parity_holds, parity_si, toggle_groups

THREAD_INDEX = {"%tid.x": "tx", "%tid.y": "ty", "%tid.z": "tz", "%laneid": "lane"}
MAX_DEPTH = 48
#: integer opcodes evaluated lane by lane (the rest of the instruction set is opaque)
ARITH = frozenset({"add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "not",
                   "neg", "min", "max", "rem", "div", "mov", "cvt", "cvta", "selp", "setp"})
_SYM_PLUS = re.compile(r"^\s*([\w$.%]+)\s*(?:\+\s*(-?\s*(?:0[xX][0-9a-fA-F]+|\d+)))?\s*$")


@dataclass(eq=False)
class Node:
    """An expression: `op` is `const`, `thread`, `sym`, `leaf`, `count`, `opaque` or an
    opcode of `ARITH` (with `mode`: `lo`/`wide`, the comparison, ...)."""

    op: str
    args: tuple["Node", ...] = ()
    value: object = None  # const: int; thread: index name; sym: object; leaf/count: key
    bits: int = 32
    signed: bool = False
    mode: str | None = None
    si: SI | None = None  # leaf/count: the values it may take (None: unknown)
    defs: tuple[Instruction, ...] = ()  # leaf/count: where the register is written
    ident: tuple = ()  # leaf/count: which value it is (("reg", key), ("count", key), ...)
    pinned: bool = False  # leaf: its identity was decided for one anchor (see `Anchored`)
    leaves: frozenset = field(default=frozenset())  # leaf/count nodes beneath (and self)
    opaque: bool = field(init=False, repr=False)  # not computable (an `opaque` beneath)
    anchored: bool = field(init=False, repr=False)  # a `pinned` leaf beneath (or self)

    def __post_init__(self) -> None:
        # an anchored node is built for one anchor: not to be shared with expressions of
        # other anchors. Set here, not cached on demand: every node is asked both.
        if self.op in ("leaf", "count"):
            self.leaves = frozenset({self})
            self.opaque, self.anchored = False, self.pinned
        elif self.args:
            args = self.args
            self.leaves = frozenset().union(*[a.leaves for a in args])
            self.opaque = self.op == "opaque" or any([a.opaque for a in args])
            self.anchored = self.pinned or any([a.anchored for a in args])
        else:
            self.opaque, self.anchored = self.op == "opaque", self.pinned

    @cached_property
    def threads(self) -> frozenset[str]:
        """The thread indices the expression reads."""
        if self.op == "thread":
            return frozenset({self.value})  # type: ignore[arg-type]
        return frozenset().union(*(a.threads for a in self.args)) if self.args else frozenset()

    @cached_property
    def skey(self) -> int:
        """Structural hash: the same computation on the same leaves, whatever node."""
        if self.op in ("leaf", "count"):
            return hash(self.ident)
        return hash((self.op, self.mode, self.bits, self.signed, self.value,
                     tuple(a.skey for a in self.args)))

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


OPAQUE = Node("opaque")


def const(v: int, bits: int = 64) -> Node:
    return Node("const", value=int(v), bits=bits)


class ExprBuilder:
    """Expressions of one kernel's registers (see the module docstring). Build them
    through `at(anchor)`: a register read at several places holds one value as long as no
    definition of it lies between those places and the anchor (the access whose threads
    are compared), so a loop counter read by a guard and by the address is one leaf."""

    def __init__(self, facts, variance: BlockVariance):
        self.facts = facts
        self.cfg = facts.cfg
        self.variance = variance
        self._states: dict[int, object] = {}
        self._kept: dict[int, list[tuple[int, object]]] = {}  # block -> (place, state), sorted
        self._anchors: dict[int, Anchored] = {}
        self._reach: dict[tuple[int, int], set[int]] = {}
        self.trips: dict[int, int | None] = {}  # loop head -> trips (`induction.loop_trips`)
        self._shared: dict[tuple[int, str], Node] = {}  # expressions no anchor pins
        self._defined: dict[tuple[str, int], Node] = {}  # leaves of opaque definitions

    def at(self, anchor: Instruction, state=None) -> "Anchored":
        hit = self._anchors.get(id(anchor))
        if hit is None:
            hit = self._anchors[id(anchor)] = Anchored(self, anchor, state)
        return hit

    @cached_property
    def defs(self) -> dict[str, list[Instruction]]:
        out: dict[str, list[Instruction]] = {}
        for b in self.cfg.blocks:
            for insn in b.instructions:
                for key in insn.def_keys:
                    out.setdefault(key, []).append(insn)
        return out

    def state(self, at: Instruction):
        """The facts' state before `at` (shared: do not change it). A block is replayed
        from the nearest state kept before `at`, and only the states asked for are kept
        (a copy per instruction of a long block costs more than the steps); the states
        of the block's unguarded accesses (`Access.state`, unrefined) are kept from the
        start."""
        hit = self._states.get(id(at))
        if hit is None:
            b, j = self.cfg.position(at)
            if self.facts.in_states[b] is None:
                return None
            kept = self._kept.get(b)
            if kept is None:
                kept = self._kept[b] = [(self.cfg.position(a.insn)[1], a.state)
                                        for a in self.facts.block_accesses(b)
                                        if a.insn.guard is None]
            k = bisect_right(kept, j, key=itemgetter(0))
            i, state = kept[k - 1] if k else (0, None)
            state = state.copy() if state is not None else self.facts.entry_state(b)
            for insn in self.cfg.blocks[b].instructions[i:j]:
                self.facts.step(insn, state)
            kept.insert(k, (j, state))
            hit = self._states[id(at)] = state
        return hit

    def dominates(self, d: Instruction, at: Instruction) -> bool:
        bd, i = self.cfg.position(d)
        ba, j = self.cfg.position(at)
        return i < j if bd == ba else self.cfg.dominates(bd, ba)

    def defined_between(self, key: str, u: Instruction, anchor: Instruction) -> bool:
        """Whether a path from `u` to `anchor` that does not run `u` again (which would
        read the new value) may pass a definition of `key`."""
        bu, i = self.cfg.position(u)
        ba, j = self.cfg.position(anchor)
        if bu == ba and i <= j:
            return any(self._defines(d, key) for d in self.cfg.blocks[bu].instructions[i:j])
        inside = set()  # blocks of definitions that only a path through others reaches
        for b, k in (self.cfg.position(d) for d in self.defs.get(key, [])):
            if b == bu and k > i or b == ba and k < j:
                return True
            if b != bu and b != ba:
                inside.add(b)
        # a block between is reached from bu and reaches ba: most are told apart by that
        # alone, before the two walks over the CFG the exact answer takes
        reach = self._reachable
        inside = {b for b in inside if reach[bu] >> b & 1 and reach[b] >> ba & 1}
        return bool(inside) and not inside.isdisjoint(self._between(bu, ba))

    @cached_property
    def _reachable(self) -> list[int]:
        """Per block, the blocks a path of one edge or more reaches (bitset)."""
        blocks = self.cfg.blocks
        order = [*reversed(self.cfg.rpo())]
        seen = set(order)
        order += [b for b in range(len(blocks)) if b not in seen]
        out = [0] * len(blocks)
        tick = self.cfg.deadline.tick
        changed = True
        while changed:
            changed = False
            for b in order:
                tick()
                acc = out[b]
                for s in blocks[b].succs:
                    acc |= 1 << s | out[s]
                if acc != out[b]:
                    out[b], changed = acc, True
        return out

    @cached_property
    def _edges(self) -> tuple[list, list]:
        """Per block, its successors and its predecessors."""
        blocks = self.cfg.blocks
        return [b.succs for b in blocks], [b.preds for b in blocks]

    @staticmethod
    def _defines(insn: Instruction, key: str) -> bool:
        return any(r.key == key for r in insn.defs)

    def _between(self, bu: int, ba: int) -> set[int]:
        """Blocks strictly inside some path bu -> ba passing neither end again."""
        hit = self._reach.get((bu, ba))
        if hit is None:
            succs, preds = self._edges
            fwd = _closure(succs[bu], succs, stop={bu, ba})
            bwd = _closure(preds[ba], preds, stop={bu, ba})
            hit = self._reach[(bu, ba)] = fwd & bwd
        return hit


class Anchored:
    """Expressions of registers as read on the way to one anchor instruction."""

    def __init__(self, builder: ExprBuilder, anchor: Instruction, state=None):
        self.b = builder
        self.anchor = anchor
        self.anchor_state = state if state is not None else builder.state(anchor)
        self._memo: dict[tuple[int, str], Node] = {}
        self._leaves: dict[tuple, Node] = {}

    # ---- entry points --------------------------------------------------------------------------
    def address(self) -> tuple[Node, int]:
        """The byte address the anchor accesses (object symbols evaluate to 0), as a base
        expression and a constant offset (`[%r4+16]`)."""
        insn = self.anchor
        addr = insn.address  # type: ignore[attr-defined]
        if not isinstance(addr, Address):
            return OPAQUE, 0
        if isinstance(addr.base, Register):
            base = self.register(addr.base, insn, 0)
        elif isinstance(addr.base, Symbol):
            base = Node("sym", value=addr.base.name, bits=64)
        else:
            base = const(0)
        return base, addr.offset

    def register(self, reg: Register, at: Instruction, depth: int = 0) -> Node:
        """`reg` as read by `at`."""
        if reg.is_special:
            return self._special(reg)
        defs = self.b.defs.get(reg.key, [])
        if len(defs) == 1 and depth < MAX_DEPTH and self.b.dominates(defs[0], at):
            key = (id(defs[0]), reg.key)
            hit = self.b._shared.get(key) or self._memo.get(key)
            if hit is None:
                hit = self._memo[key] = self._of_def(defs[0], reg, depth + 1)
                if not hit.anchored:  # the same expression for every anchor
                    self.b._shared[key] = hit
            return hit
        induct = self._induction(reg, defs, at, depth)
        if induct is None:
            induct = self._toggled(reg, at)
        return induct if induct is not None else self._leaf(reg, at, defs)

    # ---- leaves ----------------------------------------------------------------------------------
    def _special(self, reg: Register) -> Node:
        facts = self.b.facts
        entry = facts.in_states[facts.cfg.entry]
        v = entry.regs.get(reg.key) if entry is not None else None
        if v is not None and v.singleton() is not None:
            return const(v.singleton())
        if reg.name in THREAD_INDEX:
            return Node("thread", value=THREAD_INDEX[reg.name])
        if is_varying_special(reg.name):
            return OPAQUE
        key = ("special", reg.key)
        if key not in self._leaves:
            self._leaves[key] = Node("leaf", value=reg.key, si=v.si if v is not None else None,
                                     ident=("special", reg.key))
        return self._leaves[key]

    def _leaf(self, reg: Register, at: Instruction, defs: list[Instruction]) -> Node:
        if self.b.variance.is_varying(reg.key, at):
            return OPAQUE
        # one value from `at` to the anchor: key it by the anchor, else by `at`
        same = not self.b.defined_between(reg.key, at, self.anchor)
        key = (reg.key, "anchor" if same else id(at))
        hit = self._leaves.get(key)
        if hit is None:
            state = self.anchor_state if same else self.b.state(at)
            hit = self._leaves[key] = Node("leaf", value=reg.key, si=_si(state, reg.key),
                                           defs=tuple(defs), pinned=True,
                                           ident=("reg", reg.key) if same else
                                           ("reg@", reg.key, id(at)))
        return hit

    def _induction(self, reg: Register, defs: list[Instruction], at: Instruction,
                   depth: int) -> Node | None:
        """`r = init` (one or more definitions computing the same expression) and
        `r = r + C` once, C a constant: `init + C*k`, k an iteration count."""
        steps = [(d, c) for d in defs if (c := self_increment(d, reg)) is not None]
        if len(steps) != 1 or len(defs) < 2 or depth >= MAX_DEPTH:
            return None
        step, c = steps[0]
        starts = [self._of_def(d, reg, depth + 1) for d in defs if d is not step]
        if any(x.opaque for x in starts) or len({x.skey for x in starts}) != 1:
            return None
        key = ("count", reg.key, id(at))
        if key not in self._leaves:
            self._leaves[key] = Node("count", value=reg.key, defs=(step,),
                                     si=trip_range(self.b, reg, step,
                                                   [d for d in defs if d is not step], at, c),
                                     ident=("count", reg.key))
        bits = _bits(step)
        return Node("add", (starts[0], Node("mul", (self._leaves[key], const(c, bits)),
                                            bits=bits, mode="lo")), bits=bits)

    def _toggled(self, reg: Register, at: Instruction) -> Node | None:
        """A toggle (`toggles.py`) read with the value it has at the anchor:
        `first + (second - first) * P`, P the parity leaf of its group."""
        group = toggle_groups(self.b).get(reg.key)
        if group is None or self.b.variance.is_varying(reg.key, at) \
                or self.b.defined_between(reg.key, at, self.anchor) \
                or not parity_holds(self.b, group, self.anchor):
            return None
        me = next(m for m in group.members if m.key == reg.key)
        key = ("parity", group.leaf_key)
        if key not in self._leaves:
            self._leaves[key] = Node("count", value=group.leaf_key, si=parity_si(),
                                     defs=tuple(m.step for m in group.members),
                                     ident=("count", group.leaf_key))
        return Node("add", (const(me.first, me.bits),
                            Node("mul", (self._leaves[key], const(me.second - me.first, me.bits)),
                                 bits=me.bits, mode="lo")), bits=me.bits)

    # ---- definitions -----------------------------------------------------------------------------
    def _of_def(self, d: Instruction, reg: Register, depth: int) -> Node:
        if d.opcode == "ld" and d.guard is None:
            found = self._table(d, depth)
            if found is not None:
                return found
        if d.guard is not None or d.opcode not in ARITH or getattr(d, "reads_carry", False) \
                or "cc" in d.mods or "hi" in d.mods:
            return self._uniform_or_opaque(d, reg)
        if isinstance(d, Setp):
            return self._setp(d, reg, depth)
        t = d.type  # type: ignore[attr-defined]
        if t is None or t.kind is Kind.FLOAT:
            return self._uniform_or_opaque(d, reg)
        if isinstance(d, (Cvt, Cvta)):
            return self._convert(d, reg, depth)
        srcs = [self._operand(op, d, depth) for op in d.sources]
        if any(s is None for s in srcs) or not srcs:
            return self._uniform_or_opaque(d, reg)
        mode = getattr(d, "mode", None)
        src_bits = t.bits
        if mode == "wide":
            src_bits, t = t.bits, lookup(f"{'s' if t.is_signed else 'u'}{2 * t.bits}") or t
        return Node(d.opcode, tuple(srcs), bits=t.bits, signed=t.is_signed,  # type: ignore[arg-type]
                    mode=f"wide{src_bits}" if mode == "wide" else mode)

    def _setp(self, d: Setp, reg: Register, depth: int) -> Node:
        t = d.type
        srcs = [self._operand(op, d, depth) for op in (d.a, d.b)]
        if t is None or t.kind is Kind.FLOAT or None in srcs or d.combine is not None \
                or d.compare is None:
            return self._uniform_or_opaque(d, reg)
        node = Node("setp", tuple(srcs), bits=t.bits,  # type: ignore[arg-type]
                    signed=t.is_signed, mode=d.compare)
        dest = d.operands[0]
        if isinstance(dest, PredicatePair) and dest.second == reg:
            return Node("not", (node,), bits=1)
        return node

    def _table(self, d: Instruction, depth: int) -> Node | None:
        """`ld.const` of one integer from an initialised `.const` array (never written:
        the values are those of the initialiser), at an address the evaluator follows."""
        addr, t = getattr(d, "address", None), getattr(d, "type", None)
        if getattr(d, "space", None) != "const" or not isinstance(addr, Address) \
                or t is None or t.kind is Kind.FLOAT or getattr(d, "vector_width", 1) != 1:
            return None
        if isinstance(addr.base, Symbol):
            base = Node("sym", value=addr.base.name, bits=64)
        elif isinstance(addr.base, Register):
            base = self.register(addr.base, d, depth + 1)
        else:
            return None
        names = {n.value for n in _syms(base)}
        var = self.b.facts.ctx.variable(next(iter(names))) if len(names) == 1 else None
        values = const_table(var)
        if values is None or base.opaque:
            return None
        elem = var.type.bytes  # type: ignore[union-attr]
        if elem != t.bytes:
            return None
        index = base if not addr.offset else Node("add", (base, const(addr.offset)), bits=64)
        return Node("table", (index,), value=(var.name, values, elem),  # type: ignore[union-attr]
                    bits=t.bits, signed=t.is_signed)

    def _convert(self, d: Instruction, reg: Register, depth: int) -> Node:
        src = self._operand(d.sources[0], d, depth) if d.sources else None
        dst = d.type  # type: ignore[attr-defined]
        from_t = d.source_type if isinstance(d, Cvt) else dst  # type: ignore[attr-defined]
        if src is None or dst is None or from_t is None or from_t.kind is Kind.FLOAT \
                or dst.kind is Kind.FLOAT or any(m.startswith(("sat", "rn", "rz", "rm", "rp"))
                                                 for m in d.mods):
            return self._uniform_or_opaque(d, reg)
        if isinstance(d, Cvta):
            return src  # an address in another window: the same offset into the object
        return Node("cvt", (src,), bits=dst.bits, signed=from_t.is_signed,
                    mode=str(from_t.bits))

    def _operand(self, op, at: Instruction, depth: int) -> Node | None:
        if isinstance(op, Register):
            return self.register(op, at, depth)
        if isinstance(op, Negated):
            return Node("not", (self.register(op.operand, at, depth),), bits=1)
        if isinstance(op, Immediate):
            return None if op.is_float else const(int(op.value))
        if isinstance(op, Symbol):
            return Node("sym", value=op.name, bits=64)
        if isinstance(op, Expression):
            m = _SYM_PLUS.match(op.text)
            if m is None:
                return None
            base = Node("sym", value=m.group(1), bits=64)
            off = int(m.group(2).replace(" ", ""), 0) if m.group(2) else 0
            return base if not off else Node("add", (base, const(off)), bits=64)
        return None

    def _uniform_or_opaque(self, d: Instruction, reg: Register) -> Node:
        """A value the evaluator cannot compute: a leaf when the block agrees on it (its
        value set is read at the anchor, `Side.sis`)."""
        if self.b.variance.varies_after(d, reg.key):
            return OPAQUE
        key = (reg.key, id(d))
        hit = self.b._defined.get(key)
        if hit is None:
            hit = self.b._defined[key] = Node("leaf", value=reg.key, defs=(d,),
                                              ident=("reg", reg.key))
        return hit


def _syms(node: Node) -> list[Node]:
    if node.op == "sym":
        return [node]
    return [x for a in node.args for x in _syms(a)]


_INT = r"[-+]?\s*(?:0[xX][0-9a-fA-F]+|\d+)"
_INTS = re.compile(rf"^\{{\s*({_INT}(?:\s*,\s*{_INT})*)\s*\}}$")
MAX_TABLE = 4096  # entries of a lookup table followed


def const_table(var) -> tuple[int, ...] | None:
    """The values of an initialised `.const` array of integers, element by element (the
    missing tail of a short initialiser is zeros); None for anything else."""
    if var is None or var.space != "const" or var.initializer is None or var.vector != 1 \
            or var.type.kind is Kind.FLOAT or len(var.dims) != 1 or var.dims[0] is None \
            or var.dims[0] > MAX_TABLE:
        return None
    m = _INTS.match(var.initializer.strip())
    if m is None:
        return None
    values = [int(x.replace(" ", ""), 0) for x in m.group(1).split(",")]
    if len(values) > var.dims[0]:
        return None
    return tuple(values) + (0,) * (var.dims[0] - len(values))


def _si(state, key: str) -> SI | None:
    v = state.regs.get(key) if state is not None else None
    return v.si if v is not None and v.region is None else None


def _closure(starts, edges: list, stop: set[int]) -> set[int]:
    """The blocks reached from `starts` over `edges` (per block, its neighbours) without
    passing a block of `stop` (not included)."""
    seen = set(stop)
    todo = list(starts)
    while todo:
        b = todo.pop()
        if b not in seen:
            seen.add(b)
            todo.extend(edges[b])
    return seen - stop


def _bits(insn: Instruction) -> int:
    t = getattr(insn, "type", None)
    return t.bits if t is not None else 32


def expr_builder(facts) -> ExprBuilder:
    """The expressions of `facts`' kernel, built once for every rule that asks."""
    return facts.derived("expr_builder", lambda f: ExprBuilder(f, block_variance(f)))


def compared_by(defs: dict, preds: list[Register]) -> list[tuple[Register, bool]]:
    """(register, is a predicate): the predicates and what their definitions (`defs`:
    register key -> defining instructions) read, three levels deep (`or.pred` of two
    comparisons of an index computed from `%tid.x`): the registers whose per-thread
    values decide which threads take a branch."""
    out: dict[str, tuple[Register, bool]] = {}
    todo = [(p, True) for p in preds]
    for _ in range(3):
        nxt = []
        for reg, is_pred in todo:
            if reg.key in out:
                continue
            out[reg.key] = (reg, is_pred)
            for d in defs.get(reg.key, []):
                pred = d.opcode in ("and", "or", "xor", "not") and is_pred
                nxt += [(r, pred) for r in d.uses if not r.is_special]
        todo = nxt
    return list(out.values())


__all__ = ["Node", "ExprBuilder", "Anchored", "expr_builder", "OPAQUE", "THREAD_INDEX",
           "const", "const_table", "compared_by"]
