"""The byte sets of two accesses, evaluated for every thread (`thread_pairs.Evaluated`),
compared across blocks and within one (numpy helpers of `global_races.py`).

Blocks are numbered by their coordinates (`linear`); the cheap tests compare spans of
bytes first (each block's warps, each block's threads), and `differ` finds two entries
on one key with different values (two blocks on one byte, two threads of one block)."""
from __future__ import annotations

from math import gcd

import numpy as np


def unit(ea, wa: int, eb, wb: int, gap: int) -> int:
    """The largest power of two up to 16 dividing both widths, the gap and every start:
    bytes compared in units of it."""
    u = 16
    for x in (wa, wb, gap):
        if x:
            u = gcd(u, x)
    for e in (ea, eb):
        if e.start.size:
            u = gcd(u, int(np.gcd.reduce(e.start % 16)))
    return u or 1


def same_starts(ea, wa: int, eb, wb: int) -> bool:
    """Two entries that overlap start at the same byte: one width, and any two distinct
    starts (of either access) at least that far apart. Only then do two stores of the
    same value write the same bytes."""
    if wa != wb:
        return False
    starts = np.unique(np.concatenate([ea.start, eb.start]))
    return bool(starts.size < 2 or np.diff(starts).min() >= wa)


def fill(b) -> tuple[int, int, int]:
    """Block coordinates with the free ones (-1) taken as 0."""
    return tuple(max(int(x), 0) for x in b)  # type: ignore[return-value]


def linear(blk: np.ndarray) -> np.ndarray:
    """Block coordinates (rows of 3) as one number (free coordinates as 0)."""
    b = np.maximum(blk, 0)
    return (b[:, 2] << 42) | (b[:, 1] << 21) | b[:, 0]


def _group_spans(keys: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """(key, min lo, max hi) per distinct key."""
    order = np.argsort(keys, kind="stable")
    k, a, b = keys[order], lo[order], hi[order]
    first = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
    return k[first], np.minimum.reduceat(a, first), np.maximum.reduceat(b, first)


def spans_meet(ea, wa: int, eb, wb: int) -> bool:
    """The two accesses' whole spans of bytes overlap."""
    if not ea.start.size or not eb.start.size:
        return False
    return int(ea.start.min()) < int(eb.start.max()) + wb and \
        int(eb.start.min()) < int(ea.start.max()) + wa


def group_spans(keys: np.ndarray, e, w: int):
    """One access's span of bytes per group (`keys`: a group per entry of `e`), as
    (group, lo, hi) sorted by group: made once per access, and merged per pair
    (`_merged`) rather than grouping both accesses' entries again."""
    if not keys.size:
        return keys, e.start, e.start
    return _group_spans(keys, e.start, e.start + w)


def warp_groups(blocks: np.ndarray, e) -> np.ndarray:
    """Per entry, its block's warp (`blocks_meet`)."""
    return blocks * np.int64(64) + e.thread // 32


def thread_groups(blocks: np.ndarray, e) -> np.ndarray:
    """Per entry, its block's thread (`threads_meet`)."""
    return blocks * np.int64(1 << 11) + e.thread


def _merged(a, b):
    """(group, lo, hi) of two accesses together, from each one's `group_spans`."""
    if a[0].size == b[0].size and (a[0] == b[0]).all():  # the same groups: no sort
        return a[0], np.minimum(a[1], b[1]), np.maximum(a[2], b[2])
    return _group_spans(*(np.concatenate([x, y]) for x, y in zip(a, b)))


def blocks_meet(a, b) -> bool:
    """Bytes of two different blocks (over both accesses) may overlap: the spans of each
    block's warps, in address order, overlap somewhere (a transpose's blocks interleave,
    their warps' rows do not). `a`, `b`: each access's `group_spans` by `warp_groups`."""
    if not a[0].size or not b[0].size:
        return False
    _, lo, hi = _merged(a, b)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], np.maximum.accumulate(hi[order])
    return bool((hi[:-1] > lo[1:]).any())


def threads_meet(a, b) -> bool:
    """In some block, two threads' spans of bytes (over both accesses) overlap. `a`,
    `b`: each access's `group_spans` by `thread_groups`."""
    if not a[0].size or not b[0].size:
        return False
    key, lo, hi = _merged(a, b)
    blk = key >> 11
    same = blk[1:] == blk[:-1]
    if (same & (lo[1:] < lo[:-1])).any():  # in some block, thread order is not address order
        order = np.lexsort((lo, blk))
        blk, lo, hi = blk[order], lo[order], hi[order]
        same = blk[1:] == blk[:-1]
    return bool((same & (_segment_cummax(hi, blk)[:-1] > lo[1:])).any())


def _segment_cummax(values: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Cumulative maximum of `values` restarting where (sorted) `segments` changes: each
    segment lifted above the previous one, so one running maximum never crosses."""
    if not values.size:
        return values
    vmin = int(values.min())
    span = int(values.max()) - vmin + 1
    rank = np.cumsum(np.concatenate([[0], segments[1:] != segments[:-1]])).astype(np.int64)
    lifted = (values - vmin) + rank * span
    return np.maximum.accumulate(lifted) - rank * span + vmin


def group_keys(cols_a: list[np.ndarray],
               cols_b: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the columns as integers, equal exactly when the rows are (mixed radix
    over the columns' ranges; compacted with `np.unique` only when that overflows)."""
    key_a = np.zeros(cols_a[0].size, np.int64)
    key_b = np.zeros(cols_b[0].size, np.int64)
    room = 1
    for a, b in zip(cols_a, cols_b):
        lo = min(int(a.min()), int(b.min())) if a.size and b.size else 0
        span = (max(int(a.max()), int(b.max())) if a.size and b.size else 0) - lo + 1
        room *= span
        if room >= 1 << 62:
            both = np.stack([np.concatenate([x, y]) for x, y in zip(cols_a, cols_b)], axis=1)
            _, inv = np.unique(both, axis=0, return_inverse=True)
            inv = inv.reshape(-1)
            return inv[:cols_a[0].size], inv[cols_a[0].size:]
        key_a = key_a * span + (a - lo)
        key_b = key_b * span + (b - lo)
    return key_a, key_b


def mismatched(key_a: np.ndarray, val_a: np.ndarray, key_b: np.ndarray,
               val_b: np.ndarray) -> np.ndarray:
    """The indices p with some q such that key_a[p] == key_b[q] and val_a[p] != val_b[q]
    (the same byte in another thread: one sort of `b`, its value range per key)."""
    if not key_b.size:
        return np.flatnonzero(np.zeros(key_a.size, bool))
    order = np.argsort(key_b, kind="stable")
    sk, sv = key_b[order], val_b[order]
    first = np.flatnonzero(np.concatenate([[True], sk[1:] != sk[:-1]]))  # sorted: no `unique`
    uniq = sk[first]
    lo, hi = np.minimum.reduceat(sv, first), np.maximum.reduceat(sv, first)
    pos = np.minimum(np.searchsorted(uniq, key_a), len(uniq) - 1)
    return np.flatnonzero((uniq[pos] == key_a) & ((lo[pos] != val_a) | (hi[pos] != val_a)))


def differ(key_a: np.ndarray, val_a: np.ndarray, key_b: np.ndarray,
           val_b: np.ndarray) -> tuple[int, int] | None:
    """(p, q) with key_a[p] == key_b[q] and val_a[p] != val_b[q], or None."""
    found = mismatched(key_a, val_a, key_b, val_b)
    if not found.size:
        return None
    p = int(found[0])
    cand = np.flatnonzero((key_b == key_a[p]) & (val_b != val_a[p]))
    return p, int(cand[0])


__all__ = ["mismatched", "unit", "same_starts", "fill", "linear", "spans_meet", "blocks_meet",
           "threads_meet", "group_keys", "differ", "group_spans", "warp_groups", "thread_groups"]
