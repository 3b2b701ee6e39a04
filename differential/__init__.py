"""Differential testing of the analysis against the emulator (the soundness suite).

A case (`case.py`) is a kernel with a launch and concrete inputs (`corpus.py`). It is
linted under the launch (`static.py`: diagnostics, facts, the static worst-case cost of
every access, the abstract values of registers) and emulated with the same launch and
inputs, a probe attached (`probe.py`, membership tests in `gamma.py`). `match.py`
checks that every observation is covered by a finding of the matching rule at the
matching instruction, that observed costs stay within the static worst case, that every
executed instruction is reachable, and that every probed value lies in its abstract
value. `report.py` turns many results into the precision table of `docs/soundness.md`.

A development package of the checkout, not installed with ptxlint: it finds its cases
through the checkout's folders (`ptx_samples/`, `pricing_kernels/kernels/flawed/`) and
runs from the repository root (`python -m differential`).
"""
from .case import Case, Result, run_case

__all__ = ["Case", "Result", "run_case"]
