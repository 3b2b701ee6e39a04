"""Which instructions each target has (`arch.FEATURES`), entry by entry: a one-instruction
kernel per entry is judged by ptxlint's table for a target below the entry's minimum and
at it, and the same kernel goes through ptxas (when installed) for both targets, which
must agree: rejected below, accepted at the minimum. Arch-specific entries are also tried
on the plain target of their compute capability (sm_90 for `wgmma`), which lacks them.

Targets this ptxas no longer knows (CUDA 13.0 starts at sm_75) are skipped for the ptxas
half only; the table half always runs."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ptxlint import arch
from ptxlint.ir.build import parse_module

from .conftest import ptxas_max_version, ptxas_path

# one instruction per entry, using the registers the kernel below declares
EXAMPLES = {
    "match.sync": "match.any.sync.b32 %r1, %r2, 0xffffffff;",
    "nanosleep": "nanosleep.u32 100;",
    "atom/red .add.f64": "atom.global.add.f64 %fd1, [%rd0], %fd0;",
    "atom/red .add.f16": "atom.global.add.noftz.f16 %rs1, [%rd0], %rs0;",
    "atom/red .add.bf16": "atom.global.add.noftz.bf16 %rs1, [%rd0], %rs0;",
    "atom/red on vectors": "atom.global.v2.f32.add {%f0,%f1}, [%rd0], {%f2,%f3};",
    "ldmatrix": "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r0];",
    "movmatrix": "movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;",
    "stmatrix": "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r0], {%r1};",
    "tanh": "tanh.approx.f32 %f1, %f0;",
    "mma .m16n8k8": "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
                    "{%f0,%f1,%f2,%f3}, {%r1,%r2}, {%r1}, {%f4,%f5,%f6,%f7};",
    "mma .m8n8k16": "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 "
                    "{%r1,%r2}, {%r3}, {%r4}, {%r1,%r2};",
    "mma .m16n8k16": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%f0,%f1,%f2,%f3}, {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%f4,%f5,%f6,%f7};",
    "mma .m16n8k32": "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                     "{%r1,%r2,%r3,%r4}, {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%r1,%r2,%r3,%r4};",
    "mma .m8n8k4 on .f64": "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                           "{%fd1,%fd2}, {%fd0}, {%fd0}, {%fd1,%fd2};",
    "mma on FP8 (.e4m3/.e5m2)": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                                "{%f0,%f1,%f2,%f3}, {%r1,%r2,%r3,%r4}, {%r1,%r2}, "
                                "{%f4,%f5,%f6,%f7};",
    ".bf16 types": "fma.rn.bf16 %rs1, %rs0, %rs0, %rs0;",
    "add/sub/mul .bf16": "add.rn.bf16 %rs1, %rs0, %rs0;",
    "ex2 .bf16": "ex2.approx.ftz.bf16 %rs1, %rs0;",
    ".tf32 types": "cvt.rna.tf32.f32 %r1, %f0;",
    "cvt .f16x2.f32": "cvt.rn.f16x2.f32 %r1, %f0, %f1;",
    "cvt to .e4m3x2/.e5m2x2": "cvt.rn.satfinite.e4m3x2.f32 %rs1, %f0, %f1;",
    "redux.sync": "redux.sync.add.s32 %r1, %r2, 0xffffffff;",
    "redux.sync .f32": "redux.sync.min.f32 %f1, %f0, 0xffffffff;",
    "cp.async": "cp.async.ca.shared.global [%r0], [%rd0], 4;",
    "cp.async.bulk": "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                     "[%r0], [%rd0], 16, [%r0];",
    "cp.reduce.async.bulk": "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 "
                            "[%rd0], [%r0], 16;",
    "mbarrier": "mbarrier.init.shared.b64 [%r0], 32;",
    "mbarrier.try_wait": "mbarrier.try_wait.shared::cta.b64 %p1, [%r0], %rd0;",
    "mbarrier .expect_tx": "mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r0], 16;",
    "createpolicy": "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;",
    "elect.sync": "elect.sync %r1|%p1, 0xffffffff;",
    "fence.proxy.async": "fence.proxy.async;",
    "fence.mbarrier_init": "fence.mbarrier_init.release.cluster;",
    "barrier.cluster": "barrier.cluster.arrive;",
    "mapa": "mapa.shared::cluster.u32 %r1, %r0, 0;",
    "getctarank": "getctarank.shared::cluster.u32 %r1, %r0;",
    "griddepcontrol": "griddepcontrol.wait;",
    "st.async": "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r0], %r1, [%r0];",
    "red.async": "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes"
                 ".add.u32 [%r0], %r1, [%r0];",
    "multimem": "multimem.red.relaxed.gpu.global.add.u32 [%rd0], %r1;",
    "wgmma": "wgmma.fence.sync.aligned;",
    "setmaxnreg": "setmaxnreg.inc.sync.aligned.u32 240;",
    "tensormap.replace": "tensormap.replace.tile.global_address.global.b1024.b64 [%rd0], %rd0;",
    "tcgen05": "tcgen05.fence::before_thread_sync;",
    "clusterlaunchcontrol": "clusterlaunchcontrol.try_cancel.async.shared::cta"
                            ".mbarrier::complete_tx::bytes.b128 [%r0], [%r0];",
}

KERNEL = """.version 9.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .f32 %f<8>; .reg .b16 %rs<4>;
  .reg .pred %p<2>; .reg .f64 %fd<4>;
  .shared .align 16 .b8 buf[1024];
  mov.u32 %r0, buf;
  ld.param.u64 %rd0, [p];
  {insn}
  ret;
}}
"""
FEATURES = {f.name: f for f in arch.FEATURES}


def test_every_entry_has_an_example():
    assert set(EXAMPLES) == set(FEATURES)


def _cc(target: str) -> tuple[int, int]:
    a = arch.get(target)
    return a.major, a.minor


def _below(feature: arch.Feature) -> str:
    """A target that lacks the feature: the plain target of its compute capability for
    arch-specific entries, else the newest known target below its minimum."""
    if feature.targets:
        return "sm_{}{}".format(*feature.since)
    return max((t for t in arch.known() if _cc(t) < feature.since), key=_cc)


def _opcode(insn: str) -> str:
    module = parse_module(KERNEL.format(target="sm_90", insn=insn), "k.ptx").module
    return module.functions[0].instructions[-2].full_opcode


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_table_judges_its_example(name: str):
    feature, opcode = FEATURES[name], _opcode(EXAMPLES[name])
    assert feature.matches(opcode), opcode
    lacking = arch.get(_below(feature)).lacks(opcode)
    assert lacking is not None and lacking.since >= feature.since, (opcode, lacking)
    for target in sorted(feature.targets) or [feature.minimum]:
        assert arch.get(target).lacks(opcode) is None, (opcode, target)


def _ptxas(target: str, insn: str, tmp: Path) -> subprocess.CompletedProcess:
    path = tmp / f"{target}.ptx"
    path.write_text(KERNEL.format(target=target, insn=insn))
    return subprocess.run([ptxas_path(), f"-arch={target}", str(path), "-o", "/dev/null"],
                          capture_output=True, text=True, timeout=120)


def _unknown_to_ptxas(result: subprocess.CompletedProcess) -> bool:
    return "is not defined for option" in result.stderr


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_ptxas_agrees_with_the_table(name: str, tmp_path: Path):
    if ptxas_path() is None:
        pytest.skip("ptxas is not installed")
    if (ptxas_max_version() or (0, 0)) < (9, 0):
        pytest.skip("the examples are PTX 9.0")
    feature, insn = FEATURES[name], EXAMPLES[name]
    accepted = 0
    # every target of an arch-specific entry; else the minimum, or (one ptxas no longer
    # knows) the oldest target it knows above it
    having = sorted(feature.targets) or sorted(
        (t for t in arch.known() if _cc(t) >= feature.since), key=_cc)
    for target in having:
        result = _ptxas(target, insn, tmp_path)
        if not _unknown_to_ptxas(result):
            assert result.returncode == 0, f"{target}: {result.stderr}"
            accepted += 1
            if not feature.targets:
                break
    assert accepted, "ptxas knows none of the targets that should have it"
    below = _ptxas(_below(feature), insn, tmp_path)
    if not _unknown_to_ptxas(below):  # sm_70 and older: gone from CUDA 13's ptxas
        assert below.returncode != 0, f"{_below(feature)} accepts `{insn}`"
