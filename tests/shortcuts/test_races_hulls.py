"""`hulls_meet` counts the pairs of spans that meet instead of comparing every pair, and
works out once per pair of accesses the shifts at which two warps meet: it answers as
the dense definition does (warps x warps, then lanes x lanes per warp), at any shift."""
import numpy as np
import pytest

from ptxlint.threads.thread_eval import I64, ThreadSpace
from ptxlint.threads.thread_pairs import Evaluated, _hull, hulls_meet, shifted


def dense(a: Evaluated, b: Evaluated, same_warp: bool) -> bool:
    """The definition: two different warps (or lanes of one warp) whose spans meet."""
    if a.hull is None or b.hull is None:
        return True
    (alo, ahi), (blo, bhi) = a.span, b.span
    if ahi <= blo or bhi <= alo:
        return False
    awl, awh, all_, alh = a.hull
    bwl, bwh, bll, blh = b.hull
    meet = (awl[:, None] < bwh[None, :]) & (bwl[None, :] < awh[:, None])
    np.fill_diagonal(meet, False)
    if meet.any():
        return True
    if not same_warp:
        return False
    inner = (all_[:, :, None] < blh[:, None, :]) & (bll[:, None, :] < alh[:, :, None])
    inner &= ~np.eye(32, dtype=bool)[None, :, :]
    return bool(inner.any())


def access(rng, space: ThreadSpace, width: int, scale: int) -> Evaluated:
    rows = int(rng.integers(1, 4))
    n = int(rng.integers(0, space.n * rows + 1))
    row = rng.integers(0, rows, n).astype(I64)
    thread = rng.integers(0, space.n, n).astype(I64)
    kind = rng.integers(0, 3)
    if kind == 0:  # s[t], s[t + c]: the usual shapes
        start = (thread * width + int(rng.integers(-2, 3)) * width).astype(I64)
    elif kind == 1:  # per-warp rows
        start = ((thread // 32) * scale + (thread % 32) * width).astype(I64)
    else:
        start = rng.integers(-scale, scale, n).astype(I64)
    return Evaluated(row, thread, start, {}, (), _hull(space, thread, start, width))


@pytest.mark.parametrize("seed", range(300))
def test_counted_spans_answer_as_the_dense_definition(seed):
    rng = np.random.default_rng(seed)
    space = ThreadSpace((int(rng.choice([1, 31, 32, 64, 100, 256])), 1, 1), True)
    scale = int(rng.choice([8, 64, 4096]))
    a = access(rng, space, int(rng.choice([1, 4, 8])), scale)
    b = access(rng, space, int(rng.choice([1, 4, 8])), scale)
    for shift in (0, *(int(x) for x in rng.integers(-64, 65, 8))):  # one pair, many shifts
        for same_warp in (False, True):
            assert hulls_meet(space, a, b, same_warp, shift) == \
                dense(shifted(a, shift), b, same_warp)
            assert hulls_meet(space, a, a, same_warp, shift) == \
                dense(shifted(a, shift), a, same_warp)


def test_huge_offsets_fall_back_to_the_dense_test():
    space = ThreadSpace((64, 1, 1), True)
    t = np.arange(64, dtype=I64)
    a = Evaluated(np.zeros(64, I64), t, t * (1 << 56), {}, (), _hull(space, t, t * (1 << 56), 4))
    b = shifted(a, 1 << 56)
    for same_warp in (False, True):
        assert hulls_meet(space, a, b, same_warp) == dense(a, b, same_warp)
