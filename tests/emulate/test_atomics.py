"""`atom` and `red` with and, or, xor, min, max (signed and unsigned), inc and dec on
.global and .shared memory, 32 lanes from three warps on each address.

The PTX ISA (9.7.13.5 `atom`, 9.7.13.6 `red`) makes each lane's operation atomic but leaves
the order of the lanes on one address unspecified, so the oracle, in plain Python integers,
checks what every order shares:
- the final value is the fold of all the lanes' operands (every order gives it: the ops are
  commutative and associative, and inc/dec lanes here share one operand per address);
- `atom`'s returned old values can be put in an order in which each lane read the value the
  previous one left (a chain from the initial value to the final one); for and/or/min/max
  the chain is monotone, so sorting by the old value finds it; xor lanes each flip a
  distinct bit, so the chain orders by the number of flipped bits; inc/dec lanes are
  interchangeable, so the olds are, as a multiset, the first n iterates.

There is no `atom.sub` (the ISA's `.op` set is and, or, xor, cas, exch, add, inc, dec, min,
max): it must not load. inc/dec follow the ISA:
    inc: (old >= b) ? 0 : old + 1        dec: ((old == 0) || (old > b)) ? b : old - 1
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptxlint.emulate.errors import EmulationError

from .helpers import HEADER, NP, run_ptx

SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
GRID, BLOCK, K = 2, 96, 3  # K addresses per block, lane tid on tid % K: 32 lanes, 3 warps each
N = GRID * BLOCK
PER = BLOCK // K


def kernel(kind: str, space: str, op: str, t: str) -> str:
    bits = int(t[1:])
    w = bits // 8
    reg, mem = f".b{bits}", f"b{bits}"
    if kind == "atom":
        doit = f"  atom.{space}.{op}.{t} %v2, [%rd{'11' if space == 'shared' else '6'}], %v1;\n" \
               f"  st.global.{mem} [%rd8], %v2;"
    else:
        doit = f"  red.{space}.{op}.{t} [%rd{'11' if space == 'shared' else '6'}], %v1;"
    if space == "shared":
        doit = f"""  setp.lt.u32 %p1, %r1, {K};
  mov.u64 %rd9, sm;
  mul.wide.u32 %rd10, %r5, {w};
  add.s64 %rd11, %rd9, %rd10;
  @%p1 ld.global.{mem} %v0, [%rd6];
  @%p1 st.shared.{mem} [%rd11], %v0;
  bar.sync 0;
{doit}
  bar.sync 0;
  @%p1 ld.shared.{mem} %v0, [%rd11];
  @%p1 st.global.{mem} [%rd6], %v0;"""
    return HEADER + f""".visible .entry k(.param .u64 vals, .param .u64 mem, .param .u64 olds)
{{
  .shared .align 8 .b8 sm[{K * w}];
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  .reg {reg} %v<3>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  rem.u32 %r5, %r1, {K};
  mad.lo.u32 %r6, %r2, {K}, %r5;
  ld.param.u64 %rd1, [vals];
  mul.wide.u32 %rd2, %r4, {w};
  add.s64 %rd3, %rd1, %rd2;
  ld.global.{mem} %v1, [%rd3];
  ld.param.u64 %rd4, [mem];
  mul.wide.u32 %rd5, %r6, {w};
  add.s64 %rd6, %rd4, %rd5;
  ld.param.u64 %rd7, [olds];
  add.s64 %rd8, %rd7, %rd2;
{doit}
  ret;
}}
"""


# ---- the oracle: Python integers, never the emulator's code ----------------------------------
def signed(t: str) -> bool:
    return t[0] == "s"


def to_int(v: int, t: str) -> int:
    """The bit pattern v (unsigned) as the value type t means it."""
    bits = int(t[1:])
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed(t) and v >> (bits - 1) else v


def combine(op: str, old: int, b: int, t: str) -> int:
    """ISA semantics on bit patterns (unsigned ints) of type t."""
    bits = int(t[1:])
    mask = (1 << bits) - 1
    if op == "and":
        return old & b
    if op == "or":
        return old | b
    if op == "xor":
        return old ^ b
    if op in ("min", "max"):
        x, y = to_int(old, t), to_int(b, t)
        return (min(x, y) if op == "min" else max(x, y)) & mask
    if op == "inc":
        return 0 if old >= b else old + 1
    if op == "dec":
        return b if old == 0 or old > b else old - 1
    raise ValueError(op)


def popcount(v: int) -> int:
    return bin(v).count("1")


def chain_order(op: str, init: int, bs: list[int], olds: list[int], t: str) -> list[int]:
    """The lane order in which the olds must form a chain if any order makes them one."""
    lanes = range(len(bs))
    unchanged = [combine(op, o, b, t) == o for o, b in zip(olds, bs)]
    key = {"and": lambda i: -popcount(olds[i]), "or": lambda i: popcount(olds[i]),
           "xor": lambda i: popcount(olds[i] ^ init),
           "min": lambda i: -to_int(olds[i], t), "max": lambda i: to_int(olds[i], t)}[op]
    # equal olds: the lanes that leave the value as it is come before the one that changes it
    return sorted(lanes, key=lambda i: (key(i), not unchanged[i]))


def check_address(kind: str, op: str, t: str, init: int, bs: list[int], olds: list[int],
                  final: int) -> None:
    fold = init
    for b in bs:
        fold = combine(op, fold, b, t)
    assert final == fold, (op, t, hex(init), hex(final), hex(fold))
    if kind == "red":
        return
    if op in ("inc", "dec"):  # one operand per address: any order gives the same iterates
        cur, iterates = init, []
        for b in bs:
            iterates.append(cur)
            cur = combine(op, cur, b, t)
        assert sorted(olds) == sorted(iterates), (op, init, bs[0], olds)
        return
    cur = init
    for i in chain_order(op, init, bs, olds, t):
        assert olds[i] == cur, (op, t, "lane reads a value the address never held",
                                hex(olds[i]), hex(cur))
        cur = combine(op, cur, bs[i], t)
    assert cur == final


def addresses():
    """(block, slot) -> the thread indices i hitting mem[block * K + slot]."""
    i = np.arange(N)
    return {(c, s): list(i[(i // BLOCK == c) & (i % BLOCK % K == s)]) for c in range(GRID)
            for s in range(K)}


def run_and_check(kind: str, space: str, op: str, t: str, init: list[int], vals: list[int]):
    dt = np.dtype(NP[t])
    u = np.dtype(f"u{dt.itemsize}")
    mem = np.array(init, u).view(dt).copy()
    vals_arr = np.array(vals, u).view(dt).copy()
    olds = np.zeros(N, dt)
    run_ptx(kernel(kind, space, op, t), grid=GRID, block=BLOCK, args={0: vals_arr, 1: mem, 2: olds})
    mem_u, olds_u = mem.view(u), olds.view(u)
    for (c, s), lanes in addresses().items():
        check_address(kind, op, t, init[c * K + s], [vals[i] for i in lanes],
                      [int(olds_u[i]) for i in lanes], int(mem_u[c * K + s]))
    return mem_u, olds_u


def words(bits: int):
    edge = [0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1]
    return st.one_of(st.integers(0, (1 << bits) - 1), st.sampled_from(edge))


def initial_words(data, bits: int) -> list[int]:
    """What the atomically updated words hold before the kernel runs."""
    return data.draw(st.lists(words(bits), min_size=GRID * K, max_size=GRID * K))


BITWISE = [("and", "b32"), ("or", "b32"), ("xor", "b32"), ("and", "b64"), ("or", "b64"),
           ("xor", "b64")]
ORDERED = [(op, t) for op in ("min", "max") for t in ("s32", "u32", "s64", "u64")]


@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("kind", ["atom", "red"])
@pytest.mark.parametrize("op,t", BITWISE, ids=[f"{o}.{t}" for o, t in BITWISE])
@SETTINGS
@given(data=st.data())
def test_bitwise_atomics(op, t, kind, space, data):
    bits = int(t[1:])
    init = initial_words(data, bits)
    if op == "xor":  # each lane of an address flips its own bit
        vals = [0] * N
        for lanes in addresses().values():
            for i, bit in zip(lanes, data.draw(st.permutations(range(bits)))):
                vals[i] = 1 << bit
    else:  # dense operands for and, sparse for or: the chain does not collapse at once
        xs = [data.draw(st.lists(words(bits), min_size=N, max_size=N)) for _ in range(3)]
        mask = (1 << bits) - 1
        vals = [((x | y | z) if op == "and" else (x & y & z)) & mask for x, y, z in zip(*xs)]
    run_and_check(kind, space, op, t, init, vals)


@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("kind", ["atom", "red"])
@pytest.mark.parametrize("op,t", ORDERED, ids=[f"{o}.{t}" for o, t in ORDERED])
@SETTINGS
@given(data=st.data())
def test_min_max_atomics(op, t, kind, space, data):
    bits = int(t[1:])
    init = initial_words(data, bits)
    vals = data.draw(st.lists(words(bits), min_size=N, max_size=N))
    run_and_check(kind, space, op, t, init, vals)


def test_min_max_signedness_on_the_same_bits():
    """0xFFFFFFFF is -1 for .s32 and the largest value for .u32: the same bits, four answers."""
    vals = [0xFFFFFFFF if i % 2 else 5 for i in range(N)]
    init = [7] * (GRID * K)
    want = {"min.s32": 0xFFFFFFFF, "min.u32": 5, "max.s32": 7, "max.u32": 0xFFFFFFFF}
    for name, w in want.items():
        op, t = name.split(".")
        mem, _ = run_and_check("atom", "global", op, t, init, vals)
        assert set(int(v) for v in mem) == {w}, name


@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("kind", ["atom", "red"])
@pytest.mark.parametrize("op", ["inc", "dec"])
@SETTINGS
@given(data=st.data())
def test_inc_dec_wrap(op, kind, space, data):
    """32 lanes step each address with one operand b: dec from 0 or from above b jumps to
    b, inc at or above b wraps to 0."""
    bs = data.draw(st.lists(st.one_of(st.integers(0, 40), st.sampled_from([0, 0xFFFFFFFF])),
                            min_size=GRID * K, max_size=GRID * K))
    init = [data.draw(st.one_of(st.sampled_from([0, b, b + 1, 0xFFFFFFFF]),
                                st.integers(0, 0xFFFFFFFF))) & 0xFFFFFFFF for b in bs]
    vals = [0] * N
    for (c, s), lanes in addresses().items():
        for i in lanes:
            vals[i] = bs[c * K + s]
    run_and_check(kind, space, op, "u32", init, vals)


def test_dec_sequence_on_one_address():
    """A worked example: dec with b = 3 from 1 reads 1, 0, 3, 2, 1, 0, 3, ... in some order."""
    init = [1, 10, 0, 1, 10, 0]
    mem, olds = run_and_check("atom", "shared", "dec", "u32", init, [3] * N)
    # 32 decrements: from 1 the olds are 1 0 3 2 repeated, ending at 1; from 10: 10, then
    # 3 2 1 0 repeated, ending at 0; from 0: 0 3 2 1 repeated, ending at 0
    assert [int(v) for v in mem] == [1, 0, 0, 1, 0, 0]
    block0_slot1 = sorted(int(olds[i]) for i in addresses()[(0, 1)])
    assert block0_slot1 == sorted([10] + [3, 2, 1, 0] * 7 + [3, 2, 1])


@pytest.mark.parametrize("form", ["atom.global.sub.u32 %r2, [%rd1], %r1;",
                                  "red.shared.sub.u32 [%rd1], %r1;"])
def test_there_is_no_atomic_sub(form):
    text = HEADER + f""".visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 1;
  {form}
  ret;
}}
"""
    with pytest.raises(EmulationError, match="sub"):
        run_ptx(text, args={0: np.zeros(1, np.uint32)})
