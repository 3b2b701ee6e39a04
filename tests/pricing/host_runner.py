"""A runner that compiles the pricing kernels' CUDA C as C++ (host/cuda_host.h) and runs
them on CPU threads: the kernels' own source, tested without a GPU. It checks the CUDA C
(generators, exchanges, barriers, tiling), not the PTX; the PTX is still built and
linted by the pipeline before each run."""
from __future__ import annotations

import ctypes
import hashlib
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

from pricing_kernels.build import KERNELS
from pricing_kernels.catalog import Buffer, Launch

SHIM = Path(__file__).resolve().parent / "host" / "cuda_host.h"
ENTRY = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?(\w+)\s*\(")


def compiler() -> str | None:
    return shutil.which("g++")


class HostRunner:
    name = "host"
    arch = "sm_80"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._libs: dict[str, ctypes.CDLL] = {}

    def library(self, source: str, defines: dict) -> ctypes.CDLL:
        path = KERNELS / source
        flags = [f"-D{k}={v}" for k, v in sorted(defines.items())]
        key = hashlib.sha256((source + " ".join(flags)).encode() + path.read_bytes()
                             + SHIM.read_bytes()).hexdigest()[:16]
        if key in self._libs:
            return self._libs[key]
        entries = ENTRY.findall(path.read_text())
        wrapper = self.workdir / f"{key}.cpp"
        wrapper.write_text(f'#include "{SHIM}"\n#include "{path}"\n'
                           + "".join(f"HOST_EXPORT({e})\n" for e in entries))
        lib = self.workdir / f"{key}.so"
        cmd = [compiler(), "-std=c++20", "-O2", "-shared", "-fPIC", "-pthread",
               "-Wno-unknown-pragmas", f"-I{path.parent}", f"-I{KERNELS}", *flags,
               "-o", str(lib), str(wrapper)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"g++ failed on {source}:\n{done.stderr}")
        self._libs[key] = ctypes.CDLL(str(lib))
        return self._libs[key]

    def run(self, launch: Launch, ptx: str) -> tuple[dict[str, np.ndarray], float]:
        fn = getattr(self.library(launch.source, launch.defines), f"run_{launch.kernel}")
        arrays, holders = {}, []
        for arg in launch.args:
            if isinstance(arg, Buffer):
                arrays[arg.name] = data = np.array(arg.data, copy=True)
                holders.append(np.array([data.ctypes.data], dtype=np.uint64))
            else:
                holders.append(arg.array())
        params = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
        start = time.perf_counter()
        fn(ctypes.c_uint(launch.grid), ctypes.c_uint(launch.block),
           ctypes.c_void_p(params.ctypes.data))
        seconds = time.perf_counter() - start
        return {a.name: arrays[a.name] for a in launch.args
                if isinstance(a, Buffer) and a.output}, seconds
