"""Running launches on a GPU through the CUDA driver API of cuda-python: `cuInit`,
`cuModuleLoadData` on the PTX (the driver JIT-compiles it), `cuLaunchKernel`, device
memory, and events around each launch for the kernel time.

`GpuRunner()` raises `DeviceUnavailable` with a one-line reason when cuda-python, the
driver library (libcuda) or a device is missing; the pricer then says so and uses the
CPU path.
"""
from __future__ import annotations

import hashlib

import numpy as np

from .build import MIN_ARCH
from .catalog import Buffer, Launch


class DeviceUnavailable(RuntimeError):
    """No usable GPU; the message is one line for the user."""


class GpuError(RuntimeError):
    """A driver call failed."""


class GpuRunner:
    name = "gpu"

    def __init__(self, ordinal: int = 0) -> None:
        try:
            from cuda.bindings import driver  # noqa: PLC0415
        except ImportError:
            raise DeviceUnavailable("no GPU: cuda-python is not installed "
                                    "(pip install 'ptxlint[cuda]')") from None
        self.cu = cu = driver
        try:
            _ok(cu, cu.cuInit(0))
        except RuntimeError as exc:  # cuda-python could not dlopen libcuda.so.1
            raise DeviceUnavailable(f"no GPU: the CUDA driver library is missing ({exc})") \
                from None
        except GpuError as exc:
            raise DeviceUnavailable(f"no GPU: cuInit failed ({exc})") from None
        if _ok(cu, cu.cuDeviceGetCount()) <= ordinal:
            raise DeviceUnavailable("no GPU: the CUDA driver sees no device")
        self.device = _ok(cu, cu.cuDeviceGet(ordinal))
        attr = cu.CUdevice_attribute
        major = _ok(cu, cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device))
        minor = _ok(cu, cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device))
        if major * 10 + minor < MIN_ARCH:
            raise DeviceUnavailable(f"no usable GPU: sm_{major}{minor} is older than sm_75, "
                                    "the oldest architecture CUDA 13 supports")
        self.arch = f"sm_{major}{minor}"
        raw = _ok(cu, cu.cuDeviceGetName(128, self.device))
        self.description = bytes(raw).split(b"\0", 1)[0].decode(errors="replace")
        self.context = _ok(cu, cu.cuDevicePrimaryCtxRetain(self.device))
        _ok(cu, cu.cuCtxSetCurrent(self.context))
        self._modules: dict[str, object] = {}

    def function(self, ptx: str, kernel: str):
        key = hashlib.sha256(ptx.encode()).hexdigest()
        module = self._modules.get(key)
        if module is None:
            image = np.frombuffer(ptx.encode() + b"\0", dtype=np.uint8)  # NUL-terminated
            module = _ok(self.cu, self.cu.cuModuleLoadData(image.ctypes.data))
            self._modules[key] = module
        return _ok(self.cu, self.cu.cuModuleGetFunction(module, kernel.encode()))

    def run(self, launch: Launch, ptx: str) -> tuple[dict[str, np.ndarray], float]:
        """Run one launch: its buffers are copied in, its outputs copied back. Returns
        the outputs by name and the kernel time in seconds (events around the launch)."""
        cu = self.cu
        fn = self.function(ptx, launch.kernel)
        device: dict[str, object] = {}
        holders = []  # the kernelParams array points into these: keep them alive
        start = _ok(cu, cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DEFAULT))
        stop = _ok(cu, cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DEFAULT))
        try:
            for arg in launch.args:
                if isinstance(arg, Buffer):
                    data = np.ascontiguousarray(arg.data)
                    ptr = _ok(cu, cu.cuMemAlloc(max(1, data.nbytes)))
                    device[arg.name] = ptr
                    if data.nbytes:
                        _ok(cu, cu.cuMemcpyHtoD(ptr, data.ctypes.data, data.nbytes))
                    holders.append(np.array([int(ptr)], dtype=np.uint64))
                else:
                    holders.append(arg.array())
            params = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
            _ok(cu, cu.cuEventRecord(start, 0))
            _ok(cu, cu.cuLaunchKernel(fn, launch.grid, 1, 1, launch.block, 1, 1,
                                      launch.dynamic_smem, 0, params.ctypes.data, 0))
            _ok(cu, cu.cuEventRecord(stop, 0))
            _ok(cu, cu.cuEventSynchronize(stop))
            ms = _ok(cu, cu.cuEventElapsedTime(start, stop))
            outputs = {}
            for arg in launch.args:
                if isinstance(arg, Buffer) and arg.output:
                    host = np.empty_like(arg.data)
                    if host.nbytes:
                        _ok(cu, cu.cuMemcpyDtoH(host.ctypes.data, device[arg.name],
                                                host.nbytes))
                    outputs[arg.name] = host
        finally:
            for ptr in device.values():
                cu.cuMemFree(ptr)
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)
        return outputs, ms / 1000.0

    def close(self) -> None:
        for module in self._modules.values():
            self.cu.cuModuleUnload(module)
        self._modules.clear()
        self.cu.cuDevicePrimaryCtxRelease(self.device)


def _ok(cu, result):
    """The value of a cuda-python call `(err, value...)`; GpuError when err is set."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise GpuError(f"{name.decode() if isinstance(name, bytes) else name} ({int(err)})")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


__all__ = ["GpuRunner", "DeviceUnavailable", "GpuError"]
