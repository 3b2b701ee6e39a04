"""Launch configuration -> the abstract state a kernel starts from.

A `LaunchConfig` says what is known about one launch: block and grid shape, dynamic
shared memory, concrete parameter values and the byte size of the buffers pointer
parameters point to. Everything left out is described by its PTX or hardware limits,
so the analysis stays sound for every launch the configuration allows.

Warp model. The threads of a block are numbered linearly,
``tid.x + ntid.x * (tid.y + ntid.y * tid.z)``; warp ``w`` holds linear ids
``32w .. 32w+31`` and ``%laneid`` is the linear id modulo 32. A block whose size is not
a multiple of 32 ends in a partial warp. `threads/warp.py` uses the same numbering.

Block shape, most precise first: the launch's `block`; `.reqntid` (exactly that shape);
`.maxntid` (the *product* bounds the thread count: `__launch_bounds__(256)` emits
`.maxntid 256, 1, 1` yet a 16x16 block is a legal launch, so each dimension is only
bounded by the product and the hardware); the hardware limits (1024 threads per block,
x and y at most 1024, z at most 64).

Kernel parameters start in the `.param` cells of the state, `State.params[(name, 0)]`:
a given value is a uniform constant; a pointer parameter (`.ptr` attribute, an extent
given, or any 64-bit integer parameter without a value in a 64-bit module) is the start
of the buffer it names, `Region('global', name, generic=True)`: CUDA passes generic
addresses, and nvcc converts them with `cvta.to.global`; any other parameter is uniform
with its type's range. Aggregates (`.b8 p[16]`) get no cell: loads from them are uniform.
"""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field, replace

from .arch import WARP_SIZE
from .domains.affine import Affine, ThreadBounds
from .domains.space import Region
from .domains.state import State
from .domains.strided import StridedInterval as SI
from .domains.strided import wrap_int
from .domains.value import TOP, Value
from .ir.module import Function, Module, Param
from .ir.operands import is_special_register
from .ir.types import Kind, float_bits

MAX_THREADS = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_CLUSTER = 16  # non-portable cluster size limit (sm_90)
AXES = ("x", "y", "z")

Dims = tuple[int, int, int]


# A `0x` prefix always starts a hex number, so `x` separates dimensions only between
# decimal numbers: `0x20,8` is (32, 8), `32x8` is (32, 8) and `0x8` is 8, never "0 by 8"
# (no block or grid has a 0 dimension anyway).
_DIM = r"\s*(0[xX][0-9a-fA-F]+|[0-9]+)\s*"
_DIMS = (re.compile(rf"{_DIM}(?:,{_DIM})?(?:,{_DIM})?"),
         re.compile(r"\s*([0-9]+)\s*(?:x\s*([0-9]+)\s*)?(?:x\s*([0-9]+)\s*)?"))


def parse_dims(text: str) -> Dims:
    """`32,8`, `0x20,8` or `32x8` -> (32, 8, 1): one to three positive whole numbers
    (the command line, the config, the hook and the samples' launch lines read shapes
    with this one function)."""
    m = _DIMS[0].fullmatch(text) or _DIMS[1].fullmatch(text)
    nums = [int(g, 16 if g[:2].lower() == "0x" else 10) for g in m.groups() if g] if m else []
    if not nums or any(n < 1 for n in nums):
        raise ValueError(f"expected 1 to 3 positive integers like '32,8', got '{text}'")
    return _dims(tuple(nums))


def _dims(t: tuple[int, ...]) -> Dims:
    return (tuple(t) + (1, 1, 1))[:3]  # type: ignore[return-value]


@dataclass(frozen=True)
class BlockLimits:
    """The block shape when `exact`, else upper bounds per dimension; `threads` bounds
    the thread count; `source` says where they come from (for notes)."""

    dims: Dims
    threads: int
    exact: bool
    source: str  # "launch", "reqntid", "maxntid" or "hardware"

    @property
    def shape(self) -> Dims | None:
        return self.dims if self.exact else None


@dataclass
class LaunchConfig:
    block: Dims | None = None
    grid: Dims | None = None
    dynamic_smem: int | None = None
    params: dict[str | int, int | float] = field(default_factory=dict)
    extents: dict[str | int, int] = field(default_factory=dict)
    # integer parameters known only to be multiples of a power of two (`{"k": 4}`: k %
    # 4 == 0): the misaligned-access rule re-analyses with one to find the condition an
    # alignment depends on ("misaligned unless `k` % 4 == 0")
    multiples: dict[str | int, int] = field(default_factory=dict)
    # assume each warp is 32 consecutive `%tid.x` of one row (`ntid.x` a multiple of 32,
    # or a one-dimensional block) when the shape is not exact: the divergence rules
    # re-analyse with it to find the condition a finding depends on (`interp/transfer/warp_uniform.py`)
    warps_in_rows: bool = False

    def __post_init__(self) -> None:
        if self.block is not None:
            self.block = _dims(tuple(self.block))
            _check_dims("block", self.block, MAX_BLOCK)
            if self.block[0] * self.block[1] * self.block[2] > MAX_THREADS:
                raise ValueError(f"block {_fmt(self.block)} has more than {MAX_THREADS} threads")
        if self.grid is not None:
            self.grid = _dims(tuple(self.grid))
            _check_dims("grid", self.grid, MAX_GRID)
        if self.dynamic_smem is not None and self.dynamic_smem < 0:
            raise ValueError("dynamic shared memory size must not be negative")
        bad = [k for k, v in self.extents.items() if v < 0]
        if bad:
            raise ValueError(f"buffer size of parameter {bad[0]!r} must not be negative")
        odd = [k for k, m in self.multiples.items() if m < 1 or m & (m - 1)]
        if odd:
            raise ValueError(f"the divisor of parameter {odd[0]!r} must be a power of two")

    @classmethod
    def parse(cls, spec: str) -> LaunchConfig:
        """`block=32,8 grid=64 smem=1024 param.n=1024 buffer.in=4096` (a parameter by
        name or 0-based index); the launch line of a sample's header."""
        kw: dict = {"params": {}, "extents": {}}
        for word in spec.split():
            key, eq, val = word.partition("=")
            if not eq or not val:
                raise ValueError(f"expected key=value in the launch spec, got '{word}'")
            head, _, name = key.partition(".")
            target = name if not name.isdigit() else int(name)
            if key in ("block", "grid"):
                kw[key] = parse_dims(val)
            elif key in ("smem", "dynamic_smem"):
                kw["dynamic_smem"] = _number(val, word, integer=True)
            elif head == "param" and name:
                kw["params"][target] = _number(val, word)
            elif head == "buffer" and name:
                kw["extents"][target] = _number(val, word, integer=True)
            else:
                raise ValueError(f"unknown launch setting '{key}' (block, grid, smem, "
                                 "param.NAME, buffer.NAME)")
        return cls(**kw)

    # ---------------------------------------------------------------- per kernel
    def resolved(self, function: Function) -> LaunchConfig:
        """The same launch with parameter keys turned into `function`'s parameter
        names, checked against their declarations (ValueError when they don't fit)."""
        params = _by_name(function, self.params, "a value")
        extents = _by_name(function, self.extents, "a buffer size")
        for name, v in params.items():
            _check_value(function.param(name), v)  # type: ignore[arg-type]
        for name in extents:
            p = function.param(name)
            assert p is not None
            if p.dims or p.type.kind is Kind.FLOAT or p.type.bits < 32:
                raise ValueError(f"parameter '{name}' ({p.type}) of '{function.name}' "
                                 "cannot be a pointer, so it has no buffer size")
        multiples = _by_name(function, self.multiples, "a divisor") if self.multiples \
            else self.multiples
        return replace(self, params=params, extents=extents, multiples=multiples)

    def block_or_limits(self, function: Function) -> BlockLimits:
        if self.block is not None:
            return BlockLimits(self.block, _prod(self.block), True, "launch")
        req = function.directives.get("reqntid")
        if req:
            shape = _dims(req)
            return BlockLimits(shape, _prod(shape), True, "reqntid")
        top = function.directives.get("maxntid")
        threads = min(_prod(_dims(top)), MAX_THREADS) if top else MAX_THREADS
        dims = tuple(min(hw, threads) for hw in MAX_BLOCK)
        return BlockLimits(dims, threads, False, "maxntid" if top else "hardware")  # type: ignore[arg-type]

    def thread_bounds(self, function: Function) -> ThreadBounds:
        lim = self.block_or_limits(function)
        x, y, z = lim.dims
        return ThreadBounds(SI.range(0, x - 1), SI.range(0, y - 1), SI.range(0, z - 1),
                            SI.range(0, min(WARP_SIZE, lim.threads) - 1))


def _check_dims(what: str, dims: Dims, limits: Dims) -> None:
    for axis, n, hi in zip(AXES, dims, limits):
        if not 1 <= n <= hi:
            raise ValueError(f"{what}.{axis} = {n} is outside 1..{hi}")


def _fmt(dims: Dims) -> str:
    return "x".join(map(str, dims))


def _prod(dims: tuple[int, ...]) -> int:
    out = 1
    for n in dims:
        out *= n
    return out


def _number(text: str, word: str, integer: bool = False) -> int | float:
    try:
        return int(text, 0)
    except ValueError:
        if not integer:
            try:
                return float(text)
            except ValueError:
                pass
    raise ValueError(f"expected a number in '{word}'")


def _by_name(fn: Function, given: dict, what: str) -> dict:
    out: dict[str, object] = {}
    spelled: dict[str, str | int] = {}
    for key, v in given.items():
        p = fn.param(key)
        if p is None:
            if isinstance(key, int):
                raise ValueError(f"'{fn.name}' has {len(fn.params)} parameters: "
                                 f"index {key} is out of range")
            names = ", ".join(q.name for q in fn.params) or "none"
            raise ValueError(f"'{fn.name}' has no parameter named '{key}' "
                             f"(parameters: {names})")
        if p.name in out:
            raise ValueError(f"{what} for parameter '{p.name}' is given twice "
                             f"(as {spelled[p.name]!r} and as {key!r})")
        out[p.name], spelled[p.name] = v, key
    return out


def _check_value(p: Param, v: int | float) -> None:
    if p.dims:
        raise ValueError(f"parameter '{p.name}' is an aggregate ({p.type}[...]): "
                         "values can only be given to scalar parameters")
    if p.type.kind is Kind.FLOAT:
        return
    if isinstance(v, float):
        raise ValueError(f"parameter '{p.name}' ({p.type}) takes an integer, not {v}")
    bits = p.type.bits
    if not -(1 << (bits - 1)) <= v < (1 << bits):
        raise ValueError(f"value {v} does not fit parameter '{p.name}' ({p.type})")


# ---------------------------------------------------------------- initial state
def initial_state(function: Function, module: Module,
                  launch: LaunchConfig | None = None) -> State:
    """Special registers the module reads, and (for a kernel) its parameter cells."""
    launch = (launch or LaunchConfig()).resolved(function)
    s = State()
    lim = launch.block_or_limits(function)
    bounds = launch.thread_bounds(function)
    for name in sorted(_specials_read(module)):
        v = special_value(name, function, launch, lim, bounds)
        if not v.is_top:
            s.regs[name] = v
    if function.is_entry:
        for p in function.params:
            if not p.dims:
                s.params[(p.name, 0)] = param_value(p, launch, module)
    return s


def param_value(p: Param, launch: LaunchConfig, module: Module) -> Value:
    """A kernel parameter's value (`launch` already `resolved`)."""
    t = p.type
    if p.name in launch.params:
        v = launch.params[p.name]
        if t.kind is Kind.FLOAT:
            return Value.const(float_bits(float(v), t.bits)) if t.bits in (32, 64) \
                else Value.of_set(SI.full(t.bits), uniform=True)
        return Value.const(wrap_int(int(v), t.bits, t.is_signed))
    m = launch.multiples.get(p.name)
    if m is not None and t.kind is not Kind.FLOAT:
        return Value.of_set(SI.full(t.bits, t.is_signed).meet(SI.congruent(0, m)),
                            uniform=True)
    if _is_pointer(p, launch, module):
        return Value.pointer(Region(p.ptr_space or "global", p.name, generic=True))
    return Value.of_set(SI.full(t.bits, t.is_signed), uniform=True)


def _is_pointer(p: Param, launch: LaunchConfig, module: Module) -> bool:
    if "ptr" in p.attributes or p.ptr_space is not None or p.name in launch.extents:
        return True
    return (module.address_size == 64 and p.type.bits == 64
            and p.type.kind in (Kind.BITS, Kind.UNSIGNED, Kind.SIGNED))


def block_or_limits(function: Function, launch: LaunchConfig | None = None) -> BlockLimits:
    return (launch or LaunchConfig()).block_or_limits(function)


def thread_bounds(function: Function, launch: LaunchConfig | None = None) -> ThreadBounds:
    return (launch or LaunchConfig()).thread_bounds(function)


_SPECIALS: "weakref.WeakKeyDictionary[Module, frozenset[str]]" = weakref.WeakKeyDictionary()


def _specials_read(module: Module) -> set[str] | frozenset[str]:
    """Special registers read anywhere in the module: a callee's entry state copies
    the caller's, so a kernel carries those its callees read too."""
    if module.special_registers is not None:  # the parser's record
        return module.special_registers
    hit = _SPECIALS.get(module)
    if hit is None:
        hit = frozenset(key for f in module.functions for insn in f.instructions
                        for key in insn.use_keys if is_special_register(key))
        _SPECIALS[module] = hit
    return hit


def _uniform(lo: int, hi: int) -> Value:
    return Value.of_set(SI.range(lo, hi), uniform=True)


def _lanemasks(name: str, lanes: range) -> SI:
    full = (1 << 32) - 1
    below = {"eq": lambda l: 1 << l, "lt": lambda l: (1 << l) - 1,
             "le": lambda l: (2 << l) - 1, "ge": lambda l: full & ~((1 << l) - 1),
             "gt": lambda l: full & ~((2 << l) - 1)}[name.removeprefix("%lanemask_")]
    return SI.hull(below(l) for l in lanes)


def _warp_uniform_axis(dims: tuple[int, int, int], axis: int) -> bool:
    """Whether tid.y (axis 1) or tid.z (axis 2) is constant within every warp: the
    threads below that axis fill whole warps (warp model: linear thread ids)."""
    below = dims[0] if axis == 1 else dims[0] * dims[1]
    return below % WARP_SIZE == 0


def special_value(name: str, function: Function, launch: LaunchConfig, lim: BlockLimits,
                  bounds: ThreadBounds) -> Value:
    """The value of special register `name` (`%tid.x`) at kernel entry."""
    base, _, axis = name.partition(".")
    i = AXES.index(axis) if axis in AXES else 0
    grid = launch.grid
    cluster = function.directives.get("reqnctapercluster")
    if base in ("%tid", "%laneid"):
        index = name[1:] if axis in AXES else "laneid" if base == "%laneid" else None
        if index in ("tid.y", "tid.z") and (lim.exact and _warp_uniform_axis(lim.dims, i)
                                            or not lim.exact and launch.warps_in_rows):
            # every warp lies within one row (one plane): the index is the same in all
            # its lanes, so it is a uniform value rather than a lane coefficient
            return Value.of_set(bounds.of(index), uniform=True)
        return Value.of_affine(Affine.var(index), bounds) if index else TOP
    if base == "%ntid":
        return Value.const(lim.dims[i]) if lim.exact else _uniform(1, lim.dims[i])
    if base == "%ctaid":
        return _uniform(0, (grid[i] if grid else MAX_GRID[i]) - 1)
    if base == "%nctaid":
        return Value.const(grid[i]) if grid else _uniform(1, MAX_GRID[i])
    if base.startswith("%lanemask_"):
        return Value.of_set(_lanemasks(base, range(bounds.laneid.hi + 1)))
    if base == "%cluster_nctaid":
        return Value.const(_dims(cluster)[i]) if cluster else _uniform(1, MAX_CLUSTER)
    if base == "%cluster_nctarank":
        return Value.const(_prod(cluster)) if cluster else _uniform(1, MAX_CLUSTER)
    if base in ("%cluster_ctaid", "%cluster_ctarank"):
        return _uniform(0, MAX_CLUSTER - 1)
    if base == "%is_explicit_cluster":
        explicit = cluster or "explicitcluster" in function.directives
        return Value.const(1) if explicit else _uniform(0, 1)
    if base == "%dynamic_smem_size" and launch.dynamic_smem is not None:
        return Value.const(launch.dynamic_smem)
    if base.startswith(("%clock", "%globaltimer", "%pm")):
        return TOP  # differs between lanes and between reads
    if base in ("%gridid", "%current_graph_exec"):
        return Value.of_set(SI.full(64), uniform=True)
    # %warpid %nwarpid %smid %nsmid %clusterid %nclusterid %envregN and the shared
    # memory sizes: one value for the whole warp, range unknown
    return Value.of_set(SI.full(32), uniform=True)


__all__ = ["LaunchConfig", "BlockLimits", "parse_dims", "initial_state", "param_value",
           "block_or_limits", "thread_bounds",
           "special_value", "WARP_SIZE", "MAX_THREADS", "MAX_BLOCK", "MAX_GRID"]
