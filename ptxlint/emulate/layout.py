"""Where things live: the generic address windows, module variables with their
initialisers, kernel parameters, and the frame of each function.

Generic addresses are 64-bit; bits 48 and up name the window, so `cvta` is an add or a
subtract and `isspacep` a compare, and a window base is 2^32-aligned, so the low 32 bits
of a generic shared address are its shared-space address (as on the hardware):

    window 0  global: caller buffers and `.global` variables from 2^32, each
              256-aligned with a 64 KiB unmapped gap after it (overruns hit nothing)
    window 1  shared: per-block storage, variables from shared address 0
    window 2  local:  per-thread stack of frames
    window 3  const:  `.const` variables
    window 4  param:  kernel parameters (uniform), then frame-resident `.param` cells
    window 5  code:   function addresses (indirect calls)

Shared and constant variables are 128-byte aligned with 64 unused bytes between them, so
an access running off one variable is reported instead of landing in its neighbour.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

from ..ir.module import Function, Module, Variable
from ..ir.types import DataType, Kind
from .errors import EmulationError

WINDOW_BITS = 48
GLOBAL, SHARED, LOCAL, CONST, PARAM, CODE = range(6)
WINDOW_NAMES = ("global", "shared", "local", "const", "param", "code")
SPACE_WINDOW = {name: i for i, name in enumerate(WINDOW_NAMES)}
GLOBAL_START = 1 << 32
GLOBAL_GAP = 1 << 16
VAR_ALIGN = 128
VAR_GAP = 64
# Frame-resident `.param` cells (a `.func`'s parameters, call arguments) are addressed in
# the param space at FRAME_PARAM + their local-stack address.
FRAME_PARAM = 1 << 40


def window_base(window: int) -> int:
    return window << WINDOW_BITS


def align_up(x: int, a: int) -> int:
    return -(-x // a) * a


@dataclass(frozen=True)
class Placed:
    """A variable and its address in its own state space (not generic)."""

    var: Variable
    space: str
    address: int
    size: int


# ---- initialisers -----------------------------------------------------------------------------
_INIT_TOKEN = re.compile(r"\s*(0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[-+]?\s*0[xX][0-9a-fA-F]+U?"
                         r"|[-+]?\s*[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[-+]?\s*[0-9]+U?"
                         r"|generic\s*\(\s*[\w$.]+\s*\)|[\w$.%]+(?:\s*[-+]\s*[0-9]+)?|[{},])")


def initializer_items(text: str) -> list[str]:
    """The scalar items of `{1, {2, 3}}`, `0f3F800000`, `{sym, sym+4}`, flattened."""
    items, pos = [], 0
    while pos < len(text):
        m = _INIT_TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip() == "":
                break
            raise EmulationError(f"cannot read the initialiser '{text}'")
        tok = re.sub(r"^([-+])\s+", r"\1", m.group(1))
        pos = m.end()
        if tok not in "{},":
            items.append(tok)
    return items


def _int_literal(tok: str) -> int:
    t = tok.rstrip("U")
    neg = t.startswith("-")
    t = t.lstrip("+-")
    if t[:2] in ("0x", "0X"):
        v = int(t, 16)
    elif len(t) > 1 and t[0] == "0":
        v = int(t, 8)
    else:
        v = int(t)
    return -v if neg else v


def encode_item(tok: str, t: DataType, symbol_address) -> bytes:
    """One initialiser item as the bytes of type `t` (little-endian)."""
    nbytes = t.bytes
    if tok[:2] in ("0f", "0F"):
        raw = int("0x" + tok[2:], 16)
        if t.kind is Kind.FLOAT and t.bits == 64:
            return struct.pack("<d", struct.unpack(">f", raw.to_bytes(4, "big"))[0])
        return raw.to_bytes(4, "little")[:nbytes].ljust(nbytes, b"\0")
    if tok[:2] in ("0d", "0D"):
        value = struct.unpack(">d", int("0x" + tok[2:], 16).to_bytes(8, "big"))[0]
        return struct.pack("<f", value) if t.bits == 32 else struct.pack("<d", value)
    if re.fullmatch(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?", tok):
        value = float(tok)
        return struct.pack("<f", value) if t.bits == 32 else struct.pack("<d", value)
    if re.fullmatch(r"[-+]?(0[xX][0-9a-fA-F]+|[0-9]+)U?", tok):
        value = _int_literal(tok)
        if t.kind is Kind.FLOAT:
            return struct.pack("<f", float(value)) if t.bits == 32 else struct.pack("<d", float(value))
        return (value % (1 << (8 * nbytes))).to_bytes(nbytes, "little")
    generic = tok.startswith("generic")
    name = tok[tok.index("(") + 1:tok.index(")")].strip() if generic else tok
    offset = 0
    m = re.fullmatch(r"([\w$.%]+)\s*([-+])\s*([0-9]+)", name)
    if m:
        name, offset = m.group(1), int(m.group(3)) * (1 if m.group(2) == "+" else -1)
    value = symbol_address(name.strip(), generic) + offset
    return (value % (1 << (8 * nbytes))).to_bytes(nbytes, "little")


# ---- module layout ----------------------------------------------------------------------------
@dataclass
class ModuleLayout:
    """Addresses of module variables, kernel parameters and functions."""

    module: Module
    globals: dict[str, Placed] = field(default_factory=dict)
    consts: dict[str, Placed] = field(default_factory=dict)
    shared: dict[str, Placed] = field(default_factory=dict)
    static_shared: int = 0  # bytes of static shared variables (incl. gaps)
    functions: dict[str, int] = field(default_factory=dict)  # name -> code address
    global_end: int = GLOBAL_START

    @classmethod
    def of(cls, module: Module, functions: list[Function]) -> ModuleLayout:
        lay = cls(module)
        const_end = shared_end = 0
        dynamic: list[Variable] = []
        # `.shared`/`.global`/`.const` declared in a function body are static too
        body_vars = [v for f in functions for v in f.variables
                     if v.space in ("global", "const", "shared")]
        for v in [*module.variables, *body_vars]:
            if v.space == "global":
                size = v.byte_size or 0
                start = align_up(lay.global_end, max(256, v.alignment))
                lay.globals[v.name] = Placed(v, "global", start, size)
                lay.global_end = start + size + GLOBAL_GAP
            elif v.space == "const":
                size = v.byte_size or 0
                start = align_up(const_end, max(VAR_ALIGN, v.alignment))
                lay.consts[v.name] = Placed(v, "const", start, size)
                const_end = start + size + VAR_GAP
            elif v.space == "shared":
                if v.byte_size is None:
                    dynamic.append(v)
                    continue
                start = align_up(shared_end, max(VAR_ALIGN, v.alignment))
                lay.shared[v.name] = Placed(v, "shared", start, v.byte_size)
                shared_end = start + v.byte_size + VAR_GAP
        lay.static_shared = align_up(shared_end, VAR_ALIGN)
        for v in dynamic:  # every unsized extern array starts the dynamic region
            lay.shared[v.name] = Placed(v, "shared", lay.static_shared, -1)
        for i, f in enumerate(functions):
            lay.functions[f.name] = window_base(CODE) + 16 * (i + 1)
        return lay

    def symbol(self, name: str) -> Placed | None:
        return self.globals.get(name) or self.consts.get(name) or self.shared.get(name)

    def generic_address(self, name: str) -> int:
        p = self.symbol(name)
        if p is None:
            if name in self.functions:
                return self.functions[name]
            raise EmulationError(f"'{name}' is not a module variable or function")
        return p.address + window_base(SPACE_WINDOW[p.space]) * (p.space != "global")

    def initial_bytes(self, p: Placed) -> bytearray:
        """The variable's storage with its initialiser applied (zeros otherwise)."""
        data = bytearray(align_up(max(p.size, 1), 16))
        v = p.var
        if v.initializer is None or v.type.kind is Kind.OPAQUE:
            return data
        items = initializer_items(v.initializer)
        t = v.type
        pos = 0

        def address_of(name: str, generic: bool) -> int:
            q = self.symbol(name)
            if q is None or generic or q.space == "global":
                return self.generic_address(name)
            return q.address
        for tok in items:
            chunk = encode_item(tok, t, address_of)
            if pos + len(chunk) > len(data):
                break
            data[pos:pos + len(chunk)] = chunk
            pos += len(chunk)
        return data


def kernel_params(fn: Function) -> tuple[dict[str, tuple[int, int]], int]:
    """Kernel parameter name -> (offset, size) in the uniform param buffer, and its size."""
    out, end = {}, 0
    for p in fn.params:
        size = p.byte_size or 0
        start = align_up(end, max(1, p.alignment))
        out[p.name] = (start, size)
        end = start + size
    return out, align_up(max(end, 1), 16)


@dataclass
class FrameLayout:
    """A function's frame on the per-thread stack: `.local` variables, `.param` cells
    declared in its body, its parameters and return values (for `.func`s)."""

    function: Function
    offsets: dict[str, tuple[int, int, str]]  # name -> (offset, size, space)
    size: int

    @classmethod
    def of(cls, fn: Function, is_entry: bool) -> FrameLayout:
        offsets: dict[str, tuple[int, int, str]] = {}
        end = 0
        cells: list[Variable] = [v for v in fn.variables if v.space in ("local", "param")]
        if not is_entry:
            cells = [*fn.params, *fn.returns, *cells]
        sizes: dict[str, tuple[int, int, str]] = {}
        for v in cells:  # a name declared in several scopes (`param0` per call) gets one
            size = v.byte_size  # cell, as large as its largest declaration
            if size is None:
                raise EmulationError(f"unsized {v.space} variable '{v.name}'", v.span)
            old = sizes.get(v.name)
            sizes[v.name] = (max(size, old[0] if old else 0),
                             max(v.alignment, old[1] if old else 1), v.space)
        for name, (size, align, space) in sizes.items():
            start = align_up(end, max(align, 1))
            offsets[name] = (start, size, space)
            end = start + size + (16 if space == "local" else 0)  # guard bytes after arrays
        return cls(fn, offsets, align_up(max(end, 16), 16))
