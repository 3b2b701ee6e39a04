"""`GpuRunner` on every machine, over the fake driver (fake_driver.py): set-up and its
failures (each a one-line `DeviceUnavailable`: the CPU path by default, exit 2 under
`--strict`), module loading with the JIT log, launch packing, the context in other
threads, clean-up. The kernels run on ptxlint's emulator from the PTX."""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from cuda.bindings import driver as real

from pricing_kernels import Spec, build, catalog, cli, gpu, pricer
from pricing_kernels.gpu import DeviceUnavailable, GpuError, GpuRunner

from .fake_driver import FakeDriver

E = real.CUresult


def _unavailable(**fake) -> str:
    with pytest.raises(DeviceUnavailable) as err:
        GpuRunner(driver=FakeDriver(**fake))
    message = str(err.value)
    assert "\n" not in message
    return message


def test_driver_without_a_device_is_told_so():
    """cuInit's CUDA_ERROR_NO_DEVICE is a GpuError, itself a RuntimeError: it must not be
    taken for cuda-python's failure to load the library."""
    message = _unavailable(init_error=E.CUDA_ERROR_NO_DEVICE)
    assert message == "no GPU: the CUDA driver sees no device (CUDA_ERROR_NO_DEVICE)"
    assert _unavailable(devices=0) == "no GPU: the CUDA driver sees no device"


def test_missing_driver_library():
    class NoLibrary(FakeDriver):
        def cuInit(self, flags):
            raise RuntimeError("Failed to dlopen libcuda.so.1")

    with pytest.raises(DeviceUnavailable, match=r"^no GPU: the CUDA driver library is "
                       r"missing \(Failed to dlopen libcuda.so.1\)$"):
        GpuRunner(driver=NoLibrary())


def test_other_init_failures_are_device_unavailable():
    message = _unavailable(init_error=E.CUDA_ERROR_OPERATING_SYSTEM)
    assert message == "device unavailable: cuInit failed (CUDA_ERROR_OPERATING_SYSTEM)"


def test_driver_older_than_the_compiler(compiler):
    """A CUDA 12.4 driver cannot load the PTX of a CUDA 13 compiler: said before any
    module is loaded, with both versions."""
    message = _unavailable(version=12040, ptx_isa=(8, 4))
    assert message.startswith("device unavailable: the CUDA driver supports CUDA 12.4, but "
                              f"the kernels are built by {compiler.upper()}")
    assert "update the NVIDIA driver" in message


def test_prohibited_and_busy_devices():
    prohibited = int(real.CUcomputemode.CU_COMPUTEMODE_PROHIBITED)
    assert "prohibited compute mode" in _unavailable(compute_mode=prohibited)
    busy = _unavailable(retain_error=E.CUDA_ERROR_DEVICE_UNAVAILABLE)
    assert busy.startswith("device unavailable: cannot use Fake GPU")
    assert "cuDevicePrimaryCtxRetain failed (CUDA_ERROR_DEVICE_UNAVAILABLE)" in busy
    assert "busy" in busy


def test_device_older_than_sm_75():
    assert "sm_70) is older than sm_75" in _unavailable(cc=(7, 0))


def test_a_gpu_newer_than_the_compiler_gets_its_newest_architecture(compiler):
    runner = GpuRunner(driver=FakeDriver(cc=(15, 0)))
    try:
        newest = max(build.supported_archs())
        assert runner.arch == f"sm_{newest}" and runner.device_arch == "sm_150"
        out = pricer.run_launch(runner, catalog.philox_raw_launch(4), False, [])[0]["out"]
        assert ".target sm_%d" % newest in runner.cu.launches[0]["ptx"]
        assert out.any()
    finally:
        runner.close()


def _fake_gpu(monkeypatch, **fake):
    """`GpuRunner()` (as the pricer opens it) over a fake driver."""
    made = []

    def opener(ordinal: int = 0):
        made.append(GpuRunner(ordinal, driver=FakeDriver(**fake)))
        return made[-1]

    monkeypatch.setattr(gpu, "GpuRunner", opener)
    return made


def test_unusable_gpu_falls_back_or_fails_under_strict(monkeypatch):
    _fake_gpu(monkeypatch, retain_error=E.CUDA_ERROR_DEVICE_UNAVAILABLE)
    lines = []
    r = pricer.price(Spec("european-call", paths=1000), "gpu", notice=lines.append)
    assert r.device == "cpu" and len(lines) == 1
    assert lines[0].startswith("device unavailable: cannot use Fake GPU")
    assert lines[0].endswith(": using the CPU path")
    with pytest.raises(DeviceUnavailable):
        pricer.price(Spec("european-call", paths=1000), "gpu", strict=True)


def test_strict_exit_status(monkeypatch, capsys):
    _fake_gpu(monkeypatch, init_error=E.CUDA_ERROR_NO_DEVICE)
    assert cli.main(["european-call", "--paths", "1000", "--strict"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no GPU: the CUDA driver sees no device") and "--strict" in err
    assert cli.main(["european-call", "--paths", "1000", "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["device"] == "cpu" and "using the CPU path" in out.err


def test_ptx_the_driver_refuses_at_load_falls_back(monkeypatch, compiler):
    """A driver that passes the version check but still refuses the PTX ISA when the
    module is loaded (CUDA_ERROR_UNSUPPORTED_PTX_VERSION): device unavailable, with the
    JIT log's line; the CPU path, or under strict the error."""
    made = _fake_gpu(monkeypatch, ptx_isa=(8, 8))
    lines = []
    r = pricer.price(Spec("european-call", paths=1000), "gpu", notice=lines.append)
    assert r.device == "cpu" and len(lines) == 1
    assert lines[0].startswith("device unavailable: the driver cannot load PTX ISA 9.0")
    assert "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: ptxas" in lines[0]
    with pytest.raises(DeviceUnavailable):
        pricer.price(Spec("european-call", paths=1000), "gpu", strict=True)
    assert made[0].cu.launches == []


def test_a_jit_error_shows_the_driver_log():
    runner = GpuRunner(driver=FakeDriver())
    ptx = ".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  bogus;\n}\n"
    try:
        with pytest.raises(GpuError) as err:
            runner.function(ptx, "k")
    finally:
        runner.close()
    text = str(err.value)
    assert text.startswith("the driver could not load the module: cuModuleLoadDataEx failed "
                           "(CUDA_ERROR_INVALID_PTX)")
    assert "ptxas fatal" in text and "bogus" in text  # the JIT's own message
    assert runner.cu.retained == 0


def test_prices_through_the_driver_api_and_releases_everything(compiler):
    """The CPU path's sums for the same samples (Philox), the float64 lattice's price;
    64-bit counts packed in 8 bytes; every allocation, event and module released."""
    fake = FakeDriver()
    runner = GpuRunner(driver=fake)
    spec = Spec("european-call", paths=5000)
    try:
        r = pricer.price(spec, "gpu", runner=runner)
        lattice = pricer.price(Spec("american-put", steps=200), "gpu", runner=runner)
        assert fake.memory == {} and fake.events == {}
    finally:
        runner.close()
    assert r.device == "gpu" and r.lint["enabled"]
    assert r.price == pytest.approx(pricer.price(spec, "cpu").price, rel=1e-5)
    from pricing_kernels.reference import binomial  # noqa: PLC0415

    assert lattice.price == pytest.approx(binomial(100, 100, 0.05, 0.2, 1.0, 200, put=True,
                                                   american=True), rel=1e-6)
    european = fake.launches[0]
    assert european["kernel"] == "european" and european["block"] == (256, 1, 1)
    first, count = european["params"][2:4]
    assert (first, count) == ((0).to_bytes(8, "little"), (5000).to_bytes(8, "little"))
    assert [launch["kernel"] for launch in fake.launches] == ["european", "reduce_final",
                                                              "binomial"]
    assert (fake.memory, fake.modules, fake.events, fake.retained) == ({}, {}, {}, 0)
    runner.close()  # twice is harmless


def test_buffers_and_scalars_reach_the_kernel():
    """lcg_raw: the state buffer's words go in, each thread's draws and final state come
    back; the scalar `draws` arrives as its 4 bytes."""
    fake = FakeDriver()
    runner = GpuRunner(driver=fake)
    launch = catalog.lcg_raw_launch(seed=3, blocks=1, draws=2)
    try:
        outputs, seconds = runner.run(launch, _ptx(launch))
    finally:
        runner.close()
    from pricing_kernels import rng  # noqa: PLC0415

    words, final = rng.lcg_draws(launch.args[1].data, 2)
    assert (outputs["out"].reshape(2, -1) == words).all() and (outputs["state"] == final).all()
    assert fake.launches[0]["params"][2] == (2).to_bytes(4, "little")
    assert seconds >= 0


def test_runs_from_another_thread():
    """The context is made current in each call, so a runner opened in one thread runs
    launches from another (the fake keeps the current context per thread)."""
    runner = GpuRunner(driver=FakeDriver())
    launch = catalog.philox_raw_launch(8, (1, 2, 3, 4), (5, 6))
    got = {}

    def work():
        try:
            got["out"] = runner.run(launch, _ptx(launch))[0]["out"]
        except Exception as exc:  # noqa: BLE001 - reported below
            got["error"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    runner.close()
    assert "error" not in got, got.get("error")
    from pricing_kernels import rng  # noqa: PLC0415

    want = rng.philox4x32_10((1 + np.arange(8, dtype=np.uint64), 2, 3, 4), (5, 6))
    assert (got["out"].reshape(8, 4).T == want).all()


def test_a_bad_access_fails_at_synchronisation():
    """An out-of-bounds store (a `partial` buffer too small, not linted): the kernel
    fails at synchronisation, GpuError names it; nothing is leaked."""
    fake = FakeDriver()
    runner = GpuRunner(driver=fake)
    launch = catalog.mc_launch(Spec("european-call", paths=10_000), 10_000)
    launch.args[0] = catalog.Buffer("partial", np.zeros(2, np.float64), output=True)
    try:
        with pytest.raises(GpuError, match=r"the european kernel failed "
                           r"\(CUDA_ERROR_ILLEGAL_ADDRESS\)"):
            runner.run(launch, _ptx(launch))
        assert fake.memory == {} and fake.events == {}
    finally:
        runner.close()


def test_the_fake_applies_the_real_bindings_argument_checks():
    """What the real cuda-python refuses, the fake refuses (where libcuda is missing, so
    that the real functions can be called for their checks alone)."""
    fake = FakeDriver()
    if not fake.check_real:
        pytest.skip("libcuda loads here: the real functions would run")
    fake.cuInit(0)
    with pytest.raises(TypeError):
        fake.cuMemcpyHtoD("not a pointer", 0, 4)
    with pytest.raises(TypeError):
        fake.cuModuleLoadDataEx(0, 1, [1], [bytearray(8)])  # options must be CUjit_option
    with pytest.raises(RuntimeError, match="too small"):
        fake.cuModuleLoadDataEx(0, 2, [real.CUjit_option.CU_JIT_ERROR_LOG_BUFFER], [])
    assert fake.cuDriverGetVersion() == (E.CUDA_SUCCESS, 13000)


def _ptx(launch) -> str:
    return build.compile_ptx(launch.source, "sm_80", launch.defines).ptx
