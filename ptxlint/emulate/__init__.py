"""A concrete SIMT emulator of PTX kernels on the CPU, vectorised with numpy.

    from ptxlint.emulate import run_kernel
    res = run_kernel(ptx_text, "saxpy", grid=64, block=256, args={0: x, 1: y, "n": 16384})
    res.outputs, res.observations, res.thread_instructions, res.seconds

Layout (data flows one way):

    program.py   the module flattened into steps; labels -> pcs; frames, recursion
    semantics.py opcode class -> executor factory (MRO lookup), guards, control decoding
      intops bitops floatops floatfuncs convert compare moves memops atomics warpops
      mbarrier   the executors, one family per module
    operands.py  registers (unsigned arrays of the declared width, bool for predicates),
                 immediates, symbols and addresses compiled to closures
    machine.py   one chunk of blocks: registers, special registers, active threads
    memory.py layout.py frames.py   address windows, storage, memory safety
    simt.py groups.py barriers.py calls.py   scheduling, barriers, calls
    observe.py recorder.py   sectors, bank conflicts and events
    hazards.py   (hazards=True) undefined register reads, shared/local bytes read
                 before written, global races: the events the soundness suite needs
    limits.py    the hardware's launch limits; steps, time and memory of one launch
    api.py       run_kernel

One PTX instruction is a handful of numpy operations over the threads that execute it
(all the threads of up to 64k per chunk at once when they are converged). Control flow
is min-position scheduling (a position is a call path, ordered as if calls were inlined)
with reconvergence at the first common position (see `simt.py`).

Exact (bit for bit, whatever the inputs):
- integer arithmetic, logic, shifts, bit fields, carries, 64-bit high products, dot
  products, permutes, comparisons, selection; integer conversions with `.sat`;
- f32/f64/f16/bf16 add, sub, mul, fma/mad, div (`.rn` and the IEEE directed modes),
  sqrt, rcp (`.rn .rz .rm .rp`), with `.ftz`/`.sat`; conversions between all integer and
  float types in every rounding mode, `.satfinite`, tf32, e4m3/e5m2 pairs; min/max with
  the ISA's NaN and signed-zero rules; atomics (applied in thread order);
- NaN results are the canonical NaN of the format.

Approximate (within each instruction's documented error, not the hardware's bits):
`ex2 lg2 sin cos tanh rsqrt .approx` (computed in float64 and rounded), `div.full.f32`
and the `.approx` forms of div/rcp/sqrt (the correctly rounded value). `%clock`,
`%globaltimer` count emulation steps; `%smid` is 0. Undefined results are fixed:
integer division by zero gives all ones (remainder: the dividend); a `shfl` from an
inactive lane reads whatever that lane's register holds.

Not supported (an `EmulationError` naming the opcode when a thread reaches one): video
instructions (`vadd`...), textures and surfaces (`tex tld4 txq suld sust sured suq`),
matrix instructions (`mma wmma ldmatrix stmatrix movmatrix wgmma tcgen05`), tensor copies
(`cp.async.bulk.tensor`, `cp.reduce.async.bulk`), `multimem`, `st.async`/`red.async`,
multicast and cross-CTA cluster accesses (a cluster is one block), 128-bit and vector
atomics and loads (`.b128`, `atom.v2`), `redux.sync.f32`, `cvt` with `.rs` or scale
factors and the FP4/FP6 formats, `st.bulk`, `spcompress`/`spdecompress`, `istypep`,
`mbarrier.check_layout`, `tensormap.*`, `clusterlaunchcontrol`, `fabric.*`.
"""
from __future__ import annotations

from .api import RunResult, run_kernel
from .errors import EmulationError
from .limits import LimitExceeded
from .observe import Observations, bank_ways, sectors_per_request

__all__ = [
           "EmulationError",
           "LimitExceeded",
           "Observations",
           "RunResult",
           "bank_ways",
           "run_kernel",
           "sectors_per_request",
]
