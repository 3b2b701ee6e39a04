"""`blocks_meet` and `threads_meet` merge each access's spans, grouped once per access,
instead of grouping both accesses' entries per pair, and `mismatched` finds the first of
each key in one pass: they answer as the definitions on the entries do."""
import numpy as np
import pytest

from ptxlint.threads.global_bytes import (_group_spans, _segment_cummax, blocks_meet,
                                          group_spans, mismatched, thread_groups,
                                          threads_meet, warp_groups)
from ptxlint.threads.thread_pairs import Evaluated


def blocks_meet_entries(ba, ea, wa, bb, eb, wb) -> bool:
    if not ea.start.size or not eb.start.size:
        return False
    groups = np.concatenate([ba * np.int64(64) + ea.thread // 32,
                             bb * np.int64(64) + eb.thread // 32])
    _, lo, hi = _group_spans(groups, np.concatenate([ea.start, eb.start]),
                             np.concatenate([ea.start + wa, eb.start + wb]))
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], np.maximum.accumulate(hi[order])
    return bool((hi[:-1] > lo[1:]).any())


def threads_meet_entries(ba, ea, wa, bb, eb, wb) -> bool:
    if not ea.start.size or not eb.start.size:
        return False
    blocks = np.concatenate([ba, bb])
    threads = np.concatenate([ea.thread, eb.thread])
    key, lo, hi = _group_spans(blocks * np.int64(1 << 11) + threads,
                               np.concatenate([ea.start, eb.start]),
                               np.concatenate([ea.start + wa, eb.start + wb]))
    blk = key >> 11
    order = np.lexsort((lo, blk))
    blk, lo, hi = blk[order], lo[order], hi[order]
    same = blk[1:] == blk[:-1]
    return bool((same & (_segment_cummax(hi, blk)[:-1] > lo[1:])).any())


def access(rng, threads: int, blocks: int, width: int):
    rows = int(rng.integers(1, 3))
    b = np.repeat(np.arange(blocks, dtype=np.int64), threads * rows)
    t = np.tile(np.arange(threads, dtype=np.int64), blocks * rows)
    keep = rng.random(b.size) < rng.choice([0.0, 0.3, 1.0])
    b, t = b[keep], t[keep]
    kind = rng.integers(0, 3)
    if kind == 0:  # out[blockIdx * n + tid], maybe a block apart
        start = (b * threads * int(rng.choice([0, 1, 2])) + t) * width
    elif kind == 1:  # threads in reverse order
        start = (b * threads + threads - 1 - t) * width
    else:
        start = rng.integers(0, 4 * threads * width, b.size)
    e = Evaluated(np.zeros(b.size, np.int64), t, start.astype(np.int64), {}, (), None)
    return b, e


@pytest.mark.parametrize("seed", range(200))
def test_merged_spans_answer_as_the_entries(seed):
    rng = np.random.default_rng(seed)
    threads, blocks = int(rng.choice([1, 32, 96])), int(rng.choice([1, 2, 5]))
    wa, wb = (int(rng.choice([1, 4, 8])) for _ in range(2))
    ba, ea = access(rng, threads, blocks, wa)
    bb, eb = access(rng, threads, blocks, wb) if rng.random() < 0.8 else (ba, ea)
    assert blocks_meet(group_spans(warp_groups(ba, ea), ea, wa),
                       group_spans(warp_groups(bb, eb), eb, wb)) == \
        blocks_meet_entries(ba, ea, wa, bb, eb, wb)
    assert threads_meet(group_spans(thread_groups(ba, ea), ea, wa),
                        group_spans(thread_groups(bb, eb), eb, wb)) == \
        threads_meet_entries(ba, ea, wa, bb, eb, wb)


def mismatched_by_unique(key_a, val_a, key_b, val_b):
    order = np.argsort(key_b, kind="stable")
    sk, sv = key_b[order], val_b[order]
    uniq, first = np.unique(sk, return_index=True)
    lo, hi = np.minimum.reduceat(sv, first), np.maximum.reduceat(sv, first)
    pos = np.minimum(np.searchsorted(uniq, key_a), len(uniq) - 1)
    return np.flatnonzero((uniq[pos] == key_a) & ((lo[pos] != val_a) | (hi[pos] != val_a)))


@pytest.mark.parametrize("seed", range(50))
def test_mismatched_answers_as_with_unique(seed):
    rng = np.random.default_rng(seed)
    n, m, keys = (int(x) for x in rng.integers(1, 200, 3))
    key_a, key_b = rng.integers(0, keys, n), rng.integers(0, keys, m)
    val_a, val_b = rng.integers(0, 3, n), rng.integers(0, 3, m)
    assert (mismatched(key_a, val_a, key_b, val_b) ==
            mismatched_by_unique(key_a, val_a, key_b, val_b)).all()
