"""`run_kernel`: the one entry point of the emulator.

    out = np.zeros(n, np.float32)
    res = run_kernel(ptx_text, "vector_add", grid=64, block=256,
                     args={"vector_add_param_0": a, 1: b, 2: out, 3: n})
    res.outputs[2] is out            # written in place
    res.observations.count("out-of-bounds")

Arguments are matched to kernel parameters by name or 0-based index. A numpy array is a
global buffer: it is mapped at a fake global address, which the parameter receives, and
the kernel reads and writes the array itself. Ints and floats are encoded with the
parameter's type; `bytes` fill a parameter byte for byte (structs passed by value).

Large grids run in chunks of whole blocks (`chunk_threads` threads at most, fewer when
the memory limit asks for it, one after another: blocks only share global memory, so
this is a legal schedule).
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field

import numpy as np

from ..ir.build import parse_module
from ..ir.module import Module
from ..ir.types import Kind
from .errors import EmulationError
from .layout import GLOBAL_GAP, align_up
from .limits import MAX_MEMORY, MAX_STEPS, THREAD_OVERHEAD, Budget, blocks_per_chunk, \
    check_launch, stack_row
from .machine import Machine
from .memory import Memory, Region
from .observe import Observations
from .program import Program
from .recorder import Recorder
from .simt import Scheduler

Dims = tuple[int, int, int]


@dataclass
class RunResult:
    outputs: dict[str | int, np.ndarray]  # the caller's arrays, by the key they were given
    observations: Observations
    thread_instructions: int
    seconds: float
    globals: dict[str, np.ndarray] = field(default_factory=dict)  # module variables' bytes
    buffers: dict[str | int, int] = field(default_factory=dict)  # argument key -> address
    # watched pc -> space -> (lowest, highest) address its lanes used there (shared: the
    # offset in the block's window); no entry for a space it never reached
    extents: dict[int, dict[str, tuple[int, int]]] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        """Thread-instructions per second."""
        return self.thread_instructions / self.seconds if self.seconds > 0 else 0.0


def _dims(d) -> Dims:
    t = (d,) if isinstance(d, int) else tuple(int(x) for x in d)
    return (t + (1, 1, 1))[:3]  # type: ignore[return-value]


def load_module(module_or_ptx: Module | str) -> Module:
    if isinstance(module_or_ptx, Module):
        return module_or_ptx
    parsed = parse_module(module_or_ptx, "<ptx>")
    errors = [d for d in parsed.diagnostics if d.severity.name == "ERROR"]
    if errors:
        e = errors[0]
        where = f"{e.span.line}:{e.span.col}: " if e.span else ""
        raise EmulationError(f"the PTX does not parse: {where}{e.message}")
    return parsed.module


def _arg_value(args: dict, name: str, index: int):
    if name in args:
        return args[name]
    if index in args:
        return args[index]
    raise EmulationError(f"no argument for kernel parameter {index} ('{name}')")


def _encode(value, p) -> bytes:
    size = p.byte_size or 0
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).ljust(size, b"\0")[:size]
    t = p.type
    if t.kind is Kind.FLOAT and p.dims == ():
        return struct.pack("<d" if t.bits == 64 else "<f", float(value))[:size]
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise EmulationError(f"parameter '{p.name}' is {t}, got the float {value}")
    return (int(value) % (1 << (8 * max(size, 1)))).to_bytes(max(size, 1), "little")[:size]


def run_kernel(module_or_ptx: Module | str, kernel: str, grid, block, args: dict | None = None,
               dynamic_smem: int = 0, observe: bool = True, trace: bool = False,
               max_steps: int = MAX_STEPS, chunk_threads: int = 65536,
               probe=None, watch=(), time_limit: float | None = None,
               max_memory: int | None = MAX_MEMORY, hazards: bool = False) -> RunResult:
    """Run `kernel` over `grid` x `block` threads (ints or 1-3 tuples, within the
    hardware's limits); see the module docstring for `args`. `observe=False` keeps only
    the events (no per-access statistics); `trace=True` also records every warp
    request. `max_steps` steps and `time_limit` seconds for the whole launch, and
    `max_memory` bytes of emulated memory (None: no limit) bound the run: past one,
    `limits.LimitExceeded` (see `limits.py` for what they count). `probe`, when given,
    is called as `probe(machine, pc)` before every step, the step's threads in
    `machine.active()` (differential testing reads registers there); `watch`: pcs whose
    lowest and highest address the result's `extents` gives. `hazards=True` also observes
    undefined register reads, shared and local bytes read before written, and global
    races (`hazards.py`: events `uninitialized-*` and `global-race`)."""
    started = time.perf_counter()
    budget = Budget(max_steps, time_limit)
    grid, block = _dims(grid), _dims(block)
    check_launch(grid, block)
    if dynamic_smem < 0:
        raise EmulationError(f"dynamic shared memory of {dynamic_smem} bytes: it must not be "
                             "negative")
    program = Program(load_module(module_or_ptx), kernel)
    tpb = block[0] * block[1] * block[2]
    n_blocks = grid[0] * grid[1] * grid[2]
    per_chunk = _chunk(program, tpb, n_blocks, dynamic_smem, chunk_threads, max_memory)
    mem = _Launch(program, dict(args or {}), dynamic_smem)
    recorder = Recorder(program, observe=observe, trace=trace)
    recorder.extents = {pc: {} for pc in watch}
    if hazards:
        from .hazards import Hazards  # noqa: PLC0415

        recorder.hazards = watcher = Hazards(program, recorder)
        probe = watcher.step if probe is None else _both(watcher.step, probe)
    total = 0
    with np.errstate(all="ignore"):
        for first in range(0, n_blocks, per_chunk):
            budget.blocks = (first, n_blocks)
            budget.check()  # a grid of 2^31 blocks ends on the clock, between chunks too
            total += _run_chunk(program, grid, block, first, min(per_chunk, n_blocks - first),
                                dynamic_smem, max_memory, mem, recorder, budget, probe)
    mem.finish()
    return RunResult(mem.outputs, recorder.obs, total, time.perf_counter() - started,
                     {r.name: r.data[: r.size] for r in mem.regions if r.name in program.layout.globals},
                     mem.buffers, {pc: {space: tuple(span) for space, span in spans.items()}
                                  for pc, spans in recorder.extents.items()})


def _run_chunk(program: Program, grid: Dims, block: Dims, first: int, n_blocks: int,
               dynamic_smem: int, max_memory: int | None, mem: _Launch, recorder: Recorder,
               budget: Budget, probe) -> int:
    """Run `n_blocks` blocks from `first`; their thread-instructions. The chunk's memory
    is freed on return (the chunk after it may need as much)."""
    m = Machine(program, grid, block, first, n_blocks, dynamic_smem, max_memory)
    m.frames.push_entry(program.infos[program.kernel.name].frame)
    m.attach(mem.memory(m), recorder)
    if recorder.hazards is not None:
        recorder.hazards.start(m)
    sched = Scheduler(m, program, budget, probe)
    try:
        sched.run()
    finally:
        m.scheduler = None  # the one reference cycle: freed now, not at a collection
    return sched.thread_instructions


def _both(first, second):
    def probe(m, pc: int) -> None:
        first(m, pc)
        second(m, pc)
    return probe


def _chunk(program: Program, tpb: int, n_blocks: int, dynamic_smem: int, chunk_threads: int,
           max_memory: int | None) -> int:
    """Blocks per chunk, checked against `max_memory` before anything is allocated."""
    lay = program.layout
    frame = program.infos[program.kernel.name].frame
    registers = sum(dt.itemsize for dt in program.register_dtypes.values())
    return blocks_per_chunk(
        fixed=sum(p.size for p in [*lay.globals.values(), *lay.consts.values()]),
        per_block=_shared_size(program, dynamic_smem),
        per_thread=registers + 2 * stack_row(frame.size if frame else 0) + THREAD_OVERHEAD,
        tpb=tpb, n_blocks=n_blocks, chunk_threads=chunk_threads, max_memory=max_memory)


def _shared_size(program: Program, dynamic_smem: int) -> int:
    """The bytes of one block's shared memory window."""
    return align_up(max(program.layout.static_shared + dynamic_smem, 16), 128)


class _Launch:
    """The memory a launch starts from: caller buffers at fake global addresses, module
    variables with their initialisers, the kernel parameter bytes."""

    def __init__(self, program: Program, args: dict, dynamic_smem: int):
        lay = program.layout
        self.program, self.dynamic_smem = program, dynamic_smem
        self.regions = [Region(p.var.name, p.address, p.size,
                               np.frombuffer(lay.initial_bytes(p), np.uint8).copy())
                        for p in lay.globals.values()]
        self.consts = [Region(p.var.name, p.address, p.size,
                              np.frombuffer(lay.initial_bytes(p), np.uint8).copy())
                       for p in lay.consts.values()]
        self.params = np.zeros(program.param_size, np.uint8)
        self.outputs: dict = {}
        self.buffers: dict = {}  # argument key -> the address its array is mapped at
        self.copies_back: list[tuple[np.ndarray, np.ndarray]] = []
        cursor = align_up(lay.global_end, 256)
        for i, p in enumerate(program.kernel.params):
            value = _arg_value(args, p.name, i)
            if isinstance(value, np.ndarray):
                key = p.name if p.name in args else i
                value, cursor = self._buffer(value, key, p.name, cursor)
            off, size = program.param_offsets[p.name]
            self.params[off:off + size] = np.frombuffer(_encode(value, p), np.uint8)
        self.shared_vars = [(p.var.name, p.address, p.size if p.size >= 0 else dynamic_smem)
                            for p in lay.shared.values()]
        self.shared_size = _shared_size(program, dynamic_smem)

    def _buffer(self, value: np.ndarray, key, name: str, cursor: int) -> tuple[int, int]:
        """Map a caller array at `cursor`; returns its address and the next free one."""
        arr = value
        if not (arr.flags.c_contiguous and arr.flags.writeable):
            arr = np.ascontiguousarray(arr).copy()
            self.copies_back.append((value, arr))
        flat = arr.reshape(-1).view(np.uint8)
        self.regions.append(Region(f"{name} (argument {key})", cursor, flat.size, flat))
        self.outputs[key] = value
        self.buffers[key] = cursor
        return cursor, align_up(cursor + flat.size + GLOBAL_GAP, 256)

    def memory(self, m: Machine) -> Memory:
        return Memory(self.regions, self.consts, self.params, self.shared_vars,
                      self.shared_size, m.n_blocks, m.block_of, m.frames)

    def finish(self) -> None:
        for original, copy in self.copies_back:
            original[...] = copy
