"""Small vector helpers shared by the executors.

`select` is a branch-free `np.where` for register-sized values: numpy's `where` with an
unpredictable condition costs several nanoseconds per element (branch mispredictions),
the bitwise blend `y ^ ((x ^ y) & mask)` a fraction of that.
"""
from __future__ import annotations

import numpy as np

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def select(cond, x, y, raw: bool = False):
    """`cond ? x : y` elementwise; `x` and `y` share a dtype (scalars broadcast). With
    `raw` the result is the fresh unsigned array of the same bits (what register writes
    can keep without copying)."""
    if np.ndim(cond) == 0:
        return x if cond else y
    x, y = np.asarray(x), np.asarray(y)
    dt = np.result_type(x, y)
    if dt.kind == "b" or dt.itemsize not in _UINT:
        return np.where(cond, x, y)
    u = _UINT[dt.itemsize]
    xv, yv = x.astype(dt, copy=False).view(u), y.astype(dt, copy=False).view(u)
    mask = -(np.asarray(cond).view(np.uint8).astype(u))
    out = yv ^ ((xv ^ yv) & mask)
    return out if raw else out.view(dt)


def full(v, n: int) -> np.ndarray:
    """`v` as an array of `n` elements (a scalar broadcast, an array kept)."""
    return v if np.ndim(v) else np.full(n, v)


def take(a: np.ndarray, idx: np.ndarray | None) -> np.ndarray:
    return a if idx is None else a[idx]
