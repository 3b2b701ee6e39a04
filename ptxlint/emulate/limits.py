"""What one launch may ask of the emulator: the hardware's launch limits, a budget of
steps and seconds for the whole launch (every chunk of blocks together), and the memory
its chunks may allocate.

A *step* is one instruction run by one group of threads at one position: converged
threads run together, up to a whole chunk of blocks, so a step costs about the same
whatever the number of threads in it, and the step count is what bounds the time of a
run. Memory is estimated before anything is allocated: module variables once, then per
chunk the shared memory of its blocks and, per thread, its registers (only those the
instructions use), its stack rows and a fixed overhead. A chunk holds as many blocks
as the memory limit allows; a launch of which not even one block fits is refused.
"""
from __future__ import annotations

import time

from ..launch import MAX_BLOCK, MAX_GRID, MAX_THREADS
from .errors import EmulationError

MAX_STEPS = 20_000_000
MAX_MEMORY = 4 << 30
# per thread, besides registers and stack: launch indices, masks, barrier state and the
# temporaries one instruction makes (a few arrays of 8 bytes per thread)
THREAD_OVERHEAD = 1024
STACK_ROW = 256  # the first size of a thread's stack row; it doubles when a frame needs it


class LimitExceeded(EmulationError):
    """A launch over one of its limits; `limit` says which: "steps", "time", "memory"."""

    def __init__(self, message: str, limit: str, span=None):
        super().__init__(message, span)
        self.limit = limit


def check_launch(grid: tuple[int, int, int], block: tuple[int, int, int]) -> None:
    """Refuse a launch shape the hardware refuses."""
    for what, dims, limits in (("grid", grid, MAX_GRID), ("block", block, MAX_BLOCK)):
        for axis, n, hi in zip("xyz", dims, limits):
            if not 1 <= n <= hi:
                raise EmulationError(f"{what}.{axis} = {n} is outside 1..{hi}, the "
                                     "hardware's limit")
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS:
        raise EmulationError(f"a block of {threads} threads exceeds the hardware's limit "
                             f"of {MAX_THREADS}")


class Budget:
    """Steps and seconds left to a launch. The scheduler counts `steps` and calls `check`
    once past `next_check`, so the clock is read only every CLOCK_EVERY steps (a step
    takes microseconds)."""

    CLOCK_EVERY = 256

    def __init__(self, max_steps: int = MAX_STEPS, time_limit: float | None = None):
        self.max_steps = max_steps
        self.time_limit = time_limit
        self.deadline = None if time_limit is None else time.perf_counter() + time_limit
        self.steps = 0
        self.blocks = (0, 0)  # blocks done, of how many (for messages)
        self.next_check = min(max_steps, self.CLOCK_EVERY)

    def check(self, span=None) -> None:
        done, of = self.blocks
        progress = f"{done} of {of} blocks done" if of > 1 else ""
        if self.steps > self.max_steps:
            raise LimitExceeded(f"step limit of {self.max_steps} exceeded: the kernel may not "
                                f"terminate, or the launch is too large{_also(progress)}",
                                "steps", span)
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise LimitExceeded(f"time limit of {self.time_limit:g} s exceeded after "
                                f"{self.steps} steps{_also(progress)}", "time", span)
        self.next_check = min(self.max_steps, self.steps + self.CLOCK_EVERY)


def _also(progress: str) -> str:
    return f" ({progress})" if progress else ""


def stack_row(frame_size: int) -> int:
    """The stack row a thread starts with (`Frames.ensure` doubles from STACK_ROW)."""
    row = STACK_ROW
    while row < frame_size:
        row *= 2
    return row


def blocks_per_chunk(*, fixed: int, per_block: int, per_thread: int, tpb: int,
                     n_blocks: int, chunk_threads: int, max_memory: int | None) -> int:
    """How many blocks one chunk runs: `chunk_threads` threads' worth, fewer when the
    chunk's memory (`per_block` bytes per block, `per_thread` per thread, after `fixed`
    for the whole launch) would pass `max_memory`."""
    want = max(1, min(n_blocks, chunk_threads // tpb))
    if max_memory is None:
        return want
    block_bytes = per_block + tpb * per_thread
    if fixed > max_memory:
        raise LimitExceeded(f"the launch needs too much emulated memory: its module variables "
                            f"need {_size(fixed)}, over the limit of {_size(max_memory)}",
                            "memory")
    if fixed + block_bytes > max_memory:
        raise LimitExceeded(
            f"the launch needs too much emulated memory: one block of {tpb} threads needs "
            f"{_size(block_bytes)} ({_size(per_block)} of shared memory, {_size(per_thread)} "
            f"per thread for registers and stack), {_size(fixed)} of module variables "
            f"besides, over the limit of {_size(max_memory)}", "memory")
    return max(1, min(want, (max_memory - fixed) // block_bytes))


def _size(n: int) -> str:
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g} {unit}"
    return f"{n} bytes"
