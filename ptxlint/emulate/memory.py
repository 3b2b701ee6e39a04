"""Memory of one chunk of blocks: vectorised address resolution, loads and stores.

Every access is first *located*: each lane's address is mapped to a byte offset in a flat
uint8 storage (a caller's buffer, a variable, the per-block shared storage or the
per-thread stacks) or found outside every object. Lanes outside are reported to the
observer as out-of-bounds and never touch storage: a load gives them zero, a store and
an atomic skip them. So a wild pointer can neither corrupt another buffer nor crash the
emulator.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .frames import Frames
from .layout import (
    CONST,
    FRAME_PARAM,
    GLOBAL,
    LOCAL,
    PARAM,
    SHARED,
    SPACE_WINDOW,
    WINDOW_BITS,
    WINDOW_NAMES,
    window_base,
)

_LOW = np.uint64((1 << WINDOW_BITS) - 1)


@dataclass
class Region:
    """One object of a uniform space: `data` is its storage (shared by all threads)."""

    name: str
    start: int
    size: int
    data: np.ndarray  # flat uint8, at least `size` bytes


@dataclass
class Hit:
    """Lanes `pos` (None: all of them) of an access found in `flat` at byte `off`."""

    flat: np.ndarray
    pos: np.ndarray | None
    off: np.ndarray
    name: str = ""


class UniformSpace:
    """Objects shared by every thread, sorted by address (global, const)."""

    def __init__(self, regions: list[Region]):
        self.regions = sorted(regions, key=lambda r: r.start)
        self.starts = np.array([r.start for r in self.regions], np.uint64)
        self.ends = np.array([r.start + r.size for r in self.regions], np.uint64)

    def locate(self, addr: np.ndarray, nbytes: int) -> tuple[list[Hit], np.ndarray]:
        if not self.regions:
            return [], np.ones(len(addr), bool)
        i = np.searchsorted(self.starts, addr, side="right").astype(np.int64) - 1
        ic = np.maximum(i, 0)
        ok = (i >= 0) & (addr <= _LOW) & (addr + np.uint64(nbytes) <= self.ends[ic])
        bad = ~ok
        if not ok.any():
            return [], bad
        hits = []
        first = int(ic[int(np.argmax(ok))])
        if ok.all() and (len(self.regions) == 1 or (ic == first).all()):
            r = self.regions[first]
            return [Hit(r.data, None, (addr - np.uint64(r.start)).astype(np.int64), r.name)], bad
        for k in np.unique(ic[ok]):
            pos = np.flatnonzero(ok & (ic == k))
            r = self.regions[int(k)]
            hits.append(Hit(r.data, pos, (addr[pos] - np.uint64(r.start)).astype(np.int64), r.name))
        return hits, bad

    def name_near(self, address: int) -> str | None:
        """The object an address is in or closest below (for reports)."""
        i = int(np.searchsorted(self.starts, np.uint64(address), side="right")) - 1
        return self.regions[i].name if i >= 0 else (self.regions[0].name if self.regions else None)


class Memory:
    """Global buffers and variables, constants, kernel parameters, per-block shared
    memory and per-thread stacks of one chunk of `n` threads in `nb` blocks."""

    def __init__(self, globals_: list[Region], consts: list[Region], params: np.ndarray,
                 shared_vars: list[tuple[str, int, int]], shared_size: int, nb: int,
                 block_of: np.ndarray, frames: Frames):
        self.global_space = UniformSpace(globals_)
        self.const_space = UniformSpace(consts)
        self.params = params
        self.param_space = UniformSpace([Region("kernel parameters", 0, len(params), params)])
        self.shared_size = shared_size
        self.shared = np.zeros(nb * shared_size, np.uint8)
        self.shared_vars = sorted(shared_vars, key=lambda v: v[1])
        self.shared_starts = np.array([v[1] for v in self.shared_vars], np.uint64)
        self.shared_ends = np.array([v[1] + v[2] for v in self.shared_vars], np.uint64)
        self.block_of = block_of
        self.frames = frames

    # ---- locating ---------------------------------------------------------------------------------
    def locate(self, space: str, addr: np.ndarray, threads: np.ndarray,
               nbytes: int) -> tuple[list[Hit], np.ndarray, list[tuple[str, np.ndarray]]]:
        """Hits, the mask of lanes found nowhere, and the space each lane was looked up
        in (generic addresses are split by window)."""
        addr = np.asarray(addr, np.uint64)
        if space != "generic":
            hits, bad = self._locate_in(SPACE_WINDOW[space], addr, threads, nbytes)
            return hits, bad, [(space, np.arange(len(addr)))]
        window = (addr >> np.uint64(WINDOW_BITS)).astype(np.int64)
        w0 = int(window[0]) if len(window) else 0
        if (window == w0).all():
            if w0 >= len(WINDOW_NAMES) or w0 == 5:
                return [], np.ones(len(addr), bool), [("generic", np.arange(len(addr)))]
            local = addr - np.uint64(window_base(w0)) if w0 else addr
            hits, bad = self._locate_in(w0, local, threads, nbytes)
            return hits, bad, [(WINDOW_NAMES[w0], np.arange(len(addr)))]
        hits, bad, spaces = [], np.ones(len(addr), bool), []
        for w in np.unique(window):
            pos = np.flatnonzero(window == w)
            spaces.append((WINDOW_NAMES[w] if w < 5 else "generic", pos))
            if w >= 5:
                continue
            sub = addr[pos] - np.uint64(window_base(int(w)))
            sub_hits, sub_bad = self._locate_in(int(w), sub, threads[pos], nbytes)
            bad[pos] = sub_bad
            for h in sub_hits:
                hits.append(Hit(h.flat, pos if h.pos is None else pos[h.pos], h.off, h.name))
        return hits, bad, spaces

    def _locate_in(self, window: int, addr, threads, nbytes) -> tuple[list[Hit], np.ndarray]:
        if window == GLOBAL:
            return self.global_space.locate(addr, nbytes)
        if window == CONST:
            return self.const_space.locate(addr, nbytes)
        if window == SHARED:
            return self._shared(addr, threads, nbytes)
        if window == LOCAL:
            return self._local(addr, threads, nbytes)
        if window == PARAM:
            frame = addr >= np.uint64(FRAME_PARAM)
            if not frame.any():
                return self.param_space.locate(addr, nbytes)
            if frame.all():
                return self._local(addr - np.uint64(FRAME_PARAM), threads, nbytes)
            hits, bad = [], np.ones(len(addr), bool)
            for sel in (~frame, frame):  # kernel parameters and frame cells mixed
                pos = np.flatnonzero(sel)
                if sel is frame:
                    sub_hits, sub_bad = self._local(addr[pos] - np.uint64(FRAME_PARAM),
                                                    threads[pos], nbytes)
                else:
                    sub_hits, sub_bad = self.param_space.locate(addr[pos], nbytes)
                bad[pos] = sub_bad
                hits += [Hit(h.flat, pos if h.pos is None else pos[h.pos], h.off, h.name)
                         for h in sub_hits]
            return hits, bad
        return [], np.ones(len(addr), bool)

    def _shared(self, addr, threads, nbytes):
        if not self.shared_vars:
            return [], np.ones(len(addr), bool)
        i = np.searchsorted(self.shared_starts, addr, side="right").astype(np.int64) - 1
        ic = np.maximum(i, 0)
        ok = (i >= 0) & (addr + np.uint64(nbytes) <= self.shared_ends[ic]) & (addr <= _LOW)
        bad = ~ok
        off = self.block_of[threads] * self.shared_size + addr.astype(np.int64)
        if ok.all():
            return [Hit(self.shared, None, off, "shared")], bad
        pos = np.flatnonzero(ok)
        return ([Hit(self.shared, pos, off[pos], "shared")] if len(pos) else []), bad

    def _local(self, addr, threads, nbytes):
        f = self.frames
        a = addr.astype(np.int64)
        inside = (addr <= np.uint64(f.cap - nbytes)) if f.cap >= nbytes else np.zeros(len(a), bool)
        off = threads.astype(np.int64) * f.cap + np.where(inside, a, 0)
        ok = inside & f.shadow[off] & f.shadow[off + (nbytes - 1)]
        bad = ~ok
        if ok.all():
            return [Hit(f.stack, None, off, "local")], bad
        pos = np.flatnonzero(ok)
        return ([Hit(f.stack, pos, off[pos], "local")] if len(pos) else []), bad

    def shared_name_near(self, address: int) -> str | None:
        i = int(np.searchsorted(self.shared_starts, np.uint64(address), side="right")) - 1
        if not self.shared_vars:
            return None
        return self.shared_vars[max(i, 0)][0]

    def name_near(self, space: str, address: int) -> str | None:
        if space == "generic":
            w = address >> WINDOW_BITS
            if w >= 5:
                return None
            space, address = WINDOW_NAMES[w], address - window_base(w)
        if space == "global":
            return self.global_space.name_near(address)
        if space == "const":
            return self.const_space.name_near(address)
        if space == "shared":
            return self.shared_name_near(address)
        return space


def gather(flat: np.ndarray, off: np.ndarray, dtype: np.dtype, count: int) -> list[np.ndarray] | None:
    """Elements `off + j*size` (j < count) of `flat` as `dtype`; None when some offset is
    not a multiple of the element size (the caller goes byte by byte)."""
    w = dtype.itemsize
    if w > 1 and (off & (w - 1)).any():
        return None
    view = flat[: len(flat) // w * w].view(dtype)
    base = off // w if w > 1 else off
    return [view[base + j] for j in range(count)]


def gather_bytes(flat: np.ndarray, off: np.ndarray, dtype: np.dtype, count: int) -> list[np.ndarray]:
    w = dtype.itemsize
    out = []
    for j in range(count):
        cols = off[:, None] + (j * w + np.arange(w))[None, :]
        out.append(np.ascontiguousarray(flat[cols]).view(dtype).reshape(-1))
    return out


def scatter(flat: np.ndarray, off: np.ndarray, values: list[np.ndarray], dtype: np.dtype) -> bool:
    w = dtype.itemsize
    if w > 1 and (off & (w - 1)).any():
        return False
    view = flat[: len(flat) // w * w].view(dtype)
    base = off // w if w > 1 else off
    for j, v in enumerate(values):
        view[base + j] = v
    return True


def scatter_bytes(flat: np.ndarray, off: np.ndarray, values: list[np.ndarray], dtype: np.dtype) -> None:
    w = dtype.itemsize
    for j, v in enumerate(values):
        raw = np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype), off.shape)).view(np.uint8)
        cols = off[:, None] + (j * w + np.arange(w))[None, :]
        flat[cols.reshape(-1)] = raw.reshape(-1)
