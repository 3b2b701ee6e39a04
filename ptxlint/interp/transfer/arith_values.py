"""Value algebra shared by the arithmetic transfer functions (`arith*.py`).

- operands: `read` (immediates re-read in the instruction's view, `!%p`, special
  registers the state does not hold yet), `view` of a type modifier;
- provenance: a pointer plus or minus a number stays a pointer into the same object
  (the offset is computed in the signed view, so `-4` stays `-4` under `.u64`);
  pointer minus pointer into the same object is the difference of the offsets;
  anything else reads a pointer as a plain number (`plain`: its absolute address,
  base unknown, lane coefficients and the object's alignment kept);
- the affine-preserving operations (`add_values`, `sub_values`, `neg_value`,
  `mul_values`, `mul_wide_values`, `shl_value`) and width changes (`extend`,
  `truncate`);
- result constructors: `finish` (keeps the value set and the affine form in the same
  integer view, which `Value.reduce` relies on when it meets them), `numeric_result`
  (uniform iff every input is), `pred_value`, `float_result`.
"""
from __future__ import annotations

from ...domains.affine import Affine, ThreadBounds
from ...domains.align import Congruence
from ...domains.lattice import Tri
from ...domains.space import Region
from ...domains.strided import StridedInterval as SI
from ...domains.strided import wrap_int
from ...domains.value import TOP, UNIFORM_TOP, Value, tri_of
from ...ir.operands import Immediate, Negated, Operand, Register
from ...ir.types import DataType
from ..context import Ctx
from .table import assign, value_of

# Special registers that are thread indices: their value is the index itself.
_INDEX_REGISTERS = {"%tid.x": "tid.x", "%tid.y": "tid.y", "%tid.z": "tid.z",
                    "%laneid": "laneid"}
# Special registers that differ between the lanes of a warp (or between two reads).
_VARYING_PREFIXES = ("%tid", "%laneid", "%lanemask", "%clock", "%globaltimer", "%pm")


PACKED_INT = frozenset({"u16x2", "s16x2", "u8x4", "s8x4"})


# ---- operands ------------------------------------------------------------------------------
def view(t: DataType | None, default: int = 32) -> tuple[int, bool]:
    """(width, signed) of a type modifier: `.s` types read signed, `.u`/`.b` unsigned."""
    if t is None:
        return default, False
    return t.bits, t.is_signed


def special_value(name: str, ctx: Ctx) -> Value:
    """A special register the state does not hold (the launch set none): thread
    indices are their own affine form, warp-level ids are uniform, the rest vary."""
    index = _INDEX_REGISTERS.get(name)
    if index is not None:
        return Value.of_affine(Affine.var(index), ctx.bounds)
    if name.startswith(_VARYING_PREFIXES):
        return TOP
    return UNIFORM_TOP  # %ntid, %ctaid, %nctaid, %warpid, %smid, %envregN, ...


def read(op: Operand | None, s, ctx: Ctx, w: int = 64, signed: bool = False) -> Value:
    """The value of a source operand; integer immediates are re-read in the (w, signed)
    view, float immediates become their w-bit pattern."""
    if op.__class__ is Register:  # most operands: the state's value
        v = s.regs.get(op.key)
        if v is not None:
            return v
        return special_value(op.name, ctx) if op.is_special else TOP
    if op is None:
        return TOP
    if isinstance(op, Negated):
        return pred_not(read(op.operand, s, ctx, 1))
    if isinstance(op, Immediate) and isinstance(op.value, int):
        return Value.const(wrap_int(op.value, w, signed))
    return value_of(op, s, ctx, w)


def is_float(insn) -> bool:
    return any(t.is_float for t in insn.types)


_OPAQUE: dict[tuple[str, ...], bool] = {}  # modifiers -> a float or packed-integer form?


def opaque_form(insn, s, ctx: Ctx) -> bool:
    """Float and packed-integer forms of the shared opcodes: modelled only as far as
    uniformity. True when `insn` was such a form (and its destination written)."""
    opaque = _OPAQUE.get(insn.mods)
    if opaque is None:
        t = insn.type
        opaque = _OPAQUE[insn.mods] = t is None or is_float(insn) or t.name in PACKED_INT
    if not opaque:
        return False
    t = insn.type
    w = t.bits if t is not None else 32
    inputs = [read(op, s, ctx, w) for op in insn.sources]
    if t is None or is_float(insn):
        v = float_result(inputs)
    else:
        v = full_result(inputs, ctx, w, t.is_signed)
    for d in insn.dests:
        assign(d, v, s)
    return True


def plain(v: Value, ctx: Ctx) -> Value:
    """A value as a number: a pointer becomes its absolute address (base unknown, lane
    coefficients and the object's alignment kept)."""
    if v.region is None:
        return v
    obj = v.region.obj
    return v.absolute(None, ctx.object_align(obj) if obj else 1)


# ---- result constructors -------------------------------------------------------------------
def finish(si: SI, aff: Affine, cong: Congruence, w: int, signed: bool, ctx: Ctx,
           region: Region | None = None) -> Value:
    """Assemble a result. A non-uniform form fits one w-bit view; the value set is
    re-read in that same view so that `reduce` meets like with like (a uniform form's
    base is re-read in the value set's view, (w, signed)); a form that fits none is
    kept modulo 2^w (`Affine.wrapped`), where `reduce` meets nothing."""
    if aff.is_uniform and not aff.is_bottom:
        aff = Affine.uniform(aff.base.wrap(w, signed))
    elif not (aff.is_top or aff.is_bottom or aff.is_modular):
        span = aff.range(ctx.bounds)
        if not span.fits(w, signed):
            if span.fits(w, not signed):
                si = si.wrap(w, not signed)
            else:
                aff = aff.wrapped(w, ctx.bounds)
    return Value(si, aff, cong.cap(w), region).reduce(ctx.bounds)


def numeric_result(si: SI, inputs: tuple[Value, ...] | list[Value], ctx: Ctx, w: int = 64,
                   cong: Congruence | None = None) -> Value:
    """A result with no lane form: uniform iff every input is."""
    uniform = all(v.is_uniform for v in inputs)
    aff = Affine.uniform(si) if uniform else Affine.top()
    c = Congruence.of_interval(si, w)
    if cong is not None:
        c = c.meet(cong.cap(w))
    return Value(si, aff, c).reduce(ctx.bounds)


def full_result(inputs, ctx: Ctx, w: int, signed: bool = False) -> Value:
    """Any w-bit value; uniform iff every input is."""
    return numeric_result(SI.full(w, signed), inputs, ctx, w)


def float_result(inputs) -> Value:
    """Floating-point arithmetic is not modelled: unknown, uniform iff the inputs are."""
    return UNIFORM_TOP if all(v.is_uniform for v in inputs) else TOP


def pred_value(t: Tri, uniform: bool) -> Value:
    """A predicate: {1}, {0}, or {0, 1} (uniform only when said so)."""
    if t is Tri.TRUE:
        return Value.const(1)
    if t is Tri.FALSE:
        return Value.const(0)
    return _EITHER_UNIFORM if uniform else _EITHER


_EITHER, _EITHER_UNIFORM = Value.of_set(SI.range(0, 1)), Value.of_set(SI.range(0, 1), True)


def pred_not(v: Value) -> Value:
    return pred_value(tri_of(v).negate(), v.is_uniform)


# ---- width changes ---------------------------------------------------------------------------
def extend(aff: Affine, w: int, signed: bool, bounds: ThreadBounds) -> Affine:
    """The form whose integer value is the (w, signed) reading of the register: what a
    sign- or zero-extension to a wider register holds. Base and coefficients may be
    re-read modulo 2^w (same bits); top when no reading fits the view, and for a form
    known modulo 2^w only (lanes on both sides of a wrap extend to values 2^w apart)."""
    if aff.is_top or aff.is_bottom:
        return aff
    if aff.is_uniform:
        return Affine.uniform(aff.base.wrap(w, signed))
    if aff.is_modular:
        return Affine.top()
    for cand in _rereadings(aff, w):
        if cand.range(bounds).fits(w, signed):
            return cand
    return Affine.top()


def truncate(aff: Affine, w: int, bounds: ThreadBounds) -> Affine:
    """The form of the low w bits: an integer claim when it fits a w-bit view, else
    modulo 2^w (the low bits of ``b + c*tid`` are ``b + c*tid`` modulo 2^w)."""
    if aff.is_top or aff.is_bottom:
        return aff
    if aff.is_uniform:
        return Affine.uniform(aff.base.wrap(w, False))
    if not aff.is_modular:
        for cand in _rereadings(aff, w):
            span = cand.range(bounds)
            if span.fits(w, False) or span.fits(w, True):
                return cand
    return aff.wrapped(w, bounds)


def _rereadings(aff: Affine, w: int) -> tuple[Affine, ...]:
    coeffs = tuple((n, c.as_signed(w)) for n, c in aff.coeffs)
    return (aff, Affine(aff.base.as_signed(w), coeffs), Affine(aff.base.as_unsigned(w), coeffs))


def extend_value(v: Value, w: int, signed: bool, ctx: Ctx) -> Value:
    """A plain w-bit value read in the (w, signed) view, ready to be used wider."""
    v = plain(v, ctx)
    return Value(v.si.wrap(w, signed), extend(v.aff, w, signed, ctx.bounds), v.cong.cap(w))


# ---- affine-preserving arithmetic ------------------------------------------------------------
def remembered(fn):
    """`fn(a, b, w, signed, ctx)` remembered per analysis, keyed by the identities of the
    values (interned, so a block interpreted again, or the same computation on another
    register, asks the same question): the answer depends on the context only through
    its thread bounds and object alignments, which one analysis does not change. The
    entry keeps a and b alive, so their identities stay unique."""
    def method(a, b, w, signed, ctx):
        key = (fn, id(a), id(b), w, signed)
        memo = ctx.memo
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
        out = fn(a, b, w, signed, ctx)
        memo[key] = (out, a, b)
        return out
    method.__name__, method.__qualname__, method.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    method.__wrapped__ = fn
    return method


def _sum(a: Value, b: Value, sign: int, w: int, signed: bool, ctx: Ctx,
         region: Region | None) -> Value:
    if sign > 0:
        si = a.si.add(b.si, w, signed)
        aff = a.aff.add(b.aff, w, signed, ctx.bounds)
        cong = a.cong.add(b.cong, w)
    else:
        si = a.si.sub(b.si, w, signed)
        aff = a.aff.sub(b.aff, w, signed, ctx.bounds)
        cong = a.cong.sub(b.cong, w)
    return finish(si, aff, cong, w, signed, ctx, region)


@remembered
def add_values(a: Value, b: Value, w: int, signed: bool, ctx: Ctx) -> Value:
    """`a + b` at w bits; a pointer plus a number stays a pointer (offsets add)."""
    if a.region is not None and b.region is None:
        return _sum(a, b, 1, w, True, ctx, a.region)
    if b.region is not None and a.region is None:
        return _sum(b, a, 1, w, True, ctx, b.region)
    return _sum(plain(a, ctx), plain(b, ctx), 1, w, signed, ctx, None)


@remembered
def sub_values(a: Value, b: Value, w: int, signed: bool, ctx: Ctx) -> Value:
    """`a - b` at w bits: pointer - number is a pointer, pointer - pointer into the same
    object is the (plain) difference of the offsets."""
    if a.region is not None and b.region is None:
        return _sum(a, b, -1, w, True, ctx, a.region)
    if a.region is not None and a.region == b.region and a.region.obj is not None:
        return _sum(Value(a.si, a.aff, a.cong), Value(b.si, b.aff, b.cong), -1, w, signed,
                    ctx, None)
    return _sum(plain(a, ctx), plain(b, ctx), -1, w, signed, ctx, None)


def neg_value(a: Value, w: int, signed: bool, ctx: Ctx) -> Value:
    return sub_values(Value.const(0), plain(a, ctx), w, signed, ctx)


@remembered
def mul_values(a: Value, b: Value, w: int, signed: bool, ctx: Ctx) -> Value:
    """`mul.lo`: affine when one side is uniform."""
    a, b = plain(a, ctx), plain(b, ctx)
    return finish(a.si.mul(b.si, w, signed), a.aff.mul(b.aff, w, signed, ctx.bounds),
                  a.cong.mul(b.cong, w), w, signed, ctx)


@remembered
def mul_wide_values(a: Value, b: Value, w: int, signed: bool, ctx: Ctx) -> Value:
    """`mul.wide`: both factors sign- or zero-extended to 2w bits, then multiplied."""
    x, y = extend_value(a, w, signed, ctx), extend_value(b, w, signed, ctx)
    return finish(x.si.mul_wide(y.si, w, signed),
                  x.aff.mul(y.aff, 2 * w, signed, ctx.bounds),
                  x.cong.mul(y.cong, 2 * w), 2 * w, signed, ctx)


def shl_value(a: Value, amount: Value, w: int, ctx: Ctx) -> Value:
    """`shl`: a multiplication by 2^k for a known amount k (PTX clamps k at w)."""
    a, amount = plain(a, ctx), plain(amount, ctx)
    si = a.si.shl(amount.si, w)
    k = amount.si.as_unsigned(32).singleton()
    if k is None:
        return numeric_result(si, (a, amount), ctx, w, a.cong.shl(None, w))
    return finish(si, a.aff.shl_const(k, w, False, ctx.bounds), a.cong.shl(k, w), w, False, ctx)


def exact(fn, args: list[SI], w: int, signed: bool = False) -> SI | None:
    """`fn` over every tuple of elements when the sets are small, re-read at (w, signed)."""
    return args[0].exact_map(fn, *args[1:], w=w, signed=signed)


__all__ = ["PACKED_INT", "is_float", "opaque_form", "view", "read", "plain", "finish",
           "numeric_result", "full_result", "float_result", "pred_value", "pred_not",
           "extend", "truncate", "extend_value",
           "add_values", "sub_values", "neg_value", "mul_values", "mul_wide_values",
           "shl_value", "exact", "special_value"]
