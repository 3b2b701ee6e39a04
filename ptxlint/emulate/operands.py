"""Operands compiled once into small closures over the machine.

`Operands(ctx).read(op, dtype)` returns `f(m)`: the operand's value for the threads of
`m.idx` (all threads when None) as `dtype`: a register's bits reinterpreted (a view
when the widths match, truncated or extended otherwise), an immediate as a numpy scalar,
a symbol as its address. `write(op, dtype)` returns `f(m, value)` storing into the
register's storage type. Registers live in unsigned arrays of their declared width
(predicates in bool arrays); an array written for all threads is rebound without a copy
when it is a fresh result (`value.base is None`), so passing a register through
(`mov`) copies and no two registers ever share memory.
"""
from __future__ import annotations

import re

import numpy as np

from ..ir.operands import (
    Address,
    Expression,
    Immediate,
    Negated,
    Operand,
    Register,
    Sink,
    Symbol,
    Vector,
)
from ..ir.types import DataType, Kind
from .errors import EmulationError
from .layout import FRAME_PARAM, SPACE_WINDOW, window_base

UINT = {1: np.dtype(np.uint8), 8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
        32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
SINT = {8: np.dtype(np.int8), 16: np.dtype(np.int16), 32: np.dtype(np.int32),
        64: np.dtype(np.int64)}
BOOL = np.dtype(np.bool_)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


def np_type(t: DataType) -> np.dtype:
    """The numpy dtype an instruction of type `t` computes in: float32/float64 for
    .f32/.f64, signed or unsigned integers, and raw unsigned bits for the other float
    formats (f16, bf16, packed pairs, fp8), which their executors decode."""
    if t.kind is Kind.PRED:
        return BOOL
    if t.kind is Kind.FLOAT and t.name in ("f32", "f64"):
        return F32 if t.bits == 32 else F64
    if t.kind is Kind.SIGNED and t.bits in SINT:
        return SINT[t.bits]
    if t.bits in UINT:
        return UINT[t.bits]
    raise EmulationError(f"type {t} is not supported by the emulator")


def storage_type(t: DataType) -> np.dtype:
    return BOOL if t.kind is Kind.PRED else UINT.get(t.bits, UINT[64])


def convert_bits(v, src: np.dtype, dst: np.dtype):
    """Reinterpret or resize the bits of `v` (dtype `src`) as `dst`: same width is a view;
    a narrower `dst` keeps the low bits; a wider one sign-extends signed sources and
    zero-extends the rest; bool <-> integer maps to 0/1."""
    if src == dst:
        return v
    if dst == BOOL:
        return v != 0
    if src == BOOL:
        return np.asarray(v).astype(dst) if np.ndim(v) else dst.type(bool(v))
    if src.itemsize == dst.itemsize:
        return v.view(dst)
    if dst.itemsize < src.itemsize:
        return v.view(UINT[src.itemsize * 8]).astype(UINT[dst.itemsize * 8]).view(dst)
    if src.kind == "i":
        return v.astype(SINT[dst.itemsize * 8]).view(dst)
    return v.view(UINT[src.itemsize * 8]).astype(UINT[dst.itemsize * 8]).view(dst)


def immediate_value(op: Immediate, dt: np.dtype):
    v = op.value
    if dt == BOOL:
        return np.bool_(bool(v))
    if dt.kind == "f":
        return dt.type(float(v))
    if isinstance(v, float):  # a float literal in an integer context: its bits
        if dt.itemsize == 4:
            return np.array(v, np.float32).view(dt)[()]
        return np.array(v, np.float64).view(UINT[64]).astype(dt)[()] if dt.itemsize != 8 \
            else np.array(v, np.float64).view(dt)[()]
    bits = dt.itemsize * 8
    return np.array(int(v) % (1 << bits), UINT[bits]).view(dt)[()]


def elements(op: Operand, count: int = 1) -> tuple[Operand, ...]:
    """The registers of a `{a, b}` operand, or of a vector register (`.reg .v4 .f32 v`:
    `v.x v.y v.z v.w`)."""
    if isinstance(op, Vector):
        return op.elements
    if isinstance(op, Register) and count > 1 and "." not in op.name:
        return tuple(Register(f"{op.name}.{c}", op.key) for c in "xyzw"[:count])
    return (op,)


_SYM_OFFSET = re.compile(r"^\s*([\w$.%]+)\s*(?:([-+])\s*(\d+|0[xX][0-9a-fA-F]+))?\s*$")


def split_symbol(op: Symbol | Expression) -> tuple[str, int]:
    if isinstance(op, Symbol):
        return op.name, 0
    m = _SYM_OFFSET.match(op.text)
    if not m:
        raise EmulationError(f"cannot evaluate the address expression '{op.text}'")
    off = int(m.group(3), 0) if m.group(3) else 0
    return m.group(1), -off if m.group(2) == "-" else off


class Operands:
    """Compiles operands of one function (`ctx` is the program's per-function context:
    register storage types, module layout and the function's frame)."""

    def __init__(self, ctx):
        self.ctx = ctx

    # ---- sources ---------------------------------------------------------------------------------
    def read(self, op: Operand, dt: np.dtype):
        if isinstance(op, Register):
            return self._register(op, dt)
        if isinstance(op, Immediate):
            c = immediate_value(op, dt)
            return lambda m: c
        if isinstance(op, Negated):
            inner = self._register(op.operand, BOOL)
            return lambda m: ~inner(m) if dt == BOOL else convert_bits(~inner(m), BOOL, dt)
        if isinstance(op, Symbol) and op.name == "WARP_SZ":  # predefined: the warp size
            c32 = immediate_value(Immediate(32, "32"), dt)
            return lambda m: c32
        if isinstance(op, (Symbol, Expression)):
            name, off = split_symbol(op)
            addr = self.symbol_address(name, None, off)
            return lambda m: convert_bits(np.asarray(addr(m), np.uint64), UINT[64], dt) \
                if dt.itemsize != 8 else np.asarray(addr(m), np.uint64).view(dt)
        raise EmulationError(f"operand '{op}' cannot be read by the emulator")

    def _register(self, reg: Register, dt: np.dtype):
        if reg.is_special:
            name = reg.name

            def special(m):
                v = m.special(name)
                return convert_bits(v, v.dtype, dt)
            return special
        key = self.ctx.key(reg)
        src = self.ctx.register_type(reg)
        if src == dt:
            def read(m):
                a = m.regs[key]
                idx = m.idx
                return a.view() if idx is None else a[idx]
        elif src.itemsize == dt.itemsize and src != BOOL and dt != BOOL:
            def read(m):
                a = m.regs[key]
                idx = m.idx
                return a.view(dt) if idx is None else a[idx].view(dt)
        else:
            def read(m):
                a = m.regs[key]
                idx = m.idx
                return convert_bits(a if idx is None else a[idx], src, dt)
        return read

    def pred(self, op: Operand):
        """A predicate source (`%p`, `!%p`, or an immediate) as a bool array or scalar."""
        return self.read(op, BOOL)

    # ---- destinations -----------------------------------------------------------------------------
    def write(self, op: Operand, dt: np.dtype):
        if isinstance(op, Sink):
            return lambda m, v: None
        if not isinstance(op, Register) or op.is_special:
            raise EmulationError(f"'{op}' cannot be written by the emulator")
        key = self.ctx.key(op)
        dst = self.ctx.register_type(op)

        def write(m, v):
            if not isinstance(v, np.ndarray):
                v = np.asarray(v, dt)
            fresh = v.ndim == 1 and v.base is None
            if v.dtype != dst:
                v = convert_bits(v, v.dtype, dst)
            idx = m.idx
            if v.ndim and len(v) != m.count():
                v = np.broadcast_to(v, (m.count(),))
                fresh = False
            if idx is None:
                if v.ndim == 0:
                    m.regs[key].fill(v)
                else:
                    m.regs[key] = v if fresh else v.copy()
            else:
                m.regs[key][idx] = v
        return write

    # ---- addresses ----------------------------------------------------------------------------------
    def symbol_address(self, name: str, space: str | None, offset: int = 0):
        """`f(m)`: the address of a variable or function. `space` is the space of the
        instruction using it (None for `mov`: the variable's own space); generic
        instructions get the generic address."""
        kind, sym_space, where = self.ctx.resolve(name)
        generic = space == "generic"
        if kind == "frame":
            base = where + offset + (FRAME_PARAM if sym_space == "param" else 0)
            if generic:
                base += window_base(SPACE_WINDOW["local" if sym_space == "local" else "param"])
            return lambda m: (m.frames.fp[m.active()] + base).astype(np.uint64)
        value = where + offset
        if generic and sym_space not in ("global", "code"):
            value += window_base(SPACE_WINDOW[sym_space])
        const = np.uint64(value % (1 << 64))
        return lambda m: const

    def address(self, op: Address, space: str):
        """`f(m)`: the per-thread uint64 address of `[base+offset]` in `space`.

        A register's width is the address size (PTX ISA 6.4.1: 32 or 64 bits), so
        `[%r+imm]` with a 32-bit `%r` is a 32-bit sum, zero-extended: nvcc folds
        `r - 384` and `+384` into `[%r+384]` and relies on the wrap back to `r`."""
        off = op.offset
        base = op.base
        if base is None:
            c = np.uint64(off % (1 << 64))
            return lambda m: np.full(len(m.active()), c)
        if isinstance(base, Symbol):
            addr = self.symbol_address(base.name, space, off)

            def sym(m):
                a = addr(m)
                return a if np.ndim(a) else np.full(len(m.active()), a)
            return sym
        if not base.is_special and self.ctx.register_type(base).itemsize < 8:
            reg32 = self._register(base, UINT[32])
            off32 = np.uint32(off % (1 << 32))
            return lambda m: (np.asarray(reg32(m), np.uint32) + off32).astype(np.uint64)
        reg = self._register(base, UINT[64])
        uoff = np.uint64(off % (1 << 64))
        if off == 0:
            return lambda m: np.asarray(reg(m), np.uint64)
        return lambda m: reg(m) + uoff
