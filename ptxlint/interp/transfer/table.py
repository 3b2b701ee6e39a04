"""Transfer functions: the abstract effect of each instruction on a `State`.

One table maps an instruction class to its transfer function; lookup walks the class's
MRO, so a function registered for a mixin serves every opcode composed from it. An
instruction with no entry is unmodelled: its destinations become unknown and a note
says so (never silently ignored).
"""
from __future__ import annotations

from collections.abc import Callable

from ...domains.affine import Affine
from ...domains.align import Congruence
from ...domains.space import Region
from ...domains.state import State
from ...domains.strided import StridedInterval as SI
from ...domains.value import TOP, UNIFORM_TOP, Value
from ...ir.instruction import Instruction
from ...ir.operands import (Address, Expression, Immediate, Negated, Operand, PredicatePair,
                           Register, Sink, Symbol, Vector)
from ...ir.types import float_bits
from ..context import Ctx

Transfer = Callable[[Instruction, State, Ctx], None]
TRANSFERS: dict[type, Transfer] = {}
_by_class: dict[type, Transfer | None] = {}


def transfers(*classes: type) -> Callable[[Transfer], Transfer]:
    """Register a transfer function for instruction classes (or mixins)."""
    def register(fn: Transfer) -> Transfer:
        for cls in classes:
            TRANSFERS[cls] = fn
        _by_class.clear()
        return fn
    return register


def reads_state(when: Callable[[Instruction, Ctx], bool]) -> Callable[[Transfer], Transfer]:
    """Mark a transfer function that, for the instructions `when(insn, ctx)` accepts,
    reads registers its operands do not name (`selp` refines its operands by the
    predicate's comparison): those are never replayed from a memo."""
    def mark(fn: Transfer) -> Transfer:
        fn.reads_state = when  # type: ignore[attr-defined]
        return fn
    return mark


def transfer_for(cls: type) -> Transfer | None:
    hit = _by_class.get(cls, False)
    if hit is False:
        _load_families()
        hit = next((TRANSFERS[k] for k in cls.__mro__ if k in TRANSFERS), None)
        _by_class[cls] = hit
    return hit


def apply(insn: Instruction, s: State, ctx: Ctx) -> None:
    """Run one instruction's transfer function (guards are handled by the caller)."""
    fn = transfer_for(type(insn))
    if fn is None:
        unmodelled(insn, s, ctx)
    else:
        fn(insn, s, ctx)


def unmodelled(insn: Instruction, s: State, ctx: Ctx) -> None:
    for reg in insn.defs:
        s.assign(reg.key, TOP)
    ctx.note(insn, f"'{insn.opcode}' is not modelled by the analysis: "
                   f"its results are treated as unknown")


# ---- operands -----------------------------------------------------------------------------
def value_of(op: Operand, s: State, ctx: Ctx, bits: int = 64) -> Value:
    """The abstract value of a source operand (`bits`: width used for float immediates)."""
    if isinstance(op, Register):
        return s[op.key]
    if isinstance(op, Negated):  # `!%p`
        p = s[op.operand.key]
        v = p.singleton()
        if v in (0, 1):
            return Value.const(1 - v)
        return Value(SI.range(0, 1), p.aff if p.is_uniform else Affine.top(), Congruence.top())
    if isinstance(op, Immediate):
        v = op.value
        if isinstance(v, float):
            return Value.const(float_bits(v, bits))
        return Value.const(v)
    if isinstance(op, Symbol):
        return symbol_address(op.name, 0, ctx)
    if isinstance(op, Expression):
        return expression_value(op.text, ctx)
    return TOP


def symbol_address(name: str, offset: int, ctx: Ctx) -> Value:
    """`mov.u64 %rd, sym` / `[sym+off]`: a window address of the variable (remembered
    per analysis: a function names few variables, many times)."""
    key = ("symbol", name, offset)
    hit = ctx.memo.get(key)
    if hit is None:
        hit = ctx.memo[key] = _symbol_address(name, offset, ctx)
    return hit


def _symbol_address(name: str, offset: int, ctx: Ctx) -> Value:
    var = ctx.variable(name)
    if var is None and name == "WARP_SZ":  # predefined: the warp size (`warpSize`)
        return Value.const(32 + offset)
    if var is None or var.space not in ("global", "shared", "local", "const", "param"):
        return UNIFORM_TOP  # a function's address, a texture reference, ...
    base = Value.pointer(Region(var.space, var.name))
    return base if offset == 0 else Value(SI.const(offset), Affine.const(offset),
                                          Congruence.const(offset), base.region)


def expression_value(text: str, ctx: Ctx) -> Value:
    """`sym+8`, `sym-4`: a symbol plus a constant; anything else is uniform unknown."""
    import re
    m = re.fullmatch(r"\s*([A-Za-z_$][\w$]*)\s*([+-])\s*(-?\s*\w+)\s*", text)
    if m:
        try:
            off = int(m.group(3).replace(" ", ""), 0)
        except ValueError:
            return UNIFORM_TOP
        return symbol_address(m.group(1), off if m.group(2) == "+" else -off, ctx)
    return UNIFORM_TOP


def address_value(addr: Address, s: State, ctx: Ctx) -> Value:
    """The value of `[base+offset]` (an offset into an object when the base has one)."""
    if addr.base is None:
        return Value.const(addr.offset)
    if isinstance(addr.base, Symbol):
        return symbol_address(addr.base.name, addr.offset, ctx)
    base = s.regs.get(addr.base.key, TOP)
    if addr.offset == 0:
        return base
    return arith_values.add_values(base, Value.const(addr.offset), 64, False, ctx)


def assign(op: Operand, value: Value, s: State) -> None:
    """Write a destination operand; vectors get `value` in every element."""
    if isinstance(op, Register):
        s.assign(op.key, value)
    elif isinstance(op, (Vector, PredicatePair)):
        elems = op.elements if isinstance(op, Vector) else (op.first, op.second)
        for e in elems:
            assign(e, value, s)
    elif isinstance(op, Sink):
        pass


def _load_families() -> None:
    """Import the modules that register transfer functions."""
    from . import arith, memory  # noqa: F401


from . import arith_values  # noqa: E402 - it imports this module: bound when both are loaded
