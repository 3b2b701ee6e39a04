"""Evaluating `thread_exprs` expressions for every thread of a block at once (numpy).

A value is `Lin(conc, sym)`: `conc` an int64 array over (assignment, thread) or a
scalar, plus an integer combination of *symbols* (uniform leaves whose value sets are
too large to enumerate, and uniform results of operations on them). Small uniform
leaves (a buffer parity, a loop counter with few values) are enumerated: each
assignment is a row. Linear operations keep symbols exact, so `s + 4*tid` and
`s + 4*tid + 4` differ by exactly 4 whatever `s` is; anything else on a symbolic value
is a fresh symbol when the result is the same for every thread, else `Unevaluable`.

Integers wrap at the instruction's width and are kept unsigned below 64 bits (int64
two's complement at 64); comparisons and shifts read the signed view when the type is
signed. Addresses are read in the signed view, so `tile - 4` stays -4.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd

import numpy as np

from ..domains.strided import StridedInterval as SI
from .thread_exprs import Node

I64 = np.int64
Sym = tuple[tuple[str, int], ...]


class Unevaluable(Exception):
    """The expression is not a function of the thread index the evaluator can compute."""


@dataclass(frozen=True)
class ThreadSpace:
    """The threads of one block: their indices, lane and warp (linear numbering, as
    `launch.py`); `exact` when the block shape is known rather than assumed."""

    dims: tuple[int, int, int]
    exact: bool

    @property
    def n(self) -> int:
        x, y, z = self.dims
        return x * y * z

    @property
    def linear(self) -> np.ndarray:
        return np.arange(self.n, dtype=I64)

    def index(self, name: str) -> np.ndarray:
        x, y, _ = self.dims
        lin = self.linear
        return {"tx": lin % x, "ty": lin // x % y, "tz": lin // (x * y),
                "lane": lin % 32, "warp": lin // 32}[name]

    def coords(self, t: int) -> tuple[int, int, int]:
        x, y, _ = self.dims
        return (t % x, t // x % y, t // (x * y))

    def name(self, t: int) -> str:
        """`thread 33` for a row of threads, `thread (1,2,0)` otherwise."""
        x, y, z = self.coords(t)
        return f"thread {x}" if self.dims[1:] == (1, 1) else f"thread ({x},{y},{z})"

    @classmethod
    def of(cls, facts) -> "ThreadSpace":
        """The launch's exact block, else one row of as many threads as the bounds allow
        (`tid.y = tid.z = 0`): an assumption the findings say they rely on."""
        fn = facts.function
        shape = facts.ctx.launch.block_or_limits(fn).shape if facts.ctx.launch else None
        if shape is not None:
            return cls(tuple(shape), True)  # type: ignore[arg-type]
        hi = facts.ctx.bounds.tid_x.hi
        return cls((min(1024, (hi if hi is not None else 1023) + 1), 1, 1), False)


@dataclass(frozen=True)
class Lin:
    conc: object  # np.ndarray (rows, threads) or broadcastable, or int
    sym: Sym = ()

    @property
    def uniform(self) -> bool:
        """The same in every thread (a scalar or a column of assignments)."""
        c = self.conc
        return not isinstance(c, np.ndarray) or c.ndim < 2 or c.shape[1] == 1


def wrap(v, bits: int):
    if bits >= 64:
        return v
    return np.bitwise_and(v, (1 << bits) - 1) if isinstance(v, np.ndarray) \
        else int(v) & ((1 << bits) - 1)


def signed(v, bits: int):
    if bits >= 64:
        return v
    v = wrap(v, bits)
    half = 1 << (bits - 1)
    return (v ^ half) - half


def unsigned(v, bits: int):
    """The unsigned view: a non-negative int64 below 64 bits, uint64 at 64."""
    if bits < 64:
        return wrap(v, bits)
    return np.asarray(v).astype(np.int64).view(np.uint64) if isinstance(v, np.ndarray) \
        else np.uint64(int(v) & (1 << 64) - 1)


def _i64(v):
    """Back from a uint64 view to int64 bits."""
    return v.view(I64) if isinstance(v, np.ndarray) and v.dtype == np.uint64 else \
        np.asarray(v).astype(np.uint64).view(I64) if isinstance(v, np.uint64) else v


def _add_sym(a: Sym, b: Sym, k: int = 1) -> Sym:
    out = dict(a)
    for name, c in b:
        out[name] = out.get(name, 0) + k * c
    return tuple(sorted((n, c) for n, c in out.items() if c))


def _scale(s: Sym, k: int) -> Sym:
    return tuple((n, c * k) for n, c in s if c * k)


class Evaluator:
    """Values of nodes at one access. `values` gives the enumerated leaves by identity
    (arrays of shape (rows, 1)); every other leaf is a symbol, named by its structure so
    that two accesses agree on it, and `idents` says which leaves a symbol stands on
    (whether it is shared with another access is the caller's question). `obj` is the
    object whose symbol is 0."""

    def __init__(self, space: ThreadSpace, values: dict[tuple, np.ndarray],
                 shared: frozenset = frozenset(), obj: str | None = None, suffix: str = ""):
        self.space = space
        self.values = values
        self.obj = obj
        self._memo: dict[int, Lin] = {}
        self._idents: dict[str, frozenset] = {}

    def eval(self, node: Node) -> Lin:
        hit = self._memo.get(id(node))
        if hit is None:
            hit = self._memo[id(node)] = self._eval(node)
        return hit

    def idents(self, name: str) -> frozenset:
        """The identities of the leaves symbol `name` stands on (empty: an object)."""
        return self._idents.get(name, frozenset())

    def _eval(self, node: Node) -> Lin:
        op = node.op
        if op == "const":
            return Lin(int(node.value))  # type: ignore[arg-type]
        if op == "thread":
            return Lin(self.space.index(node.value)[None, :])  # type: ignore[arg-type]
        if op == "sym":
            return Lin(0) if node.value == self.obj else Lin(0, ((f"sym:{node.value}", 1),))
        if op in ("leaf", "count"):
            if node.ident in self.values:
                return Lin(self.values[node.ident])
            return Lin(0, ((self._name(node), 1),))
        if op == "opaque":
            raise Unevaluable("opaque")
        fn = _OPS.get(op)
        if fn is None:
            raise Unevaluable(op)
        return fn(self, node, [self.eval(a) for a in node.args])

    def _name(self, node: Node) -> str:
        name = f"{node.op}#{node.skey}"
        self._idents[name] = frozenset(leaf.ident for leaf in node.leaves)
        return name

    def fresh(self, node: Node, args: list[Lin], compute) -> Lin:
        """`compute` on concrete operands, or a fresh symbol when some operand is
        symbolic but every operand is the same in every thread."""
        if not any(a.sym for a in args):
            return Lin(compute([a.conc for a in args]))
        if all(a.uniform for a in args):
            return Lin(0, ((self._name(node), 1),))
        raise Unevaluable(node.op)


# ---- operations -----------------------------------------------------------------------------
def _add(ev: Evaluator, node: Node, args: list[Lin], k: int = 1) -> Lin:
    a, b = args
    conc = a.conc + k * b.conc
    sym = _add_sym(a.sym, b.sym, k)
    return Lin(wrap(conc, node.bits) if not sym else conc, sym)


def _mul(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    a, b = args
    bits = node.bits
    if node.mode and node.mode.startswith("wide"):
        src = int(node.mode[4:])
        a, b = (Lin(signed(x.conc, src) if node.signed else wrap(x.conc, src), x.sym)
                for x in (a, b))
    for x, y in ((a, b), (b, a)):
        if not y.sym and not isinstance(y.conc, np.ndarray):
            k = int(y.conc)
            conc = x.conc * k
            return Lin(wrap(conc, bits) if not x.sym else conc, _scale(x.sym, k))
    return ev.fresh(node, [a, b], lambda c: wrap(c[0] * c[1], bits))


def _mad(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    product = _mul(ev, Node("mul", node.args[:2], bits=node.bits, signed=node.signed,
                            mode=node.mode), args[:2])
    return _add(ev, node, [product, args[2]])


def _shl(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    a, b = args
    if not b.sym and not isinstance(b.conc, np.ndarray):
        n = int(b.conc)
        return _mul(ev, Node("mul", bits=node.bits), [a, Lin(0 if n >= node.bits else 1 << n)])
    return ev.fresh(node, args, lambda c: wrap(np.where(c[1] >= node.bits, 0,
                                                        c[0] << np.minimum(c[1], 63)),
                                               node.bits))


def _elementwise(fn):
    def op(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
        return ev.fresh(node, args, lambda c: fn(node, *c))
    return op


def _view(node: Node, v):
    return signed(v, node.bits) if node.signed else unsigned(v, node.bits)


def _shr(node: Node, a, b):
    n = np.minimum(np.asarray(wrap(b, 32)), node.bits)
    if node.signed:
        return wrap(signed(a, node.bits) >> np.minimum(n, 63), node.bits)
    shifted = unsigned(a, node.bits) >> np.minimum(n, 63).astype(
        np.uint64 if node.bits >= 64 else I64)
    return np.where(n >= node.bits, 0, _i64(shifted))


def _div(node: Node, a, b, rem: bool = False):
    x, y = _view(node, a), _view(node, b)
    safe = np.where(y == 0, 1, y)
    if node.signed:
        q = np.where(y == 0, -1, np.sign(x) * np.sign(safe) * (np.abs(x) // np.abs(safe)))
    else:
        q = np.where(y == 0, np.array(-1).astype(x.dtype) if hasattr(x, "dtype") else -1,
                     x // safe)
    r = np.where(y == 0, x, x - q * safe)
    return wrap(_i64(np.asarray(r if rem else q)), node.bits)


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
       "hi": np.greater, "hs": np.greater_equal}


def _setp(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    a, b = args
    if a.sym or b.sym:
        if a.sym == b.sym and node.mode in ("eq", "ne") and node.bits >= 64:
            diff = Lin(a.conc - b.conc)  # s + x == s + y iff x == y (no wrap at 64 bits)
            return Lin(CMP[node.mode](diff.conc, 0).astype(I64))
        return ev.fresh(node, args, lambda c: c)
    view = signed if node.signed and node.mode not in ("lo", "ls", "hi", "hs") else unsigned
    cmp = CMP.get(node.mode or "")
    if cmp is None:
        raise Unevaluable(f"setp.{node.mode}")
    return Lin(np.asarray(cmp(view(a.conc, node.bits), view(b.conc, node.bits))).astype(I64))


def _selp(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    a, b, c = args
    if c.sym:
        raise Unevaluable("selp")
    if a.sym == b.sym:
        return Lin(np.where(np.asarray(c.conc) != 0, a.conc, b.conc), a.sym)
    return ev.fresh(node, args, lambda v: v)


def _cvt(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    (a,) = args
    src = int(node.mode or 32)
    if a.sym:
        return a
    v = signed(a.conc, src) if node.signed else wrap(a.conc, src)
    return Lin(wrap(v, node.bits))


def _mov(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    (a,) = args
    return Lin(wrap(a.conc, node.bits) if not a.sym else a.conc, a.sym)


def _not(node: Node, a):
    return 1 - (np.asarray(a) != 0).astype(I64) if node.bits == 1 else wrap(~a, node.bits)


def _table(ev: Evaluator, node: Node, args: list[Lin]) -> Lin:
    """The table's entry at each thread's byte offset into it."""
    (a,) = args
    name, values, elem = node.value  # type: ignore[misc]
    if a.sym not in ((), ((f"sym:{name}", 1),)) or (not a.sym and ev.obj != name):
        raise Unevaluable("table")
    off = np.asarray(a.conc, I64)
    if (off % elem).any() or (off < 0).any() or (off >= elem * len(values)).any():
        raise Unevaluable("table index")
    got = np.asarray(values, I64)[off // elem]
    return Lin(wrap(got, node.bits) if node.bits < 64 else got)


_OPS = {
    "table": _table,
    "add": _add, "sub": lambda ev, n, a: _add(ev, n, a, -1), "mul": _mul, "mad": _mad,
    "shl": _shl, "setp": _setp, "selp": _selp, "cvt": _cvt, "mov": _mov,
    "shr": _elementwise(_shr), "div": _elementwise(_div),
    "rem": _elementwise(lambda n, a, b: _div(n, a, b, rem=True)),
    "and": _elementwise(lambda n, a, b: wrap(a & b, n.bits)),
    "or": _elementwise(lambda n, a, b: wrap(a | b, n.bits)),
    "xor": _elementwise(lambda n, a, b: wrap(a ^ b, n.bits)),
    "not": _elementwise(_not),
    "neg": _elementwise(lambda n, a: wrap(-a, n.bits)),
    "min": _elementwise(lambda n, a, b: wrap(_i64(np.minimum(_view(n, a), _view(n, b))),
                                             n.bits)),
    "max": _elementwise(lambda n, a, b: wrap(_i64(np.maximum(_view(n, a), _view(n, b))),
                                             n.bits)),
}


def pure_values(node: Node, space: ThreadSpace) -> np.ndarray | None:
    """Each thread's value of an expression of the thread indices and constants only
    (no leaf), as an array over the threads; None otherwise."""
    if node.opaque or node.leaves:
        return None
    try:
        v = Evaluator(space, {}, frozenset(), None, "").eval(node)
    except Unevaluable:
        return None
    if v.sym:
        return None
    return np.broadcast_to(np.asarray(v.conc, I64), (1, space.n))[0]


def members(v, si: SI, bits: int) -> np.ndarray:
    """Whether each value (read unsigned or signed at `bits`) may be in `si`."""
    out = None
    for view in (wrap(v, bits), signed(v, bits)):
        ok = np.ones(np.shape(view), bool)
        if si.lo is not None:
            ok &= view >= si.lo
        if si.hi is not None:
            ok &= view <= si.hi
        if si.stride > 1:
            ok &= (view - si.residue) % si.stride == 0
        elif si.stride == 0 and si.lo is not None:
            ok &= view == si.lo
        out = ok if out is None else out | ok
    return np.asarray(out)


def modulus(sym: Sym) -> int:
    """The differences an integer combination of free symbols can make: multiples of
    the gcd of its coefficients (0: none, the combination is empty)."""
    g = 0
    for _, c in sym:
        g = gcd(g, abs(c))
    return g


__all__ = ["ThreadSpace", "Lin", "Evaluator", "Unevaluable", "members", "modulus",
           "pure_values", "wrap", "signed"]
