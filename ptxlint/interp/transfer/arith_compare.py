"""Transfer functions of comparison and selection (PTX ISA 9.7.7-9.7.8: set, setp, selp,
slct), predicate logic (`and/or/xor/not.pred`) and `testp`.

A predicate's value is {1}, {0} or {0, 1}; it is uniform when everything it was computed
from is (a definite answer is a constant, hence uniform anyway). Integer comparisons use
the strided intervals' three-valued `cmp`; two pointers into the same object are equal
iff their offsets are, and are ordered like their offsets while both offsets lie in
[0, 2^(w-8)] (an object and the addresses just past it do not wrap around the address
space; a pointer below its object, which could, is compared as an unknown address).
Floating-point comparisons are MAYBE unless both sides are constant bit patterns.

`setp` records the comparison that defines its predicates (`State.conds`) when the
operands are registers or immediates, so branches can refine them (`refine.assume`).
A Condition's `negated` flag negates the whole `(a op b) bool c`, so with `.and/.or/.xor`
only `p` is recorded: the complement `q = !(a op b) bool c` is no negation of it.
`not.pred` and `mov.pred` pass the recorded comparison on. Float comparisons are
recorded with `is_float` (they refine only the combined predicate, never the values).
"""
from __future__ import annotations

import math
import struct

from ...domains.lattice import Tri
from ...domains.state import Condition, State
from ...domains.strided import StridedInterval as SI
from ...domains.strided import wrap_int
from ...domains.value import BOTTOM, Value, tri_of
from ...ir.instructions.compare import Selp, Set, Setp, Slct
from ...ir.instructions.floating import Testp
from ...ir.operands import Immediate, Negated, Operand, Register
from ...ir.types import DataType, lookup
from .arith_values import plain, pred_not, pred_value, read, view
from ..context import Ctx
from ..refine import assume_cached
from .table import assign, reads_state, transfers

INT_COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"})
_SIGNED_FORM = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_PACKED_HALVES = frozenset({"f16x2", "bf16x2"})
_F32 = lookup("f32")


# ---- three-valued logic -------------------------------------------------------------------------
def combine_tri(op: str, x: Tri, y: Tri) -> Tri:
    """`x op y` for op in and/or/xor."""
    if op == "and":
        if Tri.FALSE in (x, y):
            return Tri.FALSE
        return Tri.TRUE if x is Tri.TRUE and y is Tri.TRUE else Tri.MAYBE
    if op == "or":
        if Tri.TRUE in (x, y):
            return Tri.TRUE
        return Tri.FALSE if x is Tri.FALSE and y is Tri.FALSE else Tri.MAYBE
    if Tri.MAYBE in (x, y):
        return Tri.MAYBE
    return Tri.of((x is Tri.TRUE) != (y is Tri.TRUE))


# ---- floating-point constants -------------------------------------------------------------------
def decode_float(bits: int, t: DataType) -> float | None:
    """The number a constant bit pattern of a scalar float type stands for."""
    if t.name == "f32":
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if t.name == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits & (1 << 64) - 1))[0]
    if t.name == "f16":
        return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]
    if t.name == "bf16":
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    return None


def float_compare(op: str, x: float, y: float) -> bool:
    """Ordered comparisons are false on NaN, the unordered ones (`...u`) true."""
    nan = math.isnan(x) or math.isnan(y)
    if op in ("num", "nan"):
        return nan == (op == "nan")
    if op.endswith("u"):
        return nan or float_compare(op[:-1], x, y)
    if nan:
        return False
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
            "ge": x >= y}.get(op, False)


def _float_const(v: Value, t: DataType) -> float | None:
    x = v.singleton() if v.region is None else None
    return None if x is None else decode_float(x, t)


# ---- comparisons -------------------------------------------------------------------------------
def compare_values(op: str, a: Value, b: Value, t: DataType, ctx: Ctx) -> Tri:
    """Does `a op b` hold at type t, for every lane and execution?"""
    if t.is_float:
        x, y = _float_const(a, t), _float_const(b, t)
        return Tri.MAYBE if x is None or y is None else Tri.of(float_compare(op, x, y))
    if op not in INT_COMPARISONS:
        return Tri.MAYBE
    w, signed = view(t)
    if a.region is not None and a.region == b.region and a.region.obj is not None:
        if op in ("eq", "ne"):
            return a.si.cmp(op, b.si, w, True)  # same bits iff same offset modulo 2^w
        if a.si.within(0, 1 << (w - 8)) and b.si.within(0, 1 << (w - 8)):
            # addresses inside (or just past) one object: ordered like the offsets
            return a.si.cmp(_SIGNED_FORM.get(op, op), b.si, w, True)
    return plain(a, ctx).si.cmp(op, plain(b, ctx).si, w, signed)


def _term(op: Operand | None, w: int, signed: bool) -> str | int | None:
    if isinstance(op, Register):
        return op.key
    if isinstance(op, Immediate) and isinstance(op.value, int):
        return wrap_int(op.value, w, signed)
    return None


def condition_of(insn, t: DataType, op: str, bool_op: str | None) -> Condition | None:
    """The Condition `a op b [bool_op c]` when every operand is a register or immediate."""
    w, signed = view(t)
    a, b = _term(insn.a, w, signed), _term(insn.b, w, signed)
    if a is None or b is None:
        return None
    if bool_op is None:
        return Condition(op, a, b, w, signed, is_float=t.is_float)
    c = insn.combine
    inner = c.operand if isinstance(c, Negated) else c
    if not isinstance(inner, Register):
        return None
    return Condition(op, a, b, w, signed, False, bool_op, inner.key, isinstance(c, Negated),
                     t.is_float)


def _compare(insn, t: DataType, s, ctx: Ctx) -> tuple[Tri, Tri, bool]:
    """(p, q, uniform) of `a cmp b [bool c]`: q is the complemented comparison."""
    w, signed = view(t)
    a, b = read(insn.a, s, ctx, w, signed), read(insn.b, s, ctx, w, signed)
    op = insn.compare
    if op is None or t.name in _PACKED_HALVES:
        tp = tq = Tri.MAYBE  # the halves of a packed pair are compared independently
    else:
        tp = compare_values(op, a, b, t, ctx)
        tq = tp.negate()
    uniform = a.is_uniform and b.is_uniform
    if insn.bool_op is not None and insn.combine is not None:
        c = read(insn.combine, s, ctx, 1)
        tc = tri_of(c)
        tp, tq = combine_tri(insn.bool_op, tp, tc), combine_tri(insn.bool_op, tq, tc)
        uniform = uniform and c.is_uniform
    return tp, tq, uniform


@transfers(Setp)
def setp(insn, s, ctx: Ctx) -> None:
    """setp.cmp{.bool}.type p[|q], a, b{, {!}c}."""
    t = insn.type
    p, q = insn.pred, insn.pred_complement
    if t is None:
        for r in (p, q):
            if r is not None:
                s.assign(r.key, pred_value(Tri.MAYBE, False))
        return
    tp, tq, uniform = _compare(insn, t, s, ctx)
    dests = [(r, v) for r, v in ((p, tp), (q, tq)) if r is not None]
    for r, v in dests:
        s.assign(r.key, pred_value(v, uniform))
    cond = None if insn.compare is None or t.name in _PACKED_HALVES else \
        condition_of(insn, t, insn.compare, insn.bool_op)
    if cond is None or any(cond.mentions(r.key) for r, _ in dests):
        return
    if p is not None:
        s.conds[p.key] = cond
    if q is not None and cond.combine is None and q != p:
        s.conds[q.key] = cond.inverted()


def _true_pattern(t: DataType) -> int | None:
    """What `set` writes for true: all ones for integers, 1.0 for floats."""
    if t.is_integer:
        return wrap_int(-1, t.bits, t.is_signed)
    return {"f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}.get(t.name)


@transfers(Set)
def set_(insn, s, ctx: Ctx) -> None:
    """set.cmp{.bool}.dtype.stype d, a, b{, {!}c}: d = true pattern or 0."""
    types = insn.types
    if not types:
        assign(insn.dests[0], pred_value(Tri.MAYBE, False), s)
        return
    dt, st = types[0], types[1] if len(types) > 1 else types[0]
    tp, _, uniform = _compare(insn, st, s, ctx)
    pattern = _true_pattern(dt)
    if pattern is None:
        v = Value.of_set(SI.full(dt.bits), uniform)
    elif tp is Tri.MAYBE:
        v = Value.of_set(SI.const(0).join(SI.const(pattern)), uniform)
    else:
        v = Value.const(pattern if tp is Tri.TRUE else 0)
    assign(insn.dests[0], v, s)


# ---- selection ---------------------------------------------------------------------------------
def select(t: Tri, uniform_choice: bool, a: Value, b: Value, same: bool) -> Value:
    """a where the condition holds, b where not. A varying condition mixes them across
    lanes: the join, but with no lane form (unless both sides are the same value)."""
    if t is Tri.TRUE or same:
        return a
    if t is Tri.FALSE:
        return b
    joined = a.join(b)
    if uniform_choice:
        return joined
    if a.region == b.region and a.singleton() is not None and a.singleton() == b.singleton():
        return a
    return joined.varying()


def _same_operand(x: Operand | None, y: Operand | None) -> bool:
    return x is not None and x == y and isinstance(x, (Register, Immediate))


def _may_refine(insn, ctx: Ctx) -> bool:
    return ctx.relations is not None and ctx.relations.selp_may_refine(insn)


@reads_state(_may_refine)
@transfers(Selp)
def selp(insn, s, ctx: Ctx) -> None:
    """selp.type d, a, b, c: d = c ? a : b, each read where c has its truth (a where c's
    comparison holds: `i + 1 < 624 ? &s[i + 1] : &s[0]` selects an address in bounds)."""
    w, signed = view(insn.type)
    a, b = read(insn.a, s, ctx, w, signed), read(insn.b, s, ctx, w, signed)
    c = read(insn.predicate, s, ctx, 1)
    truth, same = tri_of(c), _same_operand(insn.a, insn.b)
    if truth is Tri.MAYBE and not same:
        a = _under(insn, insn.a, True, s, ctx, a, w, signed)
        b = _under(insn, insn.b, False, s, ctx, b, w, signed)
    assign(insn.dests[0], select(truth, c.is_uniform, a, b, same), s)


def _compared(s, key: str, depth: int = 0) -> set[str]:
    """The registers the comparison recorded for predicate `key` reads (through
    `and`/`or` of predicates)."""
    c = s.conds.get(key)
    if c.__class__ is not Condition or depth > 4:
        return set()
    out = {x for x in (c.a, c.b) if isinstance(x, str)}
    if c.op in ("and", "or") or c.other is not None:
        for x in (*out, c.other):
            if isinstance(x, str):
                out |= _compared(s, x, depth + 1)
    return out


def _under(insn, op: Operand | None, truth: bool, s, ctx: Ctx, v: Value, w: int,
           signed: bool) -> Value:
    """Operand `op` of `insn` where its predicate is `truth` (bottom: never)."""
    p = insn.predicate
    if isinstance(p, Negated):
        p, truth = p.operand, not truth
    if not isinstance(op, Register) or not isinstance(p, Register) or \
            s.conds.get(p.key).__class__ is not Condition or not _may_refine(insn, ctx) or \
            ctx.relations.near_local(insn, op.key).isdisjoint(_compared(s, p.key)):
        return v  # nothing the comparison narrows reaches the operand
    st = s.derived(dict(s.regs))  # refinement writes registers only
    if not assume_cached(ctx.refinements, (id(insn), truth), st, p.key, truth, ctx.linked):
        return BOTTOM
    # the operand may be computed from what the comparison read: `&s[i + 1]`, `i + 1 < n`
    if ctx.relations is not None and \
            ctx.relations.narrow_local(st, (op.key,), insn, ctx) is None:
        return BOTTOM
    return read(op, st, ctx, w, signed)


def _f32_nonnegative(bits: int, ftz: bool) -> bool:
    x = decode_float(bits, _F32)
    if ftz and 0 < (bits & 0x7FFFFFFF) < 0x00800000:
        return True  # a subnormal flushes to a signed zero, and -0.0 >= 0
    return x is not None and not math.isnan(x) and x >= 0


@transfers(Slct)
def slct(insn, s, ctx: Ctx) -> None:
    """slct{.ftz}.dtype.{s32,f32} d, a, b, c: d = c >= 0 ? a : b."""
    types = insn.types
    w, signed = view(types[0] if types else None)
    a, b = read(insn.a, s, ctx, w, signed), read(insn.b, s, ctx, w, signed)
    ct = types[-1] if types else None
    c = read(insn.c, s, ctx, 32, True)
    if ct is not None and ct.is_float:
        x = c.singleton() if c.region is None else None
        t = Tri.MAYBE if x is None else Tri.of(_f32_nonnegative(x, insn.ftz))
    else:
        t = plain(c, ctx).si.cmp("ge", SI.const(0), 32, True)
    assign(insn.dests[0], select(t, c.is_uniform, a, b, _same_operand(insn.a, insn.b)), s)


# ---- predicate logic ---------------------------------------------------------------------------
def pred_logic(insn, s, ctx: Ctx) -> None:
    """and/or/xor/not.pred; `not` also inverts the source's recorded comparison."""
    a = read(insn.a, s, ctx, 1)
    d = insn.dests[0]
    if insn.opcode == "not":
        cond = s.conds.get(insn.a.key) if isinstance(insn.a, Register) else None
        assign(d, pred_not(a), s)
        if isinstance(d, Register) and cond is not None and not cond.mentions(d.key):
            s.conds[d.key] = cond.inverted()
        return
    b = read(insn.b, s, ctx, 1)
    t = combine_tri(insn.opcode, tri_of(a), tri_of(b))
    assign(d, pred_value(t, a.is_uniform and b.is_uniform), s)
    # `if (x < w && y < h)` compiles to setp; setp; or.pred (of the negations): record
    # the connective so a branch on the result refines both comparisons
    if (insn.opcode in ("and", "or") and isinstance(d, Register)
            and isinstance(insn.a, Register) and isinstance(insn.b, Register)
            and d.key not in (insn.a.key, insn.b.key)):
        s.conds[d.key] = Condition(insn.opcode, insn.a.key, insn.b.key, 1, False)


_TESTS = {
    "finite": math.isfinite, "infinite": math.isinf, "number": lambda x: not math.isnan(x),
    "notanumber": math.isnan,
}


def _classify(test: str, x: float, t: DataType) -> bool | None:
    if test in _TESTS:
        return _TESTS[test](x)
    smallest_normal = 2.0 ** -126 if t.name == "f32" else 2.0 ** -1022
    if not math.isfinite(x) or x == 0:
        return False
    return (abs(x) >= smallest_normal) == (test == "normal")


@transfers(Testp)
def testp(insn, s, ctx: Ctx) -> None:
    """testp.op.type p, a: a property of a float; MAYBE unless a is a constant."""
    t = insn.type
    w = t.bits if t is not None else 32
    a = read(insn.a, s, ctx, w)
    x = _float_const(a, t) if t is not None else None
    answer = None if x is None or insn.test is None else _classify(insn.test, x, t)
    tri = Tri.MAYBE if answer is None else Tri.of(answer)
    assign(insn.dests[0], pred_value(tri, a.is_uniform), s)


__all__ = ["combine_tri", "compare_values", "condition_of", "decode_float", "float_compare",
           "select", "pred_logic"]
