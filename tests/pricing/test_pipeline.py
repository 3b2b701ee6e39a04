"""The launch pipeline without a GPU: each launch is built, checked by the pre-launch
hook with its real configuration, and only then run; an error-level finding stops it."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import ptxlint
from pricing_kernels import Spec, catalog, pricer
from pricing_kernels.gpu import DeviceUnavailable, GpuRunner


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
    assert kw["params"] == {2: 10_000, 3: 1234, 4: 0, 5: 100.0, 6: 100.0,
                            7: pytest.approx(0.03), 8: pytest.approx(0.2), 9: 0}
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
    assert launch.lint_extents()[1] == 4 * 301


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


class FakeDriver:
    """The slice of cuda.bindings.driver that GpuRunner.run uses, over host memory: it
    records what cuLaunchKernel is given, so the argument packing is tested without a
    GPU."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUevent_flags:
        CU_EVENT_DEFAULT = 0

    def __init__(self, launch):
        self.launch, self.memory, self.params, self.next = launch, {}, None, 0x10000

    def cuModuleLoadData(self, image):
        assert ctypes.string_at(image).startswith(b"//") or b".entry" in ctypes.string_at(image)
        return (0, "module")

    def cuModuleGetFunction(self, module, name):
        return (0, name)

    def cuMemAlloc(self, n):
        ptr, self.next = self.next, self.next + max(256, n)
        self.memory[ptr] = bytearray(n)
        return (0, ptr)

    def cuMemcpyHtoD(self, dst, src, n):
        self.memory[dst][:n] = ctypes.string_at(src, n)
        return (0,)

    def cuMemcpyDtoH(self, dst, src, n):
        ctypes.memmove(dst, bytes(self.memory[src][:n]), n)
        return (0,)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        assert (f, gx, bx, smem) == (self.launch.kernel.encode(), self.launch.grid,
                                     self.launch.block, 0)
        pointers = (ctypes.c_uint64 * len(self.launch.args)).from_address(params)
        self.params = []
        for arg, where in zip(self.launch.args, pointers, strict=True):
            if isinstance(arg, catalog.Buffer):
                address = ctypes.c_uint64.from_address(where).value
                self.params.append(bytes(self.memory[address]))
                self.memory[address][:4] = b"\x2a\0\0\0"  # the kernel writes 42
            else:
                width = np.dtype(arg.dtype).itemsize
                self.params.append(np.frombuffer(ctypes.string_at(where, width),
                                                 arg.dtype)[0])
        return (0,)

    def cuEventCreate(self, flags):
        return (0, object())

    def cuEventRecord(self, event, stream):
        return (0,)

    def cuEventSynchronize(self, event):
        return (0,)

    def cuEventElapsedTime(self, start, stop):
        return (0, 1.5)

    def cuEventDestroy(self, event):
        return (0,)

    def cuMemFree(self, ptr):
        del self.memory[ptr]
        return (0,)


def test_gpu_runner_packs_arguments_like_cuLaunchKernel_expects():
    launch = catalog.lcg_raw_launch(seed=3, blocks=1, draws=2)
    runner = GpuRunner.__new__(GpuRunner)
    runner.cu, runner.arch, runner._modules = FakeDriver(launch), "sm_80", {}
    outputs, seconds = runner.run(launch, ".version 9.0\n.entry lcg_raw()")
    out, state, draws = runner.cu.params
    assert out == launch.args[0].data.tobytes() and state == launch.args[1].data.tobytes()
    assert draws == 2 and seconds == 0.0015
    assert set(outputs) == {"out", "state"} and outputs["state"][0] == 42
    assert runner.cu.memory == {}  # everything freed
