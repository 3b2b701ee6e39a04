"""A stand-in for `cuda.bindings.driver` that runs kernels on ptxlint's emulator, so that
`GpuRunner`'s set-up, module loading, launch packing and clean-up run on every machine.

Every call goes through two checks before the fake acts:

- the real bindings' own argument checks: the fake calls the real function, whose
  conversions (handle types, integers, pointer and size arguments, JIT option lists)
  run before it loads libcuda, and accepts the call only when it then fails for want of
  the library. This is done only where libcuda cannot be loaded (checked once): where
  it can, the real function would really run.
- the fake's own: handles are the real binding types and name live objects of this
  fake (an allocation, a module, an event, the retained context), copies stay inside
  their allocation, and every call that needs a context finds one current *in the
  calling thread* (a thread-local stack, as the driver keeps).

Kernels run from the PTX alone, as the driver's JIT would take it: `kernelParams` is
decoded with the entry's parameter sizes from the PTX, a 64-bit value inside a live
allocation becomes that buffer (the emulator writes it in place), anything else is
passed as its bytes. An out-of-bounds access makes the next synchronisation fail with
CUDA_ERROR_ILLEGAL_ADDRESS. Device memory starts as 0xA5 bytes, not zeros, so a kernel
that reads what nobody wrote gets garbage, as on a GPU.

Failures to simulate (constructor): `init_error` (cuInit's result), `version` (what
cuDriverGetVersion says), `devices`, `cc`, `compute_mode`, `retain_error`
(cuDevicePrimaryCtxRetain's result), `ptx_isa` (the newest PTX ISA the "driver" loads).
"""
from __future__ import annotations

import ctypes
import itertools
import re
import threading
import time

import numpy as np
from cuda.bindings import driver as real

OK = real.CUresult.CUDA_SUCCESS
E = real.CUresult


def _real_library_loads() -> bool:
    try:
        real.cuDriverGetVersion()
    except RuntimeError:
        return False
    return True


class FakeDriver:
    def __init__(self, *, version: int = 13000, devices: int = 1, cc=(8, 0),
                 compute_mode: int = 0, init_error=None, retain_error=None,
                 ptx_isa=(9, 0), name: bytes = b"Fake GPU (ptxlint emulator)"):
        self.version, self.devices, self.cc = version, devices, cc
        self.compute_mode, self.init_error, self.retain_error = compute_mode, init_error, \
            retain_error
        self.ptx_isa, self.name = ptx_isa, name
        self.check_real = not _real_library_loads()
        self.initialised = False
        self.retained = 0
        self.memory: dict[int, np.ndarray] = {}  # address -> bytes of the allocation
        self.modules: dict[int, tuple[str, object]] = {}  # id -> (ptx, parsed module)
        self.functions: dict[int, tuple[int, str]] = {}  # id -> (module id, kernel)
        self.events: dict[int, float | None] = {}  # id -> time recorded
        self.launches: list[dict] = []  # what each cuLaunchKernel ran
        self.calls: list[str] = []
        self.sticky = None  # an error reported at the next synchronisation
        self._ids = itertools.count(0x1000)
        self._local = threading.local()

    # ---- plumbing ---------------------------------------------------------------------
    def __getattr__(self, name: str):
        """Enums and types (CUresult, CUjit_option, CUdeviceptr, ...) are the real ones;
        a driver function the fake does not implement is an error, not the real call."""
        if name.startswith("cu"):
            raise AttributeError(f"the fake driver has no {name}")
        return getattr(real, name)

    def _enter(self, name: str, *args, context: bool = False):
        """The real bindings' argument checks, then the fake's common ones; returns an
        error CUresult, or None when the call may go on."""
        self.calls.append(name)
        if self.check_real:
            try:
                getattr(real, name)(*args)
            except RuntimeError as exc:
                if "dlopen" not in str(exc):
                    raise  # an argument the real bindings refuse ("List is too small")
            else:  # pragma: no cover - would mean the real driver ran
                raise AssertionError(f"the real {name} ran")
        if name != "cuInit" and not self.initialised:
            return E.CUDA_ERROR_NOT_INITIALIZED
        if context and not self._stack():
            return E.CUDA_ERROR_INVALID_CONTEXT
        return None

    def _stack(self) -> list:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def _allocation(self, address: int, size: int) -> np.ndarray | None:
        """The bytes [address, address + size) of one live allocation, or None."""
        for base, data in self.memory.items():
            if base <= address and address + size <= base + data.size:
                return data[address - base:address - base + size]
        return None

    @staticmethod
    def _handle(value, kind) -> int:
        assert isinstance(value, kind), f"expected {kind.__name__}, got {type(value).__name__}"
        return int(value)

    # ---- initialisation and devices ------------------------------------------------------
    def cuInit(self, flags):
        if (err := self._enter("cuInit", flags)) is not None:
            return (err,)
        if self.init_error is not None:
            return (self.init_error,)
        self.initialised = True
        return (OK,)

    def cuDriverGetVersion(self):
        if (err := self._enter("cuDriverGetVersion")) is not None:
            return (err, None)
        return (OK, self.version)

    def cuDeviceGetCount(self):
        if (err := self._enter("cuDeviceGetCount")) is not None:
            return (err, None)
        return (OK, self.devices)

    def cuDeviceGet(self, ordinal):
        if (err := self._enter("cuDeviceGet", ordinal)) is not None:
            return (err, None)
        if not 0 <= ordinal < self.devices:
            return (E.CUDA_ERROR_INVALID_DEVICE, None)
        return (OK, real.CUdevice(ordinal))

    def cuDeviceGetName(self, length, dev):
        if (err := self._enter("cuDeviceGetName", length, dev)) is not None:
            return (err, None)
        self._handle(dev, real.CUdevice)
        return (OK, self.name[:length - 1].ljust(length, b"\0"))

    def cuDeviceGetAttribute(self, attrib, dev):
        if (err := self._enter("cuDeviceGetAttribute", attrib, dev)) is not None:
            return (err, None)
        self._handle(dev, real.CUdevice)
        a = real.CUdevice_attribute
        values = {a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: self.cc[0],
                  a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: self.cc[1],
                  a.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: self.compute_mode}
        return (OK, values[attrib])

    # ---- the primary context -----------------------------------------------------------
    CONTEXT = 0xC0DE

    def cuDevicePrimaryCtxRetain(self, dev):
        if (err := self._enter("cuDevicePrimaryCtxRetain", dev)) is not None:
            return (err, None)
        self._handle(dev, real.CUdevice)
        if self.retain_error is not None:
            return (self.retain_error, None)
        self.retained += 1
        return (OK, real.CUcontext(self.CONTEXT))

    def cuDevicePrimaryCtxRelease(self, dev):
        if (err := self._enter("cuDevicePrimaryCtxRelease", dev)) is not None:
            return (err,)
        self._handle(dev, real.CUdevice)
        assert self.retained > 0, "released a context that was not retained"
        self.retained -= 1
        return (OK,)

    def cuCtxPushCurrent(self, ctx):
        if (err := self._enter("cuCtxPushCurrent", ctx)) is not None:
            return (err,)
        if self._handle(ctx, real.CUcontext) != self.CONTEXT or not self.retained:
            return (E.CUDA_ERROR_INVALID_CONTEXT,)
        self._stack().append(ctx)
        return (OK,)

    def cuCtxPopCurrent(self):
        if (err := self._enter("cuCtxPopCurrent", context=True)) is not None:
            return (err, None)
        return (OK, self._stack().pop())

    # ---- modules -----------------------------------------------------------------------
    def cuModuleLoadDataEx(self, image, num_options, options, values):
        if (err := self._enter("cuModuleLoadDataEx", image, num_options, options, values,
                               context=True)) is not None:
            return (err, None)
        from ptxlint.emulate import EmulationError  # noqa: PLC0415
        from ptxlint.emulate.api import load_module  # noqa: PLC0415

        log = self._error_log(num_options, options, values)
        ptx = ctypes.string_at(image).decode()  # NUL-terminated, as the driver reads it
        version = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
        target = re.search(r"^\s*\.target\s+sm_(\d+)", ptx, re.M)
        isa = (int(version.group(1)), int(version.group(2))) if version else (0, 0)
        if isa > tuple(self.ptx_isa):
            log(f"ptxas application ptx input, line 1; fatal   : Unsupported .version "
                f"{isa[0]}.{isa[1]}; current version is '{self.ptx_isa[0]}.{self.ptx_isa[1]}'")
            return (E.CUDA_ERROR_UNSUPPORTED_PTX_VERSION, None)
        if target and int(target.group(1)) > 10 * self.cc[0] + self.cc[1]:
            log(f"ptxas fatal   : SM {target.group(1)} is newer than the device")
            return (E.CUDA_ERROR_NO_BINARY_FOR_GPU, None)
        try:
            module = load_module(ptx)
        except EmulationError as exc:
            log(f"ptxas fatal   : {exc}")
            return (E.CUDA_ERROR_INVALID_PTX, None)
        key = next(self._ids)
        self.modules[key] = (ptx, module)
        return (OK, real.CUmodule(key))

    @staticmethod
    def _error_log(n, options, values):
        """A writer into the CU_JIT_ERROR_LOG_BUFFER the caller passed (or a no-op)."""
        pairs = dict(zip(options[:n], values[:n], strict=True))
        buf = pairs.get(real.CUjit_option.CU_JIT_ERROR_LOG_BUFFER)
        size = pairs.get(real.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 0)
        if buf is None:
            return lambda text: None
        assert isinstance(buf, bytearray) and isinstance(size, int) and size <= len(buf)

        def write(text: str) -> None:
            data = text.encode()[:max(0, size - 1)] + b"\0"
            buf[:len(data)] = data
        return write

    def cuModuleGetFunction(self, hmod, name):
        if (err := self._enter("cuModuleGetFunction", hmod, name, context=True)) is not None:
            return (err, None)
        key = self._handle(hmod, real.CUmodule)
        if key not in self.modules:
            return (E.CUDA_ERROR_INVALID_HANDLE, None)
        if name.decode() not in {f.name for f in self.modules[key][1].entries}:
            return (E.CUDA_ERROR_NOT_FOUND, None)
        fid = next(self._ids)
        self.functions[fid] = (key, name.decode())
        return (OK, real.CUfunction(fid))

    def cuModuleUnload(self, hmod):
        if (err := self._enter("cuModuleUnload", hmod, context=True)) is not None:
            return (err,)
        if self.modules.pop(self._handle(hmod, real.CUmodule), None) is None:
            return (E.CUDA_ERROR_INVALID_HANDLE,)
        return (OK,)

    # ---- memory ------------------------------------------------------------------------
    def cuMemAlloc(self, size):
        if (err := self._enter("cuMemAlloc", size, context=True)) is not None:
            return (err, None)
        assert isinstance(size, int) and size > 0
        data = np.full(size, 0xA5, dtype=np.uint8)
        self.memory[data.ctypes.data] = data
        return (OK, real.CUdeviceptr(data.ctypes.data))

    def cuMemFree(self, dptr):
        if (err := self._enter("cuMemFree", dptr, context=True)) is not None:
            return (err,)
        if self.memory.pop(self._handle(dptr, real.CUdeviceptr), None) is None:
            return (E.CUDA_ERROR_INVALID_VALUE,)
        return (OK,)

    def cuMemcpyHtoD(self, dst, src, size):
        if (err := self._enter("cuMemcpyHtoD", dst, src, size, context=True)) is not None:
            return (err,)
        target = self._allocation(self._handle(dst, real.CUdeviceptr), size)
        if target is None or not isinstance(src, int):
            return (E.CUDA_ERROR_INVALID_VALUE,)
        ctypes.memmove(target.ctypes.data, src, size)
        return (OK,)

    def cuMemcpyDtoH(self, dst, src, size):
        if (err := self._enter("cuMemcpyDtoH", dst, src, size, context=True)) is not None:
            return (err,)
        source = self._allocation(self._handle(src, real.CUdeviceptr), size)
        if source is None or not isinstance(dst, int):
            return (E.CUDA_ERROR_INVALID_VALUE,)
        ctypes.memmove(dst, source.ctypes.data, size)
        return (OK,)

    # ---- events ------------------------------------------------------------------------
    def cuEventCreate(self, flags):
        if (err := self._enter("cuEventCreate", flags, context=True)) is not None:
            return (err, None)
        key = next(self._ids)
        self.events[key] = None
        return (OK, real.CUevent(key))

    def cuEventRecord(self, event, stream):
        if (err := self._enter("cuEventRecord", event, stream, context=True)) is not None:
            return (err,)
        key = self._handle(event, real.CUevent)
        if key not in self.events:
            return (E.CUDA_ERROR_INVALID_HANDLE,)
        self.events[key] = time.perf_counter()
        return (OK,)

    def cuEventSynchronize(self, event):
        if (err := self._enter("cuEventSynchronize", event, context=True)) is not None:
            return (err,)
        if self._handle(event, real.CUevent) not in self.events:
            return (E.CUDA_ERROR_INVALID_HANDLE,)
        return (self.sticky or OK,)

    def cuEventElapsedTime(self, start, stop):
        if (err := self._enter("cuEventElapsedTime", start, stop, context=True)) is not None:
            return (err, None)
        t0 = self.events.get(self._handle(start, real.CUevent))
        t1 = self.events.get(self._handle(stop, real.CUevent))
        if t0 is None or t1 is None:
            return (E.CUDA_ERROR_INVALID_HANDLE, None)
        return (OK, 1000.0 * (t1 - t0))

    def cuEventDestroy(self, event):
        if (err := self._enter("cuEventDestroy", event, context=True)) is not None:
            return (err,)
        if self.events.pop(self._handle(event, real.CUevent), "gone") == "gone":
            return (E.CUDA_ERROR_INVALID_HANDLE,)
        return (OK,)

    # ---- launches ----------------------------------------------------------------------
    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        if (err := self._enter("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, smem, stream,
                               params, extra, context=True)) is not None:
            return (err,)
        from ptxlint.emulate import run_kernel  # noqa: PLC0415

        mod, kernel = self.functions[self._handle(f, real.CUfunction)]
        ptx, module = self.modules[mod]
        entry = next(fn for fn in module.entries if fn.name == kernel)
        assert isinstance(params, int) and extra == 0
        pointers = (ctypes.c_uint64 * len(entry.params)).from_address(params)
        args, seen = {}, []
        for i, (p, where) in enumerate(zip(entry.params, pointers, strict=True)):
            raw = ctypes.string_at(where, p.byte_size)
            seen.append(raw)
            value = int.from_bytes(raw, "little") if p.byte_size == 8 else None
            buffer = None
            if value is not None:
                for base, data in self.memory.items():
                    if base <= value < base + data.size:
                        buffer = data[value - base:]
            args[i] = buffer if buffer is not None else raw
        result = run_kernel(module, kernel, (gx, gy, gz), (bx, by, bz), args,
                            dynamic_smem=smem)
        if result.observations.count("out-of-bounds"):
            self.sticky = E.CUDA_ERROR_ILLEGAL_ADDRESS
        self.launches.append({"kernel": kernel, "grid": (gx, gy, gz), "block": (bx, by, bz),
                              "params": seen, "ptx": ptx})
        return (OK,)


__all__ = ["FakeDriver"]
