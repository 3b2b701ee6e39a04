"""The affine relation an instruction establishes (`domains.relation.Link`), and its uses.

`add`, `sub`, `mul`/`shl` by a constant, `mad`, `mul.wide`, `cvt`, `not` and `mov` relate
their destination to their operands (``d = k*x + kb*y + off``: an index and the
addresses made from it); `min`/`max`/`and` bound it by one (``min(a, c) <= a``).
`link_of` builds that `Link` from the registers' values where it is used (`relations.py`
says where it still holds); `narrow_by` narrows the registers by it; `record_bound`
keeps a `min`/`max` bound in the state for `sub`: ``a - b`` with ``b <= a`` cannot go
below zero (`difference`).

A link is only made when its values are in matching forms: plain numbers on both
sides, or a pointer into a named object whose offset is the linked quantity (``p + 4*i``
links p's offset to i).
"""
from __future__ import annotations

from ..domains.relation import Link
from ..domains.state import State
from ..domains.strided import StridedInterval as SI
from ..domains.value import TOP, Value
from ..ir.instructions.convert import Cvt
from ..ir.instructions.integer import Add, Mad, Madc, Max, Min, Mul, Sub
from ..ir.instructions.logic import And, Not, Shl
from ..ir.instructions.move import Mov
from ..ir.operands import Immediate, Operand, Register, is_special_register
from .transfer.arith_values import read, special_value, view

_ZERO = Value.const(0)


def _key(op: Operand | None) -> str | None:
    return op.key if op is not None and op.__class__ is Register else None


def _object(v: Value) -> bool:
    """A pointer into a named object (its si is an offset)."""
    return v.region is not None and v.region.obj is not None


def readings(v: Value, w: int, signed: bool) -> tuple[SI, bool]:
    """v's set and the view it is read in: its own when it is one of the two w-bit
    views (the instruction's first), else re-read in the instruction's."""
    for view in (signed, not signed):
        if v.si.fits(w, view):
            return v.si, view
    return v.si.wrap(w, signed), signed


def _term_ok(v: Value, k: int, result: Value) -> bool:
    """v may be a term with coefficient k of a sum whose value is `result`."""
    if v.region is None:
        return True
    return k == 1 and _object(v) and v.region == result.region


def affine(dest: Operand, result: Value, x_op: Operand | None, x: Value, k: int,
           u: Value, w: int, signed: bool, ext: tuple[int, bool] | None = None,
           u_op: Operand | None = None, ku: int = 1) -> Link | None:
    """The link of ``dest = k * x + ku * u`` computed at w bits (``result``: the value
    the transfer wrote), or None. u is a second register term when ``u_op`` is a
    register, else a constant part (its values become the offset). ``ext = (xw,
    xsigned)`` when x is extended to w bits (`mul.wide`, `cvt`): x is then read as the
    extension reads it."""
    xk, dk, uk = _key(x_op), _key(dest), _key(u_op)
    if xk is None or dk is None or k == 0 or result.is_bottom or dk in (xk, uk):
        return None
    # plain numbers, or a pointer (one term, coefficient 1) plus numbers
    pointers = (x.region is not None) + (u.region is not None)
    if not (_term_ok(x, k, result) and _term_ok(u, ku, result)) or \
            pointers != (result.region is not None):
        return None
    if ext is None:
        xs, xsigned = readings(x, w, signed)
        xw = w
    else:
        xw, xsigned = ext
        xs = x.si.wrap(xw, xsigned)
    if uk is not None and uk != xk:
        us, usigned = readings(u, w, signed)
        return Link.make(xk, k, xs, SI.const(0), w, signed, xw, xsigned, uk, ku, us, usigned)
    off = u.si.wrap(w, True if _object(u) else signed).scale(ku)
    return Link.make(xk, k, xs, off, w, signed, xw, xsigned)


def sum_link(dest: Operand, result: Value, a_op: Operand | None, b_op: Operand | None,
             a: Value, b: Value, w: int, signed: bool, subtract: bool) -> Link | None:
    """``d = a + b`` or ``d = a - b``."""
    sign = -1 if subtract else 1
    if a_op.__class__ is Register:
        return affine(dest, result, a_op, a, 1, b, w, signed, u_op=b_op, ku=sign)
    return affine(dest, result, b_op, b, sign, a, w, signed)


def scaled(dest: Operand, result: Value, x_op: Operand | None, x: Value, factor: Value,
           u: Value, w: int, signed: bool, ext: tuple[int, bool] | None = None,
           u_op: Operand | None = None) -> Link | None:
    """``d = factor * x + u`` for a constant factor (read as the instruction reads it)."""
    if factor.region is not None:
        return None
    k = factor.si.wrap(*(ext or (w, signed))).singleton()
    return None if k is None else affine(dest, result, x_op, x, k, u, w, signed, ext, u_op)


def product_link(dest: Operand, result: Value, a_op: Operand | None, b_op: Operand | None,
                 a: Value, b: Value, u: Value, w: int, signed: bool,
                 ext: tuple[int, bool] | None = None, u_op: Operand | None = None
                 ) -> Link | None:
    """``d = a * b + u`` (`mul`, `mad`): linked to the factor that is not constant (and
    to u when it is a register)."""
    if b.singleton() is not None:
        return scaled(dest, result, a_op, a, b, u, w, signed, ext, u_op)
    if a.singleton() is not None:
        return scaled(dest, result, b_op, b, a, u, w, signed, ext, u_op)
    return None


def bound(dest: Operand, result: Value, x_op: Operand | None, x: Value, other: Value,
          w: int, signed: bool, below: bool) -> Link | None:
    """``dest <= x`` (below) or ``dest >= x`` in the (w, signed) view, for d = min/max
    of x and other (or x & mask, unsigned): ``d - x`` lies between 0 and ``other - x``."""
    xk, dk = _key(x_op), _key(dest)
    if xk is None or dk is None or xk == dk or result.region is not None \
            or x.region is not None or other.region is not None:
        return None
    xs = x.si.wrap(w, signed)
    gap = other.si.wrap(w, signed).math_add(xs.math_neg())
    if xs.is_bottom or gap.is_bottom:
        return None
    if below:  # d - x = min(0, other - x)
        off = SI.range(None if gap.lo is None else min(gap.lo, 0), 0)
    else:
        off = SI.range(0, None if gap.hi is None else max(gap.hi, 0))
    return Link(xk, 1, off, w, signed, w, signed)


# ---- the relation an instruction establishes ----------------------------------------------------
_RELATING = (Add, Sub, Mul, Mad, Shl, Cvt, Mov, Not, Min, Max, And)


_SHAPES: dict[int, tuple] = {}  # id(insn) -> (insn, `relation_shape`): the entry keeps it


def relation_shape(insn) -> tuple[str, ...] | None:
    """(destination, registers it is related to) when `insn` may establish a relation
    (`link_of` decides with values), else None. Static: what `Relations` tracks."""
    if not isinstance(insn, _RELATING):
        return None
    hit = _SHAPES.get(id(insn))
    if hit is None:
        if len(_SHAPES) > 1 << 16:
            _SHAPES.clear()
        hit = _SHAPES[id(insn)] = (insn, _relation_shape(insn))
    return hit[1]


def _relation_shape(insn) -> tuple[str, ...] | None:
    if isinstance(insn, Madc) or \
            insn.guard is not None or len(insn.dests) != 1:
        return None
    d = _key(insn.dests[0])
    t = insn.type
    if d is None or t is None or not t.is_integer:
        return None
    regs = tuple(dict.fromkeys(r.key for r in insn.uses if r.__class__ is Register))
    if not regs or d in regs or len(regs) > 3:
        return None
    return (d, *regs)


def value_of_key(s: State, key: str, ctx) -> Value:
    """A register's value in `s` (a special register the state does not hold: its
    launch-independent value)."""
    v = s.regs.get(key)
    if v is None and is_special_register(key):
        return special_value(key, ctx)
    return TOP if v is None else v


def link_of(insn, s: State, ctx) -> Link | None:
    """The relation `insn` established between its destination and its operands, judged
    with the registers' values in `s`: their values when it ran, or narrower (no write
    in between, which `Relations` checks), so the no-wrap condition still holds."""
    if relation_shape(insn) is None:
        return None
    d = insn.dests[0]
    result = value_of_key(s, d.key, ctx)
    if isinstance(insn, Cvt):
        st, dt = insn.source_type, insn.type
        if st is None or not st.is_integer or insn.saturate or len(insn.sources) != 1:
            return None
        a = read(insn.a, s, ctx, st.bits, st.is_signed)
        return affine(d, result, insn.a, a, 1, _ZERO, dt.bits, dt.is_signed,
                      (st.bits, st.is_signed))
    w, signed = view(insn.type)
    a = read(insn.a, s, ctx, w, signed)
    if isinstance(insn, Mov):
        return affine(d, result, insn.a, a, 1, _ZERO, w, signed)
    if isinstance(insn, Not):
        return affine(d, result, insn.a, a, -1, Value.const(-1), w, False)
    b = read(insn.b, s, ctx, w, signed)
    if isinstance(insn, (Add, Sub)):
        if insn.saturate:
            return None
        return sum_link(d, result, insn.a, insn.b, a, b, w, signed, isinstance(insn, Sub))
    if isinstance(insn, Shl):
        k = b.numeric().si.as_unsigned(32).singleton() if b.region is None else None
        return None if k is None or k >= w else \
            affine(d, result, insn.a, a, 1 << k, _ZERO, w, False)
    if isinstance(insn, (Min, Max)):
        if "relu" in insn.mods:
            return None
        x_op, x, other = pick(insn.a, insn.b, a, b)
        return bound(d, result, x_op, x, other, w, signed, below=isinstance(insn, Min))
    if isinstance(insn, And):  # unsigned: 0 <= a & b <= a
        x_op, x, _ = pick(insn.a, insn.b, a, b)
        return bound(d, result, x_op, x, _ZERO, w, False, below=True)
    return _product(insn, d, result, a, b, s, ctx, w, signed)


def _product(insn, d, result: Value, a: Value, b: Value, s: State, ctx, w: int,
             signed: bool) -> Link | None:
    """`mul.lo/.wide` and `mad.lo/.wide`: ``d = k*x (+ c)`` for a constant factor k, or
    ``d = c + a*b`` for a non-constant product."""
    mode = insn.mode or "lo"
    if mode == "hi" or getattr(insn, "saturate", False):
        return None
    wide = mode == "wide"
    ww, ext = (2 * w, (w, signed)) if wide else (w, None)
    if isinstance(insn, Mul):
        return product_link(d, result, insn.a, insn.b, a, b, _ZERO, ww, signed, ext)
    c = read(insn.c, s, ctx, ww, signed)
    link = product_link(d, result, insn.a, insn.b, a, b, c, ww, signed, ext, insn.c)
    if link is None and a.region is None and b.region is None:
        from .transfer.arith import product  # noqa: PLC0415 - arith imports this module
        link = affine(d, result, insn.c, c, 1, product(mode, a, b, w, signed, ctx), ww, signed)
    return link


def narrow_by(insn, s: State, ctx) -> bool | None:
    """Narrow the registers `insn` relates (in `s`, in place) to what its relation
    allows: True if one changed, False if none did, None if one has no value left."""
    link = link_of(insn, s, ctx)
    if link is None:
        return False
    d = insn.dests[0].key
    dv, av = value_of_key(s, d, ctx), value_of_key(s, link.a, ctx)
    bv = None if link.b is None else value_of_key(s, link.b, ctx)
    bs = None if bv is None else bv.si
    new_d = dv.restrict(link.forward(av.si, bs), link.w, link.signed)
    if isinstance(insn, (Min, Max, And)):  # d = op(a, b) exactly: recomputed, it narrows
        new_d = new_d.restrict(*_recomputed(insn, s, ctx))
    new_a = av.restrict(link.backward(new_d.si, bs), link.xw, link.xsigned)
    new_b = None if bv is None else \
        bv.restrict(link.backward_b(new_d.si, new_a.si), link.w, link.bsigned)
    changed = False
    for key, old, new in ((d, dv, new_d), (link.a, av, new_a), (link.b, bv, new_b)):
        if new is None or new is old:
            continue
        if new.is_bottom:
            return None
        if new != old:
            s.regs[key] = new
            changed = True
    return changed


def record_bound(insn, s: State, ctx) -> None:
    """After `min`/`max` wrote d: record ``d <= a`` (``>=`` for max) as a fact of the
    state, dropped when d or a is written, like a predicate's comparison; only where some
    `sub` computes ``a - d`` or ``d - a``, which is what uses it (`difference`)."""
    d, relations = _key(insn.dests[0]), ctx.relations
    if d is None or relations is None or not any(
            relations.subtracted(x, d) or relations.subtracted(d, x)
            for x in (_key(insn.a), _key(insn.b)) if x is not None):
        return
    link = link_of(insn, s, ctx)
    if link is not None:
        s.conds[d] = link.kept()
        ctx.linked.add(link.a)


def difference(s: State, a_op: Operand | None, b_op: Operand | None, a: Value, b: Value,
               w: int) -> tuple[SI, int, bool] | None:
    """What a recorded bound says of ``a - b``: (readings, w, signed), or None. With
    ``b = a + off`` (``b = min(a, c)``: off <= 0), ``a - b`` is ``-off`` exactly when that
    cannot wrap."""
    ak, bk = _key(a_op), _key(b_op)
    if ak is None or bk is None or a.region is not None or b.region is not None:
        return None
    conds = s.conds
    for d, x, sign in ((bk, ak, -1), (ak, bk, 1)):  # b bounded by a, or a by b
        link = conds.get(d)
        if link.__class__ is not Link or link.a != x or link.k != 1 or link.b is not None \
                or link.w != w or link.xw != w or link.signed != link.xsigned:
            continue
        view = link.signed
        # a - b = sign * (d - x), d - x in off, and within the hull of the operands
        span = a.si.wrap(w, view).math_add(b.si.wrap(w, view).math_neg())
        diff = link.off.scale(sign).meet(span)
        if diff.fits(w, view) and not diff.is_bottom:
            return diff, w, view
    return None


def _recomputed(insn, s: State, ctx) -> tuple[SI, int, bool]:
    """`min`/`max`/`and` evaluated again on its operands' values in `s` (the relation
    holds: neither was written since), as (readings, w, signed). A bound link says only
    ``min(a, c) <= a``; once a guard narrows a, the operation itself says more
    (``min(level, 32)`` with level >= 4 is at least 4)."""
    w, signed = view(insn.type)
    x = read(insn.a, s, ctx, w, signed).numeric()
    y = read(insn.b, s, ctx, w, signed).numeric()
    if isinstance(insn, And):
        return x.si.and_(y.si, w), w, False
    if "relu" in insn.mods:
        return SI.full(w, signed), w, signed
    op = x.si.min if isinstance(insn, Min) else x.si.max
    return op(y.si, w, signed), w, signed


def cleared_low_bits(insn, ctx) -> int | None:
    """m when `sub d, a, b` subtracts ``b = a & m`` (m = 2^j - 1, computed earlier in the
    block and still holding): then ``d = a & ~m``, a multiple of 2^j that cannot wrap
    (nvcc's unrolled loops count `n - n % 4` iterations: ``and r4, n, 3; sub r5, n,
    r4``)."""
    a, b, relations = _key(insn.a), _key(insn.b), ctx.relations
    if a is None or b is None or relations is None:
        return None
    for earlier in relations._local_at(insn)(b):
        if isinstance(earlier, And) and _key(earlier.dests[0]) == b:
            ops = (earlier.a, earlier.b)
            for x, m in (ops, ops[::-1]):
                if _key(x) == a and m.__class__ is Immediate and isinstance(m.value, int) \
                        and m.value > 0 and not (m.value + 1) & m.value:
                    return m.value
    return None


def pick(a_op: Operand | None, b_op: Operand | None, a: Value, b: Value
         ) -> tuple[Operand | None, Value, Value]:
    """(operand, its value, the other value) for a link of a symmetric operation: the
    register that varies, else the first register."""
    if a_op.__class__ is Register and (not a.is_uniform or b_op.__class__ is not Register
                                       or b.is_uniform):
        return a_op, a, b
    return b_op, b, a


__all__ = ["affine", "sum_link", "scaled", "product_link", "bound", "pick", "relation_shape",
           "link_of", "narrow_by", "value_of_key", "record_bound", "difference", "readings",
           "cleared_low_bits"]
