"""The state of one chunk of blocks: registers vectorised over its threads, special
registers from the launch shape, memory, stacks, and the set of threads the current
instruction runs for.

Threads are numbered block-major: thread `t` of the chunk is linear id `t % tpb` of block
`t // tpb` (`tpb` threads per block), and linear ids follow the warp model of
`launch.py` (`tid.x + ntid.x*(tid.y + ntid.y*tid.z)`, 32 lanes per warp). Every register
is one numpy array of length `n`; `idx` holds the thread indices an instruction runs for,
or None for all of them (the fast path when every thread of the chunk is active).
"""
from __future__ import annotations

import numpy as np

from .frames import Frames
from .memory import Memory

WARP = 32
U32 = np.uint32


class Machine:
    def __init__(self, program, grid: tuple[int, int, int], block: tuple[int, int, int],
                 first_block: int, n_blocks: int, dynamic_smem: int,
                 max_memory: int | None = None):
        self.program = program
        self.grid, self.block = grid, block
        self.tpb = block[0] * block[1] * block[2]
        self.n_blocks = n_blocks
        self.n = n = n_blocks * self.tpb
        self.first_block = first_block
        self.regs: dict[str, np.ndarray] = {
            k: np.zeros(n, dt) for k, dt in program.register_dtypes.items()}
        self.cc = np.zeros(n, np.uint64)  # CC.CF, the carry flag of .cc instructions
        self.idx: np.ndarray | None = None
        self.all_threads = np.arange(n)
        self.live = np.ones(n, bool)
        self.n_live = n
        t = self.all_threads
        self.block_of = t // self.tpb
        self.linear = t % self.tpb
        self.warps_per_block = -(-self.tpb // WARP)
        self.lane = (self.linear % WARP).astype(U32)
        self.warp = self.block_of * self.warps_per_block + self.linear // WARP
        self.n_warps = n_blocks * self.warps_per_block
        self.full_warps = self.tpb % WARP == 0
        self.dynamic_smem = dynamic_smem
        self.clock = 0
        self.pc = 0
        self._special = self._specials()
        self.frames = Frames(n, max_bytes=max_memory)
        self.mem: Memory | None = None
        self.obs = None

    def attach(self, mem: Memory, obs) -> None:
        self.mem, self.obs = mem, obs

    # ---- active threads -------------------------------------------------------------------------
    def active(self) -> np.ndarray:
        """Indices of the threads the current instruction runs for."""
        return self.all_threads if self.idx is None else self.idx

    def count(self) -> int:
        return self.n if self.idx is None else len(self.idx)

    # ---- special registers ----------------------------------------------------------------------
    def _specials(self) -> dict[str, object]:
        bx, by, bz = self.block
        gx, gy, gz = self.grid
        lin = self.linear
        blk = self.block_of + self.first_block
        lane = self.lane
        s: dict[str, object] = {
            "%tid.x": (lin % bx).astype(U32), "%tid.y": (lin // bx % by).astype(U32),
            "%tid.z": (lin // (bx * by)).astype(U32),
            "%ntid.x": U32(bx), "%ntid.y": U32(by), "%ntid.z": U32(bz),
            "%ctaid.x": (blk % gx).astype(U32), "%ctaid.y": (blk // gx % gy).astype(U32),
            "%ctaid.z": (blk // (gx * gy)).astype(U32),
            "%nctaid.x": U32(gx), "%nctaid.y": U32(gy), "%nctaid.z": U32(gz),
            "%laneid": lane, "%warpid": (lin // WARP).astype(U32),
            "%nwarpid": U32(self.warps_per_block), "%smid": U32(0), "%nsmid": U32(1),
            "%gridid": np.uint64(0),
            "%lanemask_eq": (U32(1) << lane).astype(U32),
            "%lanemask_lt": ((U32(1) << lane) - U32(1)).astype(U32),
            "%lanemask_le": ((((U32(1) << lane) - U32(1)) << U32(1)) | U32(1)).astype(U32),
            "%is_explicit_cluster": U32(0),
            "%cluster_ctarank": U32(0), "%cluster_nctarank": U32(1),
            "%dynamic_smem_size": U32(self.dynamic_smem),
            "%total_smem_size": U32(self.program.layout.static_shared + self.dynamic_smem),
        }
        s["%lanemask_ge"] = (~s["%lanemask_lt"]).astype(U32)  # type: ignore[operator]
        s["%lanemask_gt"] = (~s["%lanemask_le"]).astype(U32)  # type: ignore[operator]
        for ax in "xyz":
            s[f"%clusterid.{ax}"] = s[f"%ctaid.{ax}"]
            s[f"%nclusterid.{ax}"] = s[f"%nctaid.{ax}"]
            s[f"%cluster_ctaid.{ax}"] = U32(0)
            s[f"%cluster_nctaid.{ax}"] = U32(1)
        return s

    def special(self, name: str):
        v = self._special.get(name)
        if v is None:
            if name in ("%clock", "%clock_hi", "%globaltimer_lo", "%globaltimer_hi"):
                c = self.clock * 4 if name != "%clock_hi" else 0
                return U32(c % (1 << 32))
            if name in ("%clock64", "%globaltimer", "%current_graph_exec"):
                return np.uint64(self.clock * 4)
            if name.startswith(("%envreg", "%pm", "%reserved_smem")) or name == "%aggr_smem_size":
                return U32(0) if not name.endswith("_64") else np.uint64(0)
            from .errors import EmulationError

            raise EmulationError(f"special register {name} is not supported by the emulator")
        if isinstance(v, np.ndarray):
            return v.view() if self.idx is None else v[self.idx]
        return v
