"""Minimal reproducers of the defects the soundness suite found in the analysis, the
rules and the emulator, kept as regression tests now that each is fixed: the lint
reports the defect, the emulator observes it, and the run is sound (docs/soundness.md).

Each kernel assembles with ptxas (checked below when it is installed)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from differential import Case, run_case
from ptxlint.emulate import run_kernel
from ptxlint.emulate.observe import warp_bank_ways
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text

from ..conftest import ptxas_path
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n\n"

# A predicate decides a divergent branch, the lanes reconverge at $L1, and the same
# predicate then guards a `bra.uni`: lane 0 falls through, lanes 1-31 jump.
RECONVERGED = HEAD + """.visible .entry k(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	setp.ne.s32 %p1, %r1, 0;
	@%p1 bra $L1;
	st.global.u32 [%rd2], %r1;
$L1:
	@%p1 bra.uni $L2;
	st.global.u32 [%rd2+4], %r1;
$L2:
	ret;
}
"""
RECONVERGED_UNI_LINE = next(i for i, line in enumerate(RECONVERGED.splitlines(), 1)
                            if "bra.uni" in line)

# smem + 4*tid - 4 in 32 bits wraps for thread 0 when smem sits at shared address 0;
# zero-extended and advanced by 4 in 64 bits it is 2^32 + smem, not smem. The analysis
# keeps the offset 4*tid (in bounds); the generic load of thread 0 leaves the window.
WRAPPED = HEAD + """.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.shared .align 4 .b8 smem[256];
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r7, smem;
	shl.b32 %r2, %r1, 2;
	add.s32 %r3, %r7, %r2;
	add.s32 %r4, %r3, -4;
	cvt.u64.u32 %rd3, %r4;
	add.s64 %rd4, %rd3, 4;
	cvta.shared.u64 %rd5, %rd4;
	ld.u32 %r5, [%rd5];
	mul.wide.u32 %rd6, %r1, 4;
	add.s64 %rd7, %rd2, %rd6;
	st.global.u32 [%rd7], %r5;
	ret;
}
"""
WRAPPED_LOAD_LINE = 20

# float2 loads from in + 1 float: every address is 4 modulo 8 (PTX requires 8).
VECTOR = HEAD + """.visible .entry k(.param .u64 in, .param .u64 out)
{
	.reg .f32 %f<3>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<7>;
	ld.param.u64 %rd1, [in];
	cvta.to.global.u64 %rd2, %rd1;
	ld.param.u64 %rd3, [out];
	cvta.to.global.u64 %rd4, %rd3;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd5, %r1, 8;
	add.s64 %rd6, %rd2, %rd5;
	ld.global.v2.f32 {%f1, %f2}, [%rd6+4];
	add.s64 %rd6, %rd4, %rd5;
	st.global.v2.f32 [%rd6], {%f1, %f2};
	ret;
}
"""


# Thread i loads in[i + 1] through a device function: thread 31 reads past the 128-byte
# buffer. The rules check the kernel's own accesses only.
CALLEE = HEAD + """.func (.reg .b32 r) get(.reg .b64 p, .reg .b32 i)
{
	.reg .b64 %rd<3>;
	mul.wide.u32 %rd1, i, 4;
	add.s64 %rd2, p, %rd1;
	ld.global.u32 r, [%rd2];
	ret;
}

.visible .entry k(.param .u64 in, .param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [in];
	cvta.to.global.u64 %rd2, %rd1;
	ld.param.u64 %rd3, [out];
	cvta.to.global.u64 %rd4, %rd3;
	mov.u32 %r1, %tid.x;
	add.u32 %r2, %r1, 1;
	call.uni (%r3), get, (%rd2, %r2);
	mul.wide.u32 %rd5, %r1, 4;
	add.s64 %rd5, %rd4, %rd5;
	st.global.u32 [%rd5], %r3;
	ret;
}
"""
CALLEE_LOAD_LINE = 10


# Odd lanes make two trips of the inner loop, even lanes one; each trip calls `id`.
# The inner exit reconverges at $L4 (its post-dominator), so %r8 is warp-uniform and
# the `bra.uni` at $L1 is too.
LATE = HEAD + """.func (.reg .b32 r) id(.reg .b32 a)
{
	mov.b32 r, a;
	ret;
}

.visible .entry k()
{
	.reg .pred %p<3>;
	.reg .b32 %r<14>;
	mov.u32 %r1, %tid.x;
	mov.u32 %r8, 0;
$L1:
	setp.ge.s32 %p1, %r8, 4;
	@%p1 bra.uni $L2;
	and.b32 %r10, %r1, 1;
	mov.u32 %r9, 0;
$L3:
	setp.gt.s32 %p2, %r9, %r10;
	@%p2 bra $L4;
	call.uni (%r13), id, (%r9);
	add.s32 %r9, %r9, 1;
	bra.uni $L3;
$L4:
	add.s32 %r8, %r8, 1;
	bra.uni $L1;
$L2:
	ret;
}
"""


def _lint(text: str, launch: str):
    opts = LintOptions(launch=LaunchConfig.parse(launch))
    return lint_text(text, "<repro>", opts).diagnostics


def test_bra_uni_on_a_reconverged_predicate_is_reported():
    found = _lint(RECONVERGED, "block=32 grid=1")
    assert any(d.rule == "divergent-bra-uni" and d.line == RECONVERGED_UNI_LINE for d in found)


def test_uniform_branch_does_not_suggest_uni_for_a_divergent_branch():
    text = RECONVERGED.replace("bra.uni $L2", "bra $L2")
    assert not any(d.rule == "uniform-branch" for d in _lint(text, "block=32 grid=1"))


def test_the_emulator_confirms_the_divergent_bra_uni():
    """The run sees the `.uni` branch's lanes disagree, and the lint's finding there is
    confirmed: no breach."""
    out = np.zeros(2, np.uint32)
    res = run_kernel(RECONVERGED, "k", 1, 32, {0: out})
    assert res.observations.count("divergent-uniform") == 1
    case = Case("reconverged", RECONVERGED, "k", (1, 1, 1), (32, 1, 1), {0: out},
                LaunchConfig.parse("block=32 grid=1 buffer.0=8"))
    result = run_case(case)
    assert result.sound, result.problems()
    assert result.comparison.findings[("divergent-bra-uni",
                                       next(s for r, s in result.comparison.findings
                                            if r == "divergent-bra-uni"))]


def test_zero_extended_wrapped_shared_address_is_out_of_bounds():
    found = _lint(WRAPPED, "block=32 grid=1 buffer.0=128")
    assert any(d.rule == "out-of-bounds" and d.line == WRAPPED_LOAD_LINE for d in found)


def test_the_emulator_confirms_the_wrapped_shared_address():
    out = np.zeros(32, np.uint32)
    res = run_kernel(WRAPPED, "k", 1, 32, {0: out})
    [ev] = res.observations.of_kind("out-of-bounds")
    assert ev.line == WRAPPED_LOAD_LINE and ev.details["lanes"] == [0]
    case = Case("wrapped", WRAPPED, "k", (1, 1, 1), (32, 1, 1), {0: out},
                LaunchConfig.parse("block=32 grid=1 buffer.0=128"))
    result = run_case(case)
    assert result.sound, result.problems()


def test_an_out_of_bounds_load_in_a_called_function_is_reported():
    found = _lint(CALLEE, "block=32 grid=1 buffer.0=128 buffer.1=128")
    assert any(d.rule == "out-of-bounds" and d.line == CALLEE_LOAD_LINE for d in found)


def test_the_emulator_confirms_the_out_of_bounds_load_in_the_callee():
    x, out = np.zeros(32, np.uint32), np.zeros(32, np.uint32)
    case = Case("callee", CALLEE, "k", (1, 1, 1), (32, 1, 1), {0: x, 1: out},
                LaunchConfig.parse("block=32 grid=1 buffer.0=128 buffer.1=128"))
    result = run_case(case)
    assert result.sound, result.problems()
    assert result.comparison.observed["out-of-bounds"] == 1
    assert [site.line for (rule, site), ok in result.comparison.findings.items()
            if rule == "out-of-bounds" and ok] == [CALLEE_LOAD_LINE]


def test_emulator_reconverges_before_a_uniform_loop_branch():
    res = run_kernel(LATE, "k", 1, 32, {})
    assert res.observations.count("divergent-uniform") == 0


def test_the_lint_finds_the_loop_branch_uniform():
    assert not _lint(LATE, "block=32 grid=1")


def test_emulator_reports_a_misaligned_vector_load():
    x, out = np.zeros(2 * 32 + 2, np.float32), np.zeros(2 * 32, np.float32)
    res = run_kernel(VECTOR, "k", 1, 32, {0: x, 1: out})
    assert res.observations.count("misaligned") == 1


def test_the_lint_reports_the_misaligned_vector_load():
    found = _lint(VECTOR, "block=32 grid=1 buffer.0=264 buffer.1=256")
    assert [d.rule for d in found if d.line == 17] == ["misaligned-access"]


# smem sits at shared address 0 in the emulator: smem - 4 is 0xFFFFFFFC in 32 bits, and
# [%r2+4] is smem again.
UNWRAPPED = HEAD + """.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
	.shared .align 4 .b8 smem[4];
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, smem;
	add.s32 %r2, %r1, -4;
	st.shared.u32 [%r2+4], %r1;
	ld.shared.u32 %r3, [%r2+4];
	st.global.u32 [%rd2], %r3;
	ret;
}
"""


def test_emulator_wraps_32_bit_shared_addresses():
    res = run_kernel(UNWRAPPED, "k", 1, 1, {0: np.zeros(1, np.uint32)})
    assert res.observations.count("out-of-bounds") == 0


def test_the_lint_finds_the_wrapped_shared_address_in_bounds():
    assert not _lint(UNWRAPPED, "block=1 grid=1 buffer.0=4")


def test_emulator_wraps_shared_words_at_32_bits():
    """Lane 0 reads 8 bytes at 0xFFFFFFFC: words 0x3FFFFFFF and, wrapped, 0. Lane 1
    reads words 0 and 1: bank 0 serves one word (a broadcast), not two."""
    warps, ways = warp_bank_ways(np.zeros(2, np.int64), np.arange(2, dtype=np.uint32),
                                 np.array([0xFFFFFFFC, 0], np.uint64), 8)
    assert list(ways) == [1]


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed")
@pytest.mark.parametrize("text", [RECONVERGED, WRAPPED, VECTOR, CALLEE, UNWRAPPED, LATE],
                         ids=["reconverged", "wrapped", "vector", "callee", "unwrapped",
                              "late"])
def test_reproducers_assemble(text, tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(text)
    done = subprocess.run([ptxas_path(), "-arch=sm_80", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
