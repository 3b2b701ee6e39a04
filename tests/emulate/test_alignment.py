"""Alignment: an address must be a multiple of the access size, the total number of
bytes the instruction accesses (PTX ISA, "Addresses as Operands": `ld.v4.b32` is 16
bytes), for vector loads and stores in every space, `cp.async` (cp-size), bulk copies
(16) and vector atomics. A misaligned access is reported once per instruction, for the
lanes that are misaligned, and still performed at its address."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from ..conftest import ptxas_path
from .helpers import HEADER, run_ptx

HEADER_V8 = ".version 8.8\n.target sm_100\n.address_size 64\n\n"  # .v8 loads: sm_100
REG = {"u8": ".b16", "u16": ".b16", "u32": ".b32", "f32": ".f32", "u64": ".b64", "f64": ".f64"}
NP = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "f32": np.float32, "u64": np.uint64,
      "f64": np.float64}
STRIDE = 64  # bytes of input (and output) per thread


def _vec(n: int) -> str:
    return "" if n == 1 else f".v{n}"


def _regs(n: int) -> str:
    names = ", ".join(f"%v{i}" for i in range(n))
    return names if n == 1 else "{" + names + "}"


def vector_load(n: int, t: str, k: int) -> str:
    """Thread i loads n `t` elements at in + 64 i + k, then stores them one by one
    (aligned) at out + n*size*i."""
    size = np.dtype(NP[t]).itemsize
    stores = "\n".join(f"  st.global.{t} [%rd5+{i * size}], %v{i};" for i in range(n))
    return (HEADER_V8 if n == 8 else HEADER) + f"""
.visible .entry k(.param .u64 in, .param .u64 out)
{{
  .reg .b32 %r<2>;
  .reg .b64 %rd<6>;
  .reg {REG[t]} %v<{n}>;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, {STRIDE};
  add.s64 %rd4, %rd1, %rd3;
  ld.global{_vec(n)}.{t} {_regs(n)}, [%rd4+{k}];
  mul.wide.u32 %rd3, %r1, {n * size};
  add.s64 %rd5, %rd2, %rd3;
{stores}
  ret;
}}
"""


def vector_store(n: int, t: str, k: int) -> str:
    """Thread i loads n `t` elements one by one (aligned) at in + n*size*i and stores
    them as one vector at out + 64 i + k."""
    size = np.dtype(NP[t]).itemsize
    loads = "\n".join(f"  ld.global.{t} %v{i}, [%rd5+{i * size}];" for i in range(n))
    return (HEADER_V8 if n == 8 else HEADER) + f"""
.visible .entry k(.param .u64 in, .param .u64 out)
{{
  .reg .b32 %r<2>;
  .reg .b64 %rd<6>;
  .reg {REG[t]} %v<{n}>;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, {n * size};
  add.s64 %rd5, %rd1, %rd3;
{loads}
  mul.wide.u32 %rd3, %r1, {STRIDE};
  add.s64 %rd4, %rd2, %rd3;
  st.global{_vec(n)}.{t} [%rd4+{k}], {_regs(n)};
  ret;
}}
"""


SHAPES = [(1, "u32"), (2, "u8"), (4, "u8"), (4, "u16"), (2, "f32"), (4, "u32"), (2, "u64"),
          (2, "f64"), (8, "u32")]


def offsets(n: int, t: str) -> list[int]:
    """Every element-aligned offset within one access, one past it, and byte offsets."""
    size = np.dtype(NP[t]).itemsize
    return sorted({*range(0, n * size + 1, size), 1, n * size - 1} - {-1})


CASES = [(n, t, k) for n, t in SHAPES for k in offsets(n, t)]


def line_of(text: str, opcode: str) -> int:
    """The line of the first instruction of `text` starting with `opcode`."""
    return next(i + 1 for i, s in enumerate(text.splitlines()) if s.strip().startswith(opcode))


def _misaligned_lanes(res) -> list[int]:
    evs = res.observations.of_kind("misaligned")
    return [lane for ev in evs for lane in ev.details["lanes"]]


@pytest.mark.parametrize("n,t,k", CASES, ids=[f"v{n}.{t}+{k}" for n, t, k in CASES])
def test_vector_load_is_aligned_to_its_whole_size(n, t, k):
    size = np.dtype(NP[t]).itemsize
    src = np.arange(32 * STRIDE, dtype=np.uint8) * np.uint8(7)
    out = np.zeros(32 * n * size, np.uint8)
    res = run_ptx(vector_load(n, t, k), block=32, args={0: src, 1: out})
    want = np.concatenate([src[STRIDE * i + k: STRIDE * i + k + n * size] for i in range(32)])
    assert bytes(out) == bytes(want)  # performed at its address, aligned or not
    aligned = k % (n * size) == 0
    assert res.observations.count("misaligned") == (0 if aligned else 1)
    assert _misaligned_lanes(res) == ([] if aligned else list(range(32)))
    if not aligned:
        [ev] = res.observations.of_kind("misaligned")
        assert f"{n * size}-byte access" in ev.message


@pytest.mark.parametrize("n,t,k", CASES, ids=[f"v{n}.{t}+{k}" for n, t, k in CASES])
def test_vector_store_is_aligned_to_its_whole_size(n, t, k):
    size = np.dtype(NP[t]).itemsize
    src = (np.arange(32 * n * size, dtype=np.uint8) * np.uint8(5) + np.uint8(1))
    out = np.zeros(32 * STRIDE, np.uint8)
    res = run_ptx(vector_store(n, t, k), block=32, args={0: src, 1: out})
    want = np.zeros(32 * STRIDE, np.uint8)
    for i in range(32):
        want[STRIDE * i + k: STRIDE * i + k + n * size] = src[n * size * i: n * size * (i + 1)]
    assert bytes(out) == bytes(want)
    assert res.observations.count("misaligned") == (0 if k % (n * size) == 0 else 1)


# Only the odd lanes are misaligned: lane i stores a float2 at smem + 8 i + 4 (i & 1).
SHARED_AND_LOCAL = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<3>;
  .shared .align 16 .b8 smem[264];
  .local .align 16 .b8 buf[32];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  shl.b32 %r2, %r2, 2;
  shl.b32 %r3, %r1, 3;
  add.u32 %r3, %r3, %r2;
  mov.u32 %r4, smem;
  add.u32 %r4, %r4, %r3;
  st.shared.v2.u32 [%r4], {%r1, %r1};
  mov.u64 %rd1, buf;
  st.local.v4.u32 [%rd1+4], {%r1, %r1, %r1, %r1};
  st.local.v2.u32 [%rd1+8], {%r1, %r1};
  ret;
}
"""


def test_shared_and_local_vectors_report_only_the_misaligned_lanes():
    res = run_ptx(SHARED_AND_LOCAL, block=32, args={0: np.zeros(1, np.uint64)})
    by_line = {ev.line: ev.details["lanes"] for ev in res.observations.of_kind("misaligned")}
    assert by_line == {line_of(SHARED_AND_LOCAL, "st.shared.v2"): list(range(1, 32, 2)),
                       line_of(SHARED_AND_LOCAL, "st.local.v4"): list(range(32))}


CP_ASYNC = HEADER + """
.visible .entry k(.param .u64 in, .param .u64 out)
{{
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  .shared .align 16 .b8 smem[1024];
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 32;
  add.s64 %rd4, %rd1, %rd3;
  shl.b32 %r2, %r1, 5;
  mov.u32 %r3, smem;
  add.u32 %r3, %r3, %r2;
  cp.async.{cop}.shared.global [%r3+{dst}], [%rd4+{src}], {size};
  cp.async.wait_all;
  ret;
}}
"""


@pytest.mark.parametrize("size,src,dst", [(4, 0, 0), (4, 4, 8), (4, 2, 0), (8, 4, 0),
                                          (8, 0, 4), (8, 8, 16), (16, 0, 0), (16, 8, 0),
                                          (16, 0, 8), (16, 4, 4)])
def test_cp_async_is_aligned_to_its_cp_size(size, src, dst):
    cop = "cg" if size == 16 else "ca"
    text = CP_ASYNC.format(cop=cop, size=size, src=src, dst=dst)
    src_bytes = np.arange(32 * 32 + 32, dtype=np.uint8)
    res = run_ptx(text, block=32, args={0: src_bytes, 1: np.zeros(8, np.uint8)})
    lines = [ev.line for ev in res.observations.of_kind("misaligned")]
    # the read from global and the write into shared are judged on their own
    assert lines == [line_of(text, "cp.async.c")] * ((src % size != 0) + (dst % size != 0))


BULK = HEADER + """
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  .shared .align 128 .b8 tile[128];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, tile;
  mov.u32 %r2, 0x01020304;
  st.shared.v4.u32 [%r1+16], {{%r2, %r2, %r2, %r2}};
  cp.async.bulk.global.shared::cta.bulk_group [%rd1+{dst}], [%r1+{src}], 32;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
  ret;
}}
"""


@pytest.mark.parametrize("src,dst,events", [(0, 0, 0), (16, 32, 0), (8, 0, 1), (0, 8, 1),
                                            (4, 4, 2)])
def test_bulk_copy_addresses_are_16_byte_aligned(src, dst, events):
    out = np.zeros(128, np.uint8)
    res = run_ptx(BULK.format(src=src, dst=dst), block=1, args={0: out})
    assert res.observations.count("misaligned") == events
    tile = np.zeros(128, np.uint8)
    tile[16:32] = np.frombuffer(np.full(4, 0x01020304, np.uint32).tobytes(), np.uint8)
    assert bytes(out[dst: dst + 32]) == bytes(tile[src: src + 32])


VECTOR_ATOMICS = HEADER_V8 + """
.visible .entry k(.param .u64 acc, .param .u64 old, .param .u64 halves)
{{
  .reg .b32 %r<3>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<9>;
  .reg .b16 %h<9>;
  ld.param.u64 %rd1, [acc];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [old];
  cvta.to.global.u64 %rd2, %rd2;
  ld.param.u64 %rd3, [halves];
  cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r1, %tid.x;
  cvt.rn.f32.u32 %f1, %r1;
  add.f32 %f2, %f1, 100.0;
  atom.global.v2.f32.add {{%f3, %f4}}, [%rd1+{k}], {{%f1, %f2}};
  mul.wide.u32 %rd4, %r1, 8;
  add.s64 %rd5, %rd2, %rd4;
  st.global.v2.f32 [%rd5], {{%f3, %f4}};
  red.global.v4.f32.add [%rd1+{k4}], {{%f1, %f1, %f2, %f2}};
  mov.b16 %h1, 0x3C00;
  atom.global.v8.f16.add.noftz {{%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}}, [%rd3+{k8}],
      {{%h1, %h1, %h1, %h1, %h1, %h1, %h1, %h1}};
  ret;
}}
"""


@pytest.mark.parametrize("k,k4,k8", [(0, 16, 0), (4, 16, 0), (0, 24, 0), (0, 16, 8),
                                     (8, 32, 16)])
def test_vector_atomics_are_aligned_to_the_whole_vector(k, k4, k8):
    acc = np.zeros(16, np.float32)
    old = np.zeros(64, np.float32)
    halves = np.zeros(24, np.uint16)
    res = run_ptx(VECTOR_ATOMICS.format(k=k, k4=k4, k8=k8), block=32,
                  args={0: acc, 1: old, 2: halves})
    text = VECTOR_ATOMICS
    want = {line_of(text, "atom.global.v2"): k % 8 != 0,
            line_of(text, "red.global.v4"): k4 % 16 != 0,
            line_of(text, "atom.global.v8"): k8 % 16 != 0}
    got = {ev.line for ev in res.observations.of_kind("misaligned")}
    assert got == {line for line, bad in want.items() if bad}
    # each element is its own atomic: in thread order, every lane adds its values
    tid = np.arange(32, dtype=np.float32)
    want_acc = np.zeros(16, np.float32)
    want_acc[k // 4: k // 4 + 2] += [tid.sum(), (tid + 100).sum()]
    want_acc[k4 // 4: k4 // 4 + 4] += [tid.sum(), tid.sum(), (tid + 100).sum(), (tid + 100).sum()]
    assert list(acc) == list(want_acc)
    # lane i saw the sums of lanes before it
    firsts = np.concatenate([[0], np.cumsum(tid)[:-1]])
    seconds = np.concatenate([[0], np.cumsum(tid + 100)[:-1]])
    assert list(old.reshape(32, 2)[:, 0]) == list(firsts)
    assert list(old.reshape(32, 2)[:, 1]) == list(seconds)
    one = np.float16(32).view(np.uint16)  # 32 lanes add 1.0 to each of 8 halves
    assert list(halves[k8 // 2: k8 // 2 + 8]) == [one] * 8


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed")
def test_kernels_assemble(tmp_path):
    texts = [vector_load(n, t, n * np.dtype(NP[t]).itemsize) for n, t in SHAPES]
    texts += [vector_store(n, t, 0) for n, t in SHAPES]
    texts += [SHARED_AND_LOCAL, CP_ASYNC.format(cop="cg", size=16, src=0, dst=0),
              BULK.format(src=0, dst=0), VECTOR_ATOMICS.format(k=0, k4=16, k8=0)]
    for i, text in enumerate(texts):
        path = tmp_path / f"k{i}.ptx"
        path.write_text(text)
        arch = "sm_100" if text.startswith(HEADER_V8) else "sm_90"
        done = subprocess.run([ptxas_path(), f"-arch={arch}", str(path), "-o", str(path) + ".o"],
                              capture_output=True, text=True)
        assert done.returncode == 0, text + done.stderr
