"""Running launches on ptxlint's CPU emulator (`ptxlint.emulate.run_kernel`), for
`--device emulator`: the same PTX, the same launch, no GPU.

The emulator's calling convention, in one place (`_call`): `run_kernel(module, kernel,
grid, block, args, dynamic_smem)` (the PTX parsed once per text) with `args` keyed by
parameter index, a numpy array for each buffer (the emulator reads and writes it in
place) and a number for each scalar; `EmulationError` becomes `EmulatorError` with its
message.
"""
from __future__ import annotations

import time

import numpy as np

from .catalog import Buffer, Launch


class EmulatorRunner:
    name = "emulator"
    # a Philox Monte Carlo run is split into launches of about this many normals, so
    # that the pricer can report progress (pricer.launch_ranges)
    chunk_normals = 1 << 21

    def __init__(self, arch: str = "sm_80") -> None:
        from ptxlint.emulate import run_kernel  # noqa: PLC0415

        self._run_kernel = run_kernel
        self.arch = arch
        self.description = "ptxlint CPU emulator"
        self._modules: dict[str, object] = {}  # parsed once per PTX text

    def run(self, launch: Launch, ptx: str) -> tuple[dict[str, np.ndarray], float]:
        """Outputs by name and the emulation's wall time in seconds."""
        args = {i: np.array(a.data, copy=True) if isinstance(a, Buffer) else a.array()[0]
                for i, a in enumerate(launch.args)}
        start = time.perf_counter()
        self._call(launch, ptx, args)
        seconds = time.perf_counter() - start
        return {a.name: args[i] for i, a in enumerate(launch.args)
                if isinstance(a, Buffer) and a.output}, seconds

    def _call(self, launch: Launch, ptx: str, args: dict):
        from ptxlint.emulate import EmulationError  # noqa: PLC0415
        from ptxlint.emulate.api import load_module  # noqa: PLC0415

        try:
            module = self._modules.get(ptx)
            if module is None:
                module = self._modules[ptx] = load_module(ptx)
            return self._run_kernel(module, launch.kernel, (launch.grid, 1, 1),
                                    (launch.block, 1, 1), args,
                                    dynamic_smem=launch.dynamic_smem, observe=False)
        except EmulationError as exc:
            raise EmulatorError(f"the emulator stopped in {launch.kernel}: {exc}") from None


class EmulatorError(RuntimeError):
    """The emulation of a launch failed; the message says where."""


__all__ = ["EmulatorRunner", "EmulatorError"]
