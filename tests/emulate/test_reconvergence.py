"""Reconvergence across calls: lanes inside a callee are before lanes past the call, so
lanes of a warp that split meet again where they would with every call inlined (the
immediate post-dominator in the layouts compilers emit), never one loop iteration apart.

Each kernel marks instructions with `// @name`; a probe records which threads execute
each marked instruction together, and the expected sequence of groups is written out
from the kernel's structure (and each lane's stored trace from its own trip counts)."""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from ..conftest import ptxas_path
from .helpers import HEADER, run_ptx


def trace(text: str, grid=1, block=32, args=None):
    """Run `text`; returns (result, [(mark, threads) per execution of a marked step])."""
    marks = {i + 1: m.group(1) for i, line in enumerate(text.splitlines())
             if (m := re.search(r"// @(\w+)", line))}
    seen: list[tuple[str, tuple[int, ...]]] = []

    def probe(m, pc):
        insn = m.program.instructions[pc]
        if insn is not None and insn.span.line in marks:
            seen.append((marks[insn.span.line], tuple(int(t) for t in m.active())))
    res = run_ptx(text, grid=grid, block=block, args=args, probe=probe)
    return res, seen


def lanes(cond, n=64) -> tuple[int, ...]:
    return tuple(t for t in range(n) if cond(t))


ALL = lanes(lambda t: True)

# An outer loop of 3 trips (uniform, `bra.uni`) around an inner loop of tid % 3 + 1 trips
# (a divergent exit) whose body calls `step`; each call's result goes to the lane's
# next trace slot.
NESTED = HEADER + """
.func (.reg .b32 r) step(.reg .b32 o, .reg .b32 j)
{
  mad.lo.u32 r, o, 16, j;          // @callee
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, 3;
  mov.u32 %r3, 0;
  mov.u32 %r9, 0;
$OUTER:
  setp.ge.u32 %p1, %r3, 3;
  @%p1 bra.uni $DONE;              // @outer
  mov.u32 %r4, 0;
$INNER:
  setp.gt.u32 %p2, %r4, %r2;
  @%p2 bra $NEXT;
  call (%r5), step, (%r3, %r4);
  mad.lo.u32 %r6, %r1, 9, %r9;     // @after
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  add.u32 %r9, %r9, 1;
  add.u32 %r4, %r4, 1;
  bra.uni $INNER;
$NEXT:
  add.u32 %r3, %r3, 1;             // @next
  bra.uni $OUTER;
$DONE:
  ret;
}
"""


def test_lanes_meet_after_a_divergent_inner_loop_that_calls_a_function():
    out = np.full(64 * 9, -1, np.int32)
    res, seen = trace(NESTED, block=64, args={0: out})
    want = []
    for o in range(3):
        want.append(("outer", ALL))
        for j in range(3):
            group = lanes(lambda t: t % 3 >= j)
            want += [("callee", group), ("after", group)]
        want.append(("next", ALL))
    want.append(("outer", ALL))
    assert seen == want
    assert not res.observations.event_counts  # the outer `bra.uni` is never divergent
    for t in range(64):
        trips = t % 3 + 1
        slots = [16 * o + j for o in range(3) for j in range(trips)]
        assert list(out[9 * t: 9 * t + 9]) == slots + [-1] * (9 - len(slots))


# `f` returns early for even lanes; the odd ones go on inside it first.
EARLY_RETURN = HEADER + """
.func (.reg .b32 r) f(.reg .b32 a)
{
  .reg .pred %q;
  mov.u32 r, 1;
  setp.eq.u32 %q, a, 0;
  @%q ret;
  mov.u32 r, 2;                    // @late
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  call (%r3), f, (%r2);
  mul.wide.u32 %rd2, %r1, 4;       // @after
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_an_early_return_waits_for_the_lanes_still_in_the_callee():
    out = np.zeros(64, np.int32)
    res, seen = trace(EARLY_RETURN, block=64, args={0: out})
    assert seen == [("late", lanes(lambda t: t & 1)), ("after", ALL)]
    assert list(out) == [2 if t & 1 else 1 for t in range(64)]
    store = next(a for a in res.observations.accesses.values() if a.kind == "store")
    assert store.requests == 2  # one request per warp: the lanes are together again


# Both arms of a divergent branch call `g`: as if inlined, each arm runs its own copy.
TWO_SITES = HEADER + """
.func (.reg .b32 r) g(.reg .b32 a)
{
  add.u32 r, a, 100;               // @callee
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.ne.u32 %p, %r2, 0;
  @%p bra $ODD;
  call (%r3), g, (%r1);
  bra.uni $JOIN;
$ODD:
  mul.lo.u32 %r4, %r1, 2;
  call (%r3), g, (%r4);
$JOIN:
  mul.wide.u32 %rd2, %r1, 4;       // @join
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_calls_from_two_arms_run_apart_and_join_after():
    out = np.zeros(64, np.int32)
    _, seen = trace(TWO_SITES, block=64, args={0: out})
    assert seen == [("callee", lanes(lambda t: not t & 1)), ("callee", lanes(lambda t: t & 1)),
                    ("join", ALL)]
    assert list(out) == [(2 * t if t & 1 else t) + 100 for t in range(64)]


# Recursion as deep as tid % 4: each level's code after the recursive call runs for
# the lanes that reached that level, deepest first, and the caller resumes once.
RECURSIVE = HEADER + """
.func (.reg .b32 r) down(.reg .b32 n)
{
  .reg .pred %q;
  .reg .b32 %t<3>;
  mov.u32 r, 0;
  setp.eq.u32 %q, n, 0;
  @%q bra $OUT;
  sub.u32 %t1, n, 1;
  call (%t2), down, (%t1);
  add.u32 r, %t2, n;               // @unwind
$OUT:
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  call (%r3), down, (%r2);
  mul.wide.u32 %rd2, %r1, 4;       // @after
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_recursion_of_lane_dependent_depth_unwinds_level_by_level():
    out = np.zeros(64, np.int32)
    _, seen = trace(RECURSIVE, block=64, args={0: out})
    assert seen == [("unwind", lanes(lambda t: t % 4 >= d)) for d in (3, 2, 1)] + [("after", ALL)]
    assert list(out) == [sum(range(t % 4 + 1)) for t in range(64)]


# An indirect call whose target depends on the lane: each function runs for its lanes,
# the caller resumes once for all.
INDIRECT = HEADER + """
.func (.reg .b32 r) twice(.reg .b32 a)
{
  shl.b32 r, a, 1;                 // @twice
  ret;
}

.func (.reg .b32 r) square(.reg .b32 a)
{
  mul.lo.u32 r, a, a;              // @square
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.ne.u32 %p, %r2, 0;
  mov.u64 %rd4, twice;
  mov.u64 %rd5, square;
  selp.b64 %rd4, %rd4, %rd5, %p;
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  call (%r3), %rd4, (%r1), proto;
  mul.wide.u32 %rd2, %r1, 4;       // @after
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_an_indirect_call_to_two_functions_resumes_once():
    out = np.zeros(64, np.int32)
    _, seen = trace(INDIRECT, block=64, args={0: out})
    assert sorted(seen[:2]) == [("square", lanes(lambda t: not t & 1)),
                                ("twice", lanes(lambda t: t & 1))]
    assert seen[2:] == [("after", ALL)]
    assert list(out) == [2 * t if t & 1 else t * t for t in range(64)]


# A barrier inside a function called from both arms: one barrier instruction, reached
# through two call paths; each lane then reads its neighbour's value.
BARRIER_IN_CALLEE = HEADER + """
.shared .align 4 .b8 sh[256];

.func (.reg .b32 r) swap(.reg .b32 i)
{
  .reg .b32 %a<5>;
  mov.u32 %a1, sh;
  shl.b32 %a2, i, 2;
  add.u32 %a3, %a1, %a2;
  st.shared.u32 [%a3], i;
  barrier.sync 0;
  xor.b32 %a4, %a2, 4;
  add.u32 %a4, %a1, %a4;
  ld.shared.u32 r, [%a4];          // @read
  ret;
}

.visible .entry k(.param .u64 out)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.ne.u32 %p, %r2, 0;
  @%p bra $ODD;
  call (%r3), swap, (%r1);
  bra.uni $JOIN;
$ODD:
  call (%r3), swap, (%r1);
$JOIN:
  mul.wide.u32 %rd2, %r1, 4;       // @join
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_a_barrier_in_a_callee_reached_through_two_call_paths_is_one_barrier():
    out = np.zeros(64, np.int32)
    res, seen = trace(BARRIER_IN_CALLEE, block=64, args={0: out})
    assert list(out) == [t ^ 1 for t in range(64)]
    assert not res.observations.event_counts  # no mismatch: the same instruction
    assert seen == [("read", lanes(lambda t: not t & 1)), ("read", lanes(lambda t: t & 1)),
                    ("join", ALL)]


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed")
@pytest.mark.parametrize("name", ["NESTED", "EARLY_RETURN", "TWO_SITES", "RECURSIVE", "INDIRECT",
                                  "BARRIER_IN_CALLEE"])
def test_kernels_assemble(name, tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(globals()[name])
    done = subprocess.run([ptxas_path(), "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
