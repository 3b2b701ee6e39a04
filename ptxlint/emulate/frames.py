"""Per-thread stacks: local memory frames and the call stack.

Each thread owns a row of `cap` bytes (grown on demand); a function activation occupies
`[fp, fp + frame.size)` of it. A byte-wise *shadow* marks the bytes that belong to a live
variable, so an access to a gap between variables, past the last frame or into a frame
that has returned is reported as out of bounds. The call stack holds, per thread and
depth, the return pc and the caller's frame pointer; recursive functions also save their
registers there (see `simt.py`).
"""
from __future__ import annotations

import numpy as np

from .layout import FrameLayout
from .limits import STACK_ROW, LimitExceeded


class Frames:
    def __init__(self, n: int, cap: int = STACK_ROW, max_bytes: int | None = None):
        self.n = n
        self.cap = cap
        self.max_bytes = max_bytes  # for the stack and its shadow together (deep recursion)
        self.stack = np.zeros(n * cap, np.uint8)
        self.shadow = np.zeros(n * cap, np.bool_)
        self.fp = np.zeros(n, np.int64)
        self.sp = np.zeros(n, np.int64)
        self.depth = np.zeros(n, np.int32)
        self.ret_pc = np.zeros((4, n), np.int64)
        self.saved_fp = np.zeros((4, n), np.int64)
        self.saved_regs: dict[str, np.ndarray] = {}  # register key -> [depth, n]

    # ---- storage ------------------------------------------------------------------------------
    def ensure(self, top: int) -> None:
        """Make every row at least `top` bytes long."""
        if top <= self.cap:
            return
        cap = self.cap
        while cap < top:
            cap *= 2
        if self.max_bytes is not None and 2 * self.n * cap > self.max_bytes:
            raise LimitExceeded(f"the threads' stacks would need {2 * self.n * cap} bytes, over "
                                f"the memory limit of {self.max_bytes} (deep recursion?)",
                                "memory")
        for name in ("stack", "shadow"):
            old = getattr(self, name).reshape(self.n, self.cap)
            new = np.zeros((self.n, cap), old.dtype)
            new[:, : self.cap] = old
            setattr(self, name, new.reshape(-1))
        self.cap = cap

    def _rows(self, name: str, threads: np.ndarray, base: np.ndarray, start: int, size: int):
        """Assign to `[base + start, base + start + size)` of the threads' rows: a slice
        when the bases agree (a kernel's frame, calls at one depth), else an index array
        of 8 bytes per byte."""
        view = getattr(self, name).reshape(self.n, self.cap)
        if len(base) and (base == base[0]).all():
            b = int(base[0]) + start
            return view, (threads, slice(b, b + size))
        return view, (threads[:, None], (base + start)[:, None] + np.arange(size))

    def _mark(self, threads: np.ndarray, base: np.ndarray, frame: FrameLayout, valid: bool) -> None:
        for off, size, _space in frame.offsets.values():
            if size:
                view, at = self._rows("shadow", threads, base, off, size)
                view[at] = valid

    def push_entry(self, frame: FrameLayout) -> None:
        """The kernel's own frame at the bottom of every stack."""
        self.ensure(frame.size)
        self.sp[:] = frame.size
        self._mark(np.arange(self.n), np.zeros(self.n, np.int64), frame, True)

    def push(self, threads: np.ndarray, frame: FrameLayout, return_pc: np.ndarray | int) -> None:
        """Open `frame` for `threads` (a call); the caller's fp goes on the call stack."""
        base = self.sp[threads]
        self.ensure(int(base.max()) + frame.size)
        d = self.depth[threads]
        if int(d.max()) + 1 >= self.ret_pc.shape[0]:
            grow = self.ret_pc.shape[0] * 2
            for name in ("ret_pc", "saved_fp"):
                old = getattr(self, name)
                new = np.zeros((grow, self.n), old.dtype)
                new[: old.shape[0]] = old
                setattr(self, name, new)
        self.ret_pc[d, threads] = return_pc
        self.saved_fp[d, threads] = self.fp[threads]
        self.depth[threads] = d + 1
        self.fp[threads] = base
        self.sp[threads] = base + frame.size
        self._mark(threads, base, frame, True)
        view, at = self._rows("stack", threads, base, 0, frame.size)
        view[at] = 0

    def pop(self, threads: np.ndarray, frame: FrameLayout) -> np.ndarray:
        """Close the top frame of `threads`; returns their return pcs."""
        self._mark(threads, self.fp[threads], frame, False)
        d = self.depth[threads] - 1
        self.depth[threads] = d
        self.sp[threads] = self.fp[threads]
        self.fp[threads] = self.saved_fp[d, threads]
        return self.ret_pc[d, threads]

    def copy_from(self, threads: np.ndarray, src: np.ndarray, dst: np.ndarray, size: int) -> None:
        """Copy `size` bytes from row offset `src` to `dst` in each thread's row (call
        arguments, return values)."""
        if size <= 0 or not len(threads):
            return
        rows = threads.astype(np.int64) * self.cap
        span = np.arange(size)
        self.stack[(rows + dst)[:, None] + span] = self.stack[(rows + src)[:, None] + span]

    def write_bytes(self, threads: np.ndarray, dst: np.ndarray, data: np.ndarray) -> None:
        """Write `data[i]` (a row of bytes) at row offset `dst[i]` of thread `threads[i]`."""
        rows = threads.astype(np.int64) * self.cap
        self.stack[(rows + dst)[:, None] + np.arange(data.shape[1])] = data

    # ---- recursion ----------------------------------------------------------------------------
    def save_registers(self, threads: np.ndarray, regs: dict[str, np.ndarray], keys) -> None:
        d = self.depth[threads]  # already incremented by push: slot d - 1 is this call
        for key in keys:
            arr = regs[key]
            saved = self.saved_regs.get(key)
            if saved is None or saved.shape[0] < self.ret_pc.shape[0] or saved.dtype != arr.dtype:
                new = np.zeros((self.ret_pc.shape[0], self.n), arr.dtype)
                if saved is not None and saved.dtype == arr.dtype:
                    new[: saved.shape[0]] = saved
                self.saved_regs[key] = saved = new
            saved[d - 1, threads] = arr[threads]

    def restore_registers(self, threads: np.ndarray, regs: dict[str, np.ndarray], keys) -> None:
        d = self.depth[threads]  # already decremented by pop: slot d is the call returning
        for key in keys:
            saved = self.saved_regs.get(key)
            if saved is not None:
                regs[key][threads] = saved[d, threads]
