"""Predicates as the *conditions* they test, so that two predicates computing the same
comparison of the same values count as one (for `definedness.py`).

nvcc recomputes a guard rather than keeping its predicate alive: CUB loads item 1 of a
partial tile under `or.b32 %r156, %r153, 1; setp.ge.s32 %p43, %r156, %r16; @%p43 bra`
and reads it later under `add.s32 %r18, %r153, 11; add.s32 %r191, %r18, -10;
setp.ge.u32 %p55, %r191, %r16; @%p55 bra`. A condition is a comparison brought to a
normal form (`a < b` or `a == b`, operands in order, and a polarity: `a >= b` is "not
`a < b`") whose operands are *linear forms* over registers (`%r153 + 1` for both
`%r156` and `%r191`, following registers with one definition); it stays meaningful
until one of the registers of the forms is written.

A signed and an unsigned comparison of the same forms are one condition when the facts
show one operand of each (the index) non-negative: they differ only when the other (an
element count) is negative, which is assumed not to happen (CUB compares
`tid * 12 >= valid_items` signed to load and unsigned to use; the analysis knows the
index's range but not that `valid_items = num_items - offset` is positive). Asked only
where such a pair exists. A predicate with one definition, an integer `setp` without
`.and/.or/.xor`, stands for its condition; any other predicate stands for itself.
Linear forms ignore wrap-around (index arithmetic).
"""
from __future__ import annotations

from collections.abc import Callable

from ..ir.instruction import Instruction
from ..ir.instructions.compare import Setp
from ..ir.operands import Immediate, Register
from ..ir.types import Kind
from ..ir.reg_flow import flow_key

# (normal operator, swap operands, negate) for each integer comparison
_NORMAL = {"lt": ("lt", False, False), "ge": ("lt", False, True),
           "gt": ("lt", True, False), "le": ("lt", True, True),
           "lo": ("lt", False, False), "hs": ("lt", False, True),
           "hi": ("lt", True, False), "ls": ("lt", True, True),
           "eq": ("eq", False, False), "ne": ("eq", False, True)}
_UNSIGNED_OPS = frozenset({"lo", "hs", "hi", "ls"})
MAX_DEPTH = 8


class Conditions:
    """`lit(p, value)`: the literal "predicate `p` has `value`" as (condition, value);
    `deps[r]`: the conditions that register index `r` takes part in.

    `non_negative(setp)`: the facts show an operand of `setp` non-negative;
    `low_zero(insn, reg, n)`: they show the low `n` bits of `reg` zero before `insn`
    (an `or` with a constant below 2^n is then an addition)."""

    def __init__(self, insns: list[Instruction], index: Callable[[str], int],
                 non_negative: Callable[[Instruction], bool] | None = None,
                 low_zero: Callable[[Instruction, Register, int], bool] | None = None):
        self.index = index
        self.low_zero = low_zero
        self.ids: dict[tuple, int] = {}
        self.alias: dict[int, tuple[int, bool]] = {}  # predicate -> (condition, negated)
        self.deps: dict[int, list[int]] = {}
        self.defs: dict[str, list[Instruction]] = {}
        self._linears: dict[tuple[str, int], tuple] = {}  # (key, depth) -> `_linear`
        for insn in insns:
            for reg in insn.defs:
                self.defs.setdefault(flow_key(reg), []).append(insn)
        found: list[tuple[Setp, tuple, bool]] = []
        for key, ds in self.defs.items():
            d = ds[0]
            if len(ds) == 1 and isinstance(d, Setp) and d.guard is None:
                shape = self._shape(d)
                if shape is not None:
                    found.append((d, shape, d.pred is not None and flow_key(d.pred) == key))
        clash = _sign_clashes([s for _, s, _ in found])
        for d, shape, first in found:
            if shape[:-1] in clash and non_negative is not None and non_negative(d):
                shape = (*shape[:-2], "n", shape[-1])
            regs = [k for side in shape[2:4] for k, _ in side[0] if isinstance(k, str)]
            c = self._id(shape[:-1], regs)
            reg = d.pred if first else d.pred_complement
            if reg is not None:
                self.alias[index(flow_key(reg))] = (c, shape[-1] != (not first))

    def _id(self, sig: tuple, regs: list[str]) -> int:
        c = self.ids.get(sig)
        if c is None:
            c = self.ids[sig] = len(self.ids)
            for key in regs:
                self.deps.setdefault(self.index(key), []).append(c)
        return c

    def lit(self, p: int, value: bool) -> tuple[int, bool]:
        hit = self.alias.get(p)
        if hit is None:
            hit = self.alias[p] = (self._id(("pred", p), []), False)
            self.deps.setdefault(p, []).append(hit[0])
        c, neg = hit
        return c, value != neg

    # ---- comparisons in normal form ------------------------------------------------------------
    def _shape(self, d: Setp) -> tuple | None:
        """(operator, bits, a, b, sign, negated): the comparison in normal form, the sign
        class ("s", "u", "=") last but one; None for what is not an integer comparison."""
        t, mode = d.type, d.compare
        if t is None or t.kind not in (Kind.SIGNED, Kind.UNSIGNED, Kind.BITS) or \
                d.combine is not None or mode not in _NORMAL:
            return None
        a, b = self._linear(d.a, 0), self._linear(d.b, 0)
        if a is None or b is None:
            return None
        op, swap, neg = _NORMAL[mode]
        if swap or (op == "eq" and str(b) < str(a)):
            a, b = b, a
        sign = "u" if mode in _UNSIGNED_OPS or t.kind is not Kind.SIGNED else "s"
        if op == "eq":
            sign = "="  # equality is the same in both views
        return (op, t.bits, a, b, sign, neg)

    def _linear(self, op, depth: int) -> tuple | None:
        """`op` as (((leaf, coefficient), ...), constant), through registers with one
        unguarded definition: `mov`, `add`/`sub`, `or` with a constant (low bits zero),
        `shl`/`mul`/`mad.lo` by a constant. Leaves are register keys, special registers, and
        registers that cannot be followed."""
        if isinstance(op, Immediate):
            return None if op.is_float else ((), int(op.value))
        if not isinstance(op, Register):
            return None
        if op.is_special:
            return (((("special", op.name), 1),), 0)
        key = flow_key(op)
        hit = self._linears.get((key, depth))
        if hit is None:  # CUB's comparisons share their operands' definitions
            hit = self._linears[(key, depth)] = self._linear_of(key, depth)
        return hit

    def _linear_of(self, key: str, depth: int) -> tuple:
        """`_linear` of register `key` (not special)."""
        leaf = (((key, 1),), 0)
        ds = self.defs.get(key, [])
        if len(ds) != 1 or depth >= MAX_DEPTH or ds[0].guard is not None:
            return leaf
        d = ds[0]
        srcs = d.sources
        if d.opcode == "mov" and len(srcs) == 1 and isinstance(srcs[0], Register):
            return self._linear(srcs[0], depth + 1) or leaf
        if d.opcode == "mad" and "lo" in d.mods and len(srcs) == 3 and \
                isinstance(srcs[1], Immediate) and not srcs[1].is_float:
            lx, lz = self._linear(srcs[0], depth + 1), self._linear(srcs[2], depth + 1)
            if lx is None or lz is None:
                return leaf
            return _plus(_scale(lx, int(srcs[1].value)), lz, 1)
        if d.opcode not in ("add", "sub", "or", "shl", "mul") or len(srcs) != 2 or \
                any(m in ("cc", "hi", "wide", "sat") or m.startswith("f") for m in d.mods):
            return leaf
        x, y = srcs
        if d.opcode in ("shl", "mul", "or") and not isinstance(y, Immediate):
            return leaf
        if d.opcode == "or":
            n = int(y.value)
            if n < 0 or self.low_zero is None or not isinstance(x, Register) or \
                    not self.low_zero(d, x, n.bit_length()):
                return leaf
        lx, ly = self._linear(x, depth + 1), self._linear(y, depth + 1)
        if lx is None or ly is None:
            return leaf
        if d.opcode in ("shl", "mul"):
            return _scale(lx, (1 << int(y.value)) if d.opcode == "shl" else int(y.value))
        return _plus(lx, ly, -1 if d.opcode == "sub" else 1)


def _scale(a: tuple, k: int) -> tuple:
    return tuple((x, c * k) for x, c in a[0]), a[1] * k


def _plus(a: tuple, b: tuple, k: int) -> tuple:
    out = dict(a[0])
    for x, c in b[0]:
        out[x] = out.get(x, 0) + k * c
    return tuple(sorted(((x, c) for x, c in out.items() if c), key=str)), a[1] + k * b[1]


def _sign_clashes(shapes: list[tuple]) -> set[tuple]:
    """Signatures (without polarity) whose comparison also appears with the other sign."""
    seen: dict[tuple, set[str]] = {}
    for s in shapes:
        seen.setdefault(s[:4], set()).add(s[4])
    return {(*k, sign) for k, signs in seen.items() if len(signs) > 1 for sign in signs}


__all__ = ["Conditions"]
