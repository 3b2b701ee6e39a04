"""The launch pipeline without a GPU: each launch is built, checked by the pre-launch
hook with its real configuration, and only then run; an error-level finding stops it."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ptxlint
from pricing_kernels import Spec, build, catalog, prelaunch, pricer
from pricing_kernels.gpu import DeviceUnavailable, GpuRunner

from .conftest import RecordingRunner


@pytest.fixture
def hook_calls(monkeypatch):
    calls = []
    real = ptxlint.check_before_launch

    def spy(ptx, kernel, **kw):
        calls.append((kernel, kw))
        return real(ptx, kernel, **kw)

    monkeypatch.setattr(ptxlint, "check_before_launch", spy)
    return calls


def test_every_launch_is_checked_with_its_real_configuration(recording_runner, hook_calls,
                                                             compiler, monkeypatch):
    monkeypatch.setattr(pricer, "open_runner", lambda *a: recording_runner)
    spec = Spec("european-call", paths=10_000, rng="lcg")
    result = pricer.price(spec, "gpu")
    assert [launch.kernel for launch, _ in recording_runner.launches] == ["european",
                                                                            "reduce_final"]
    assert [k for k, _ in hook_calls] == ["european", "reduce_final"]
    mc, reduce = (launch for launch, _ in recording_runner.launches)
    kw = hook_calls[0][1]
    assert (kw["block"], kw["grid"], kw["arch"]) == (mc.block, mc.grid, "sm_80")
    # only what can change a finding: n_samples (the loop bound) and is_put; not
    # first_sample, the seed words, spot, strike, mu or sig (catalog's docstring)
    assert kw["params"] == {3: 10_000, 10: 0}
    assert [a.name for a in mc.args] == [
        "partial", "gen_state", "first_sample", "n_samples", "seed_lo", "seed_hi", "spot",
        "strike", "mu", "sig", "is_put"]
    # partial sums, one LCG state per thread of the grid
    assert kw["extents"] == {0: 16 * mc.grid, 1: 4 * mc.grid * catalog.BLOCK}
    assert hook_calls[1][1]["params"] == {2: mc.grid}
    assert result.device == "recording" and result.lint["enabled"]
    assert [r["kernel"] for r in result.lint["launches"]] == ["european", "reduce_final"]


def test_an_error_finding_stops_the_launch(recording_runner, compiler):
    launch = catalog.philox_raw_launch(1000)
    launch.block = 2048  # more threads than a block may have: a launch-config error
    with pytest.raises(ptxlint.PreLaunchError) as err:
        pricer.run_launch(recording_runner, launch, lint=True, records=[])
    assert recording_runner.launches == []
    assert "ptxlint refused the launch" in str(err.value)


def _refused(launch) -> prelaunch.LaunchRefused:
    runner = RecordingRunner()
    with pytest.raises(prelaunch.LaunchRefused) as err:
        pricer.run_launch(runner, launch, lint=True, records=[])
    assert runner.launches == []
    return err.value


def test_a_refusal_shows_the_error_first_and_names_buffers_by_role(compiler):
    """A European launch whose `partial` buffer holds one block's pair, not one per
    block: an out-of-bounds store. The error comes first, the kernel's notes are left
    out (counted, shown with `notes=True`), and the buffer is called `partial`."""
    launch = catalog.mc_launch(Spec("european-call", paths=10_000), 10_000)
    launch.args[0] = catalog.Buffer("partial", np.zeros(2, np.float64), output=True)
    refused = _refused(launch)
    text = str(refused)
    assert text.startswith("ptxlint refused the launch of european: 1 error")
    heads = [line for line in text.splitlines() if re.match(r"(error|warning|note)\[", line)]
    assert heads[0].startswith("error[out-of-bounds]: out-of-bounds store")
    assert "`partial`" in heads[0]
    # the PTX name is left only in the quoted PTX source lines (`639 | ...`)
    assert all(" | " in line for line in text.splitlines() if "european_param_" in line)
    notes = [d for d in refused.diagnostics if d.severity == ptxlint.Severity.NOTE]
    assert notes and "note[" not in text
    assert f"{len(notes)} note" in text.splitlines()[-1] and "--notes" in text
    full = refused.render(notes=True)
    assert full.count("note[") == len(notes)
    assert full.index("error[") < full.index("note[")


def test_findings_point_at_the_real_kernel_source(compiler):
    """NVRTC names the program by its real path, so a finding's CUDA location is the
    file in pricing_kernels/kernels/, not a name resolved against the current directory."""
    launch = catalog.mc_launch(Spec("european-call", paths=10_000), 10_000)
    ptx = pricer.compile_ptx(launch.source, "sm_80", launch.defines).ptx
    found = prelaunch.check(launch, ptx, "sm_80").findings
    located = [d.cuda for d in found if d.cuda is not None]
    assert located
    files = {Path(c.file) for c in located}
    assert all(f.is_file() for f in files), files
    assert build.KERNELS / "mc.cu" in files


def test_new_market_data_or_seed_lints_nothing_again(recording_runner, compiler,
                                                     monkeypatch, tmp_path):
    """Two runs differing only in spot, strike and seed give the hook the same launch
    (grid, block, buffer sizes, control scalars), so the second analyses nothing."""
    import ptxlint.lint  # noqa: PLC0415

    monkeypatch.setenv("PRICING_CACHE_DIR", str(tmp_path))  # no results from other runs

    analyses = []
    real = ptxlint.lint.lint_text
    monkeypatch.setattr(ptxlint.lint, "lint_text",
                        lambda *a, **k: analyses.append(a) or real(*a, **k))
    monkeypatch.setattr(pricer, "open_runner", lambda *a: recording_runner)
    pricer.price(Spec("asian-call", paths=5000, steps=12, seed=77), "gpu")
    before = len(analyses)
    assert before >= 1
    for spot, strike, seed in ((101.5, 95.0, 78), (80.0, 120.0, 2**40 + 5)):
        r = pricer.price(Spec("asian-call", spot=spot, strike=strike, paths=5000, steps=12,
                              seed=seed, rate=0.01, vol=0.3), "gpu")
        assert r.lint["enabled"] and len(r.lint["launches"]) == 2
    assert len(analyses) == before
    pricer.price(Spec("asian-call", paths=5000, steps=13), "gpu")  # a loop bound: analysed
    assert len(analyses) > before


def test_no_lint_skips_the_hook(recording_runner, hook_calls, compiler):
    launch = catalog.philox_raw_launch(1000)
    records = []
    pricer.run_launch(recording_runner, launch, lint=False, records=records)
    assert hook_calls == [] and records == []
    assert len(recording_runner.launches) == 1


def test_lattice_launch(recording_runner, compiler, monkeypatch):
    monkeypatch.setattr(pricer, "open_runner", lambda *a: recording_runner)
    pricer.price(Spec("american-put", steps=300), "gpu", lint=False)
    [(launch, ptx)] = recording_runner.launches
    assert launch.kernel == "binomial" and launch.grid == 1 and ".entry binomial(" in ptx
    assert launch.lint_extents()[1] == 8 * 301  # one level of doubles


def test_missing_gpu_is_one_line_and_the_cpu_path():
    try:
        GpuRunner()
    except DeviceUnavailable as exc:
        reason = str(exc)
    else:
        pytest.skip("a GPU is present")
    assert "\n" not in reason and reason.startswith("no GPU")
    lines = []
    result = pricer.price(Spec("european-call", paths=1000), "gpu", notice=lines.append)
    assert result.device == "cpu" and result.lint is None
    assert lines == [f"{reason}: using the CPU path"]


def test_moments():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    mean, se = pricer.moments(x.sum(), (x * x).sum(), x.size)
    assert mean == pytest.approx(x.mean())
    assert se == pytest.approx(x.std(ddof=1) / 2)


def test_emulator_runs_report_progress(compiler, monkeypatch):
    """A Philox run on the emulator is split into launches (each a range of samples), the
    progress callback hears after each, and the price is the one-launch price; launches
    of equal shape are analysed once. LCG and MT runs stay one launch."""
    from pricing_kernels.emulator import EmulatorRunner  # noqa: PLC0415

    spec = Spec("european-call", paths=5000)
    whole = pricer.price(spec, "emulator")
    monkeypatch.setattr(EmulatorRunner, "chunk_normals", 2048)
    seen = []
    split = pricer.price(spec, "emulator", progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [r["kernel"] for r in split.lint["launches"]] == ["european"] * 3 + ["reduce_final"]
    assert split.price == pytest.approx(whole.price, rel=1e-12)
    assert split.stderr == pytest.approx(whole.stderr, rel=1e-9)
    seen.clear()
    mt = pricer.price(Spec("european-call", paths=5000, rng="mt"), "emulator",
                      progress=lambda d, t: seen.append((d, t)))
    assert seen == [(0, 1), (1, 1)] and len(mt.lint["launches"]) == 2


def test_launch_ranges():
    class Split:
        chunk_normals = 4096

    asian = Spec("asian-call", steps=16, paths=10_000)  # 16 normals a sample: 256 a launch
    assert pricer.launch_ranges(asian, 10_000, Split()) == [
        (first, min(1024, 10_000 - first)) for first in range(0, 10_000, 1024)]
    european = Spec("european-call")
    assert pricer.launch_ranges(european, 10_000, Split()) == [(0, 4096), (4096, 4096),
                                                               (8192, 1808)]
    assert pricer.launch_ranges(european, 10_000, object()) == [(0, 10_000)]
    assert pricer.launch_ranges(Spec("european-call", rng="lcg"), 10_000, Split()) == [
        (0, 10_000)]


def test_counts_near_2_32_are_launched_as_64_bits(recording_runner, hook_calls, compiler,
                                                   monkeypatch):
    """`--paths 4294967293` priced 0: the kernel's 32-bit `(n_samples + 3) / 4` wrapped.
    Counts now travel as 8-byte `unsigned long long` (the kernel's parameter is .u64), the
    hook checks the launch with the full value, and counts past 2^32 are accepted."""
    monkeypatch.setattr(pricer, "open_runner", lambda *a: recording_runner)
    for paths in (4294967293, (1 << 32) + 5):
        pricer.price(Spec("european-call", paths=paths), "gpu")
        launch, ptx = recording_runner.launches[-2]
        count = launch.args[3]
        assert (count.name, count.value, count.array().dtype) == ("n_samples", paths,
                                                                  np.uint64)
        assert ".param .u64 european_param_3" in ptx
        assert hook_calls[-2][1]["params"][3] == paths
    with pytest.raises(ValueError, match="below 2\\^53"):
        Spec("european-call", paths=1 << 53)
