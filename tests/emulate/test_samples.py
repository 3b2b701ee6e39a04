"""End to end on real nvcc PTX (`ptx_samples/cuda/`): outputs equal numpy references;
and the parser/printer check: the original and the re-printed PTX behave the same."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ptxlint.emulate import run_kernel
from ptxlint.ir.printer import print_module

from .helpers import module_of

CUDA = Path(__file__).parents[2] / "ptx_samples/cuda"
RNG = np.random.default_rng(7)


def run(name, kernel, grid, block, args, **kw):
    return run_kernel(module_of((CUDA / name).read_text()), kernel, grid, block, args, **kw)


def test_vector_add():
    n = 5000
    a, b = RNG.random(n, np.float32), RNG.random(n, np.float32)
    c = np.zeros(n, np.float32)
    res = run("vector_add.ptx", "vector_add", 4, 256, {0: a, 1: b, 2: c, 3: n})  # grid-stride
    assert np.array_equal(c, a + b) and not res.observations.event_counts
    a4, b4, c4 = a[:4096].reshape(-1, 4), b[:4096].reshape(-1, 4), np.zeros((1024, 4), np.float32)
    run("vector_add.ptx", "vector_add4", 2, 128, {0: a4, 1: b4, 2: c4, 3: 1024})
    assert np.array_equal(c4, a4 + b4)


@pytest.mark.parametrize("kernel", ["transpose_naive", "transpose_tiled"])
def test_transpose(kernel):
    h, w = 64, 96
    inp = RNG.random((h, w), np.float32)
    out = np.zeros((w, h), np.float32)
    res = run("transpose.ptx", kernel, (w // 32, h // 32), (32, 8), {0: out, 1: inp, 2: w, 3: h})
    assert np.array_equal(out, inp.T) and not res.observations.event_counts


def test_reduce():
    n = 3000
    x = RNG.standard_normal(n).astype(np.float32)
    blocks = -(-n // 512)
    sums, counts = np.zeros(blocks, np.float32), np.zeros(blocks, np.uint32)
    res = run("reduce.ptx", "block_reduce", blocks, 256, {0: x, 1: sums, 2: counts, 3: n},
              dynamic_smem=1024)
    padded = np.concatenate([x, np.zeros(blocks * 512 - n, np.float32)]).reshape(blocks, 2, 256)
    assert np.allclose(sums, padded.sum(axis=(1, 2)), rtol=1e-5, atol=1e-4)
    v = padded[:, 0] + padded[:, 1]
    assert list(counts) == list((v > 0).sum(axis=1))
    assert not res.observations.event_counts
    ints = RNG.integers(-1000, 1000, 256).astype(np.int32)
    ints[64:96] = 0  # a warp of zeros takes the __any_sync early exit
    out = np.full(8, -1, np.int32)
    run("reduce.ptx", "warp_max", 2, 128, {0: ints, 1: out})
    want = ints.reshape(8, 32).max(axis=1)
    want[2] = 0
    assert list(out) == list(want)


def test_histograms():
    data = RNG.integers(0, 256, 20000).astype(np.uint8)
    bins = np.zeros(256, np.uint32)
    run("histogram.ptx", "histogram256", 8, 256, {0: data, 1: len(data), 2: bins})
    assert list(bins) == list(np.bincount(data, minlength=256))
    keys = RNG.integers(0, 5000, 3000).astype(np.int32)
    w = RNG.random(3000, np.float32)
    sums, mk, first = np.zeros(64, np.float32), np.zeros(1, np.int32), np.zeros(1, np.uint64)
    run("histogram.ptx", "weighted_hist", 12, 256, {0: keys, 1: w, 2: 3000, 3: sums, 4: mk, 5: first})
    ref = np.zeros(64)
    np.add.at(ref, keys & 63, w)
    assert np.allclose(sums, ref, rtol=1e-5) and mk[0] == keys.max() and first[0] == 1


def test_device_calls_and_local_memory():
    n = 200
    x = RNG.standard_normal(256).astype(np.float32)
    for which, f in ((1, np.square), (0, np.negative)):
        out = np.zeros(n, np.float32)
        res = run("device_call.ptx", "call_kernel", 2, 128, {0: x, 1: out, 2: n, 3: which})
        g = x[:256].reshape(-1, 8)
        lo, hi = np.repeat(g.min(1), 8)[:n], np.repeat(g.max(1), 8)[:n]
        want = f(np.clip(x[:n], lo, hi) * np.float32(0.5)).astype(np.float32)
        assert np.array_equal(out, want) and not res.observations.event_counts
    vals = RNG.integers(-50, 50, 64 * 8).astype(np.int32)
    pick = RNG.integers(0, 8, 32).astype(np.int32)
    out = np.zeros(64, np.int32)
    res = run("local_array.ptx", "local_sort8", 2, 32, {0: vals, 1: out, 2: pick})
    assert list(out) == [int(np.sort(vals[8 * t:8 * t + 8])[pick[t % 32] & 7]) for t in range(64)]
    assert not res.observations.event_counts


def test_float_math_library_sequences():
    n = 256
    x = np.concatenate([RNG.uniform(-10, 10, n - 4), [0.0, 1e4, -3e5, 1e-3]]).astype(np.float32)
    out, dout = np.zeros(n, np.float32), np.zeros(n, np.float64)
    run("float_math.ptx", "float_math", 2, 128, {0: x, 1: out, 2: dout, 3: n})
    v = x.astype(np.float64)
    r = (np.exp(v) + np.log(np.abs(v) + 1) + np.sqrt(np.abs(v)) + np.sin(v) / (np.cos(v) + 2)
         + np.exp(-v) + np.log(v * v + 1) + 1 / np.sqrt(v * v + 1) + np.abs(v) ** 1.5)
    want = np.clip(r, 0, 1) + (v * v + r) + np.trunc(r) + np.round(v + np.copysign(1e-9, v))
    ok = np.isfinite(want) & (np.abs(v) < 80)
    assert np.allclose(out[ok], want[ok], rtol=1e-4, atol=1e-3)
    dwant = np.sqrt(v * v + 1) + np.exp(v) / (1 + v * v) + (3 * v - 1) + np.log1p(np.abs(v))
    okd = np.isfinite(dwant)
    assert np.allclose(dout[okd], dwant[okd], rtol=1e-13)
    ri, ru, rl, rd = (np.zeros(n, t) for t in (np.int32, np.uint32, np.int64, np.float64))
    run("float_math.ptx", "conversions", 2, 128, {0: x, 1: ri, 2: ru, 3: rl, 4: rd, 5: n})
    want_ri = (np.rint(v) + np.trunc(v) + np.floor(v) + np.ceil(v))
    small = np.abs(v) < 1e8
    assert np.array_equal(ri[small], want_ri[small].astype(np.int32))


PRINTED = [("vector_add.ptx", "vector_add", 2, 128, lambda: {0: RNG.random(300, np.float32),
                                                             1: RNG.random(300, np.float32),
                                                             2: np.zeros(300, np.float32), 3: 300}),
           ("transpose.ptx", "transpose_tiled", (2, 2), (32, 8), lambda: {
               0: np.zeros((64, 64), np.float32), 1: RNG.random((64, 64), np.float32), 2: 64, 3: 64}),
           ("reduce.ptx", "block_reduce", 3, 256, lambda: {
               0: RNG.standard_normal(1500).astype(np.float32), 1: np.zeros(3, np.float32),
               2: np.zeros(3, np.uint32), 3: 1500}),
           ("device_call.ptx", "call_kernel", 1, 64, lambda: {
               0: RNG.random(64, np.float32), 1: np.zeros(64, np.float32), 2: 60, 3: 1}),
           ("float_math.ptx", "float_math", 1, 64, lambda: {
               0: RNG.uniform(-5, 5, 64).astype(np.float32), 1: np.zeros(64, np.float32),
               2: np.zeros(64, np.float64), 3: 64}),
           ("half_bf16.ptx", "half_axpy", 1, 64, lambda: {
               0: RNG.random(128).astype(np.float16).view(np.uint32), 1: RNG.random(128).astype(
                   np.float16).view(np.uint32), 2: 0x3C00, 3: 64})]


@pytest.mark.parametrize("name,kernel,grid,block,make", PRINTED, ids=[p[1] for p in PRINTED])
def test_reprinted_ptx_behaves_the_same(name, kernel, grid, block, make):
    text = (CUDA / name).read_text()
    printed = print_module(module_of(text))
    args = make()
    results = []
    for t in (text, printed):
        mine = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
        res = run_kernel(module_of(t), kernel, grid, block, mine,
                         dynamic_smem=1024 if kernel == "block_reduce" else 0)
        obs = res.observations
        results.append(([mine[k] for k in sorted(mine) if isinstance(mine[k], np.ndarray)],
                        res.thread_instructions,
                        sorted((a.text, dict(a.sectors), dict(a.ways)) for a in obs.accesses.values()),
                        sorted((k, n) for (k, _pc), n in obs.event_counts.items())))
    (out_a, n_a, acc_a, ev_a), (out_b, n_b, acc_b, ev_b) = results
    assert all(np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(out_a, out_b))
    assert (n_a, acc_a, ev_a) == (n_b, acc_b, ev_b)


def test_cp_async_pipelines():
    tiles = 3
    x = RNG.random(2 * tiles * 256, np.float32)
    out = np.zeros(512, np.float32)
    res = run("async_copy.ptx", "pipelined_sum", 2, 256, {0: x, 1: out, 2: tiles})
    t = np.arange(256)
    want = x.reshape(2, tiles, 256)[:, :, (t + 1) % 256].sum(axis=1, dtype=np.float32)
    assert np.allclose(out.reshape(2, 256), want, rtol=1e-6) and not res.observations.event_counts
    v = RNG.random((512, 4), np.float32)
    o = np.zeros_like(v)
    run("async_copy.ptx", "copy16", 2, 256, {0: v, 1: o})
    assert np.array_equal(o.reshape(2, 256, 4), v.reshape(2, 256, 4)[:, ::-1])
