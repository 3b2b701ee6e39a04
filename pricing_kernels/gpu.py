"""Running launches on a GPU through the CUDA driver API of cuda-python: `cuInit`,
`cuModuleLoadDataEx` on the PTX (the driver JIT-compiles it; its error log is kept),
`cuLaunchKernel`, device memory, and events around each launch for the kernel time.

`GpuRunner()` raises `DeviceUnavailable` with a one-line reason when no GPU can be used:
cuda-python or the driver library (libcuda) is missing, the driver sees no device, the
driver is older than the CUDA version whose PTX the compiler emits (a CUDA 12 driver
cannot load NVRTC 13.0's `.version 9.0`), the device is older than sm_75, in prohibited
compute mode, or busy (its primary context cannot be retained). The pricer then says so
and uses the CPU path, or under `--strict` stops (exit 2). A driver that still refuses
the PTX at module load (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, no JIT compiler) raises
`DeviceUnavailable` from `run()` the same way; any other failed call raises `GpuError`
with the call, the error's name and, for a module load, the JIT compiler's log.

The kernels are built for the device's compute capability, or for a GPU newer than the
compiler, for the newest one the compiler supports (`build.target_arch`): the driver
JIT-compiles compute_XX PTX for any newer device.

Every method that uses the context pushes it first and pops it after (`_current`), so a
runner opened in one thread runs launches from another.

`driver` (tests): an object standing in for `cuda.bindings.driver`.
"""
from __future__ import annotations

import hashlib
import re
from contextlib import contextmanager

import numpy as np

from .build import MIN_ARCH, available, target_arch
from .catalog import Buffer, Launch

JIT_LOG_BYTES = 1 << 14  # the JIT compiler's error log: a driver compile error's message
# module-load results that mean "this driver cannot run our PTX", not "the PTX is wrong"
_UNUSABLE_AT_LOAD = {
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "the driver cannot load PTX ISA {isa}: update "
                                          "the NVIDIA driver",
    "CUDA_ERROR_JIT_COMPILER_NOT_FOUND": "the driver has no PTX JIT compiler",
    "CUDA_ERROR_JIT_COMPILATION_DISABLED": "PTX JIT compilation is disabled",
}


class DeviceUnavailable(RuntimeError):
    """No usable GPU; the message is one line for the user."""


class GpuError(RuntimeError):
    """A driver call failed; the message names the call and the error."""

    def __init__(self, message: str, code: str = ""):
        super().__init__(message)
        self.code = code  # "CUDA_ERROR_..."


class GpuRunner:
    name = "gpu"

    def __init__(self, ordinal: int = 0, driver=None) -> None:
        if driver is None:
            try:
                from cuda.bindings import driver  # noqa: PLC0415
            except ImportError:
                raise DeviceUnavailable("no GPU: cuda-python is not installed "
                                        "(pip install 'ptxlint[cuda]')") from None
        self.cu = cu = driver
        self.context = None
        self._modules: dict[str, object] = {}
        try:
            _ok(cu, cu.cuInit(0), "cuInit")
        except GpuError as exc:  # before RuntimeError: GpuError is one
            if exc.code == "CUDA_ERROR_NO_DEVICE":
                raise DeviceUnavailable(f"no GPU: the CUDA driver sees no device "
                                        f"({exc.code})") from None
            raise DeviceUnavailable(f"device unavailable: {exc}") from None
        except RuntimeError as exc:  # cuda-python could not dlopen libcuda.so.1
            raise DeviceUnavailable(f"no GPU: the CUDA driver library is missing ({exc})") \
                from None
        try:
            self._set_up(ordinal)
        except GpuError as exc:
            self.close()
            raise DeviceUnavailable(f"device unavailable: {exc}") from None
        except DeviceUnavailable:
            self.close()
            raise

    def _set_up(self, ordinal: int) -> None:
        cu = self.cu
        self.driver_version = _ok(cu, cu.cuDriverGetVersion(), "cuDriverGetVersion")
        needed = _compiler_cuda()
        if needed is not None and self.driver_version < needed[0]:
            raise DeviceUnavailable(
                f"device unavailable: the CUDA driver supports CUDA "
                f"{_cuda(self.driver_version)}, but the kernels are built by {needed[1]} "
                f"(PTX that needs a CUDA {_cuda(needed[0])} driver or newer): update the "
                "NVIDIA driver")
        if _ok(cu, cu.cuDeviceGetCount(), "cuDeviceGetCount") <= ordinal:
            raise DeviceUnavailable("no GPU: the CUDA driver sees no device")
        self.device = _ok(cu, cu.cuDeviceGet(ordinal), "cuDeviceGet")
        raw = _ok(cu, cu.cuDeviceGetName(128, self.device), "cuDeviceGetName")
        self.description = bytes(raw).split(b"\0", 1)[0].decode(errors="replace")
        attr = cu.CUdevice_attribute
        major = self._attribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        minor = self._attribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        cc = major * 10 + minor
        if cc < MIN_ARCH:
            raise DeviceUnavailable(f"no usable GPU: {self.description} (sm_{cc}) is older "
                                    "than sm_75, the oldest architecture CUDA 13 supports")
        mode = self._attribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE)
        if mode == int(cu.CUcomputemode.CU_COMPUTEMODE_PROHIBITED):
            raise DeviceUnavailable(f"device unavailable: {self.description} is in "
                                    "prohibited compute mode (nvidia-smi -c)")
        self.device_arch = f"sm_{cc}"
        self.arch = f"sm_{target_arch(cc)}"
        try:
            self.context = _ok(cu, cu.cuDevicePrimaryCtxRetain(self.device),
                               "cuDevicePrimaryCtxRetain")
        except GpuError as exc:
            busy = " (busy, or exclusive to another process)" \
                if exc.code == "CUDA_ERROR_DEVICE_UNAVAILABLE" else ""
            raise DeviceUnavailable(f"device unavailable: cannot use {self.description}: "
                                    f"{exc}{busy}") from None
        with self._current():  # the context works here, not only at the first launch
            pass

    def _attribute(self, which) -> int:
        return int(_ok(self.cu, self.cu.cuDeviceGetAttribute(which, self.device),
                       "cuDeviceGetAttribute"))

    @contextmanager
    def _current(self):
        """The runner's context current in the calling thread for the block."""
        cu = self.cu
        _ok(cu, cu.cuCtxPushCurrent(self.context), "cuCtxPushCurrent")
        try:
            yield
        finally:
            cu.cuCtxPopCurrent()

    def function(self, ptx: str, kernel: str):
        key = hashlib.sha256(ptx.encode()).hexdigest()
        with self._current():
            module = self._modules.get(key)
            if module is None:
                module = self._modules[key] = self._load(ptx)
            return _ok(self.cu, self.cu.cuModuleGetFunction(module, kernel.encode()),
                       "cuModuleGetFunction")

    def _load(self, ptx: str):
        """`cuModuleLoadDataEx` with an error-log buffer, so that a JIT compile error
        says what the driver's compiler said."""
        cu = self.cu
        image = np.frombuffer(ptx.encode() + b"\0", dtype=np.uint8)  # NUL-terminated
        log = bytearray(JIT_LOG_BYTES)
        options = [cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER,
                   cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        result = cu.cuModuleLoadDataEx(image.ctypes.data, len(options), options,
                                       [log, JIT_LOG_BYTES])
        try:
            return _ok(cu, result, "cuModuleLoadDataEx")
        except GpuError as exc:
            text = bytes(log).split(b"\0", 1)[0].decode(errors="replace").strip()
            if exc.code in _UNUSABLE_AT_LOAD:
                isa = re.search(r"^\s*\.version\s+(\S+)", ptx, re.M)
                reason = _UNUSABLE_AT_LOAD[exc.code].format(isa=isa.group(1) if isa else "?")
                raise DeviceUnavailable(f"device unavailable: {reason} ({exc.code}"
                                        + (f": {text.splitlines()[0]}" if text else "")
                                        + ")") from None
            raise GpuError(f"the driver could not load the module: {exc}"
                           + (f"\n{text}" if text else " (the JIT log is empty)"),
                           exc.code) from None

    def run(self, launch: Launch, ptx: str) -> tuple[dict[str, np.ndarray], float]:
        """Run one launch: its buffers are copied in, its outputs copied back. Returns
        the outputs by name and the kernel time in seconds (events around the launch)."""
        cu = self.cu
        fn = self.function(ptx, launch.kernel)
        with self._current():
            device: dict[str, object] = {}
            events: list = []
            holders = []  # the kernelParams array points into these: keep them alive
            try:
                for _ in range(2):
                    events.append(_ok(cu, cu.cuEventCreate(
                        cu.CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate"))
                start, stop = events
                for arg in launch.args:
                    if isinstance(arg, Buffer):
                        data = np.ascontiguousarray(arg.data)
                        ptr = _ok(cu, cu.cuMemAlloc(max(1, data.nbytes)), "cuMemAlloc")
                        device[arg.name] = ptr
                        if data.nbytes:
                            _ok(cu, cu.cuMemcpyHtoD(ptr, data.ctypes.data, data.nbytes),
                                "cuMemcpyHtoD")
                        holders.append(np.array([int(ptr)], dtype=np.uint64))
                    else:
                        holders.append(arg.array())
                params = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
                _ok(cu, cu.cuEventRecord(start, 0), "cuEventRecord")
                _ok(cu, cu.cuLaunchKernel(fn, launch.grid, 1, 1, launch.block, 1, 1,
                                          launch.dynamic_smem, 0, params.ctypes.data, 0),
                    f"cuLaunchKernel({launch.kernel})")
                _ok(cu, cu.cuEventRecord(stop, 0), "cuEventRecord")
                _ok(cu, cu.cuEventSynchronize(stop), f"the {launch.kernel} kernel")
                ms = _ok(cu, cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime")
                outputs = {}
                for arg in launch.args:
                    if isinstance(arg, Buffer) and arg.output:
                        host = np.empty_like(arg.data)
                        if host.nbytes:
                            _ok(cu, cu.cuMemcpyDtoH(host.ctypes.data, device[arg.name],
                                                    host.nbytes), "cuMemcpyDtoH")
                        outputs[arg.name] = host
            finally:
                for ptr in device.values():
                    cu.cuMemFree(ptr)
                for event in events:
                    cu.cuEventDestroy(event)
        return outputs, ms / 1000.0

    def close(self) -> None:
        """Unload the modules and release the context; safe to call twice."""
        if self.context is None:
            return
        if self._modules:
            with self._current():
                for module in self._modules.values():
                    self.cu.cuModuleUnload(module)
            self._modules.clear()
        self.cu.cuDevicePrimaryCtxRelease(self.device)
        self.context = None


def _compiler_cuda() -> tuple[int, str] | None:
    """(the CUDA version the compiler's PTX needs, as cuDriverGetVersion counts:
    13000 for 13.0; "NVRTC 13.0"), or None without a compiler."""
    found = available()
    m = re.fullmatch(r"(\w+) (\d+)\.(\d+)", found or "")
    if not m:
        return None
    return int(m.group(2)) * 1000 + int(m.group(3)) * 10, \
        f"{m.group(1).upper()} {m.group(2)}.{m.group(3)}"


def _cuda(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}"


def _ok(cu, result, call: str = "a driver call"):
    """The value of a cuda-python call `(err, value...)`; GpuError when err is set,
    naming `call` and the error (from the enum: no driver call needed)."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        try:
            name = cu.CUresult(err).name
        except (ValueError, TypeError):
            name = f"CUresult {int(err)}"
        raise GpuError(f"{call} failed ({name})", name)
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


__all__ = ["GpuRunner", "DeviceUnavailable", "GpuError"]
