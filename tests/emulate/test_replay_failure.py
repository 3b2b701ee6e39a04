"""Issue 18, item 1: registers cost storage only when used, whatever `%r<N>` declares, and
a replay that fails (out of memory, out of time, any exception) leaves the findings the
analysis made exactly as they are without a replay."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ptxlint.diagnostics import Severity
from ptxlint.emulate.program import Program
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text

from .helpers import HEADER, module_of, run_ptx

ROOT = Path(__file__).parents[2]
VECTOR_ADD = (ROOT / "ptx_samples/cuda/vector_add.ptx").read_text()
DECLARATION = ".reg .b32 \t%r<29>;"
# n = 5001 over buffers of 5000 floats: only the replay makes its three overflows definite
LAUNCH = "block=256 grid=4 buffer.0=20000 buffer.1=20000 buffer.2=20000 param.3=5001"
REPLAYED = [119, 120, 123]

# %r1999999 is the last register of the outer range; the inner scope's %r1 is 16 bits
SCOPED = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<2000000>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1999999, 0xFFFFFFFF;
  add.u32 %r1999999, %r1999999, 2;
  st.global.u32 [%rd1], %r1999999;
  {
    .reg .b16 %r<2>;
    mov.b16 %r1, 0xFFFF;
    add.u16 %r1, %r1, 1;
    st.global.u16 [%rd1+4], %r1;
  }
  ret;
}
"""


def test_a_huge_register_range_costs_nothing_until_used():
    module = module_of(SCOPED)
    tracemalloc.start()
    try:
        program = Program(module, "k")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 << 20, peak  # listing 2 million names took over 200 MB
    # storage for the three registers used: %r1999999, %rd1 and the inner %r1
    assert sorted(map(str, program.register_dtypes.values())) == ["uint16", "uint32", "uint64"]
    out = np.full(2, 7, np.uint32)
    run_ptx(SCOPED, args={0: out})
    assert out[0] == 1  # 32-bit wrap
    assert out[1] & 0xFFFF == 0  # the inner %r1 wraps at 16 bits


def test_huge_declaration_is_linted_and_replayed_under_a_memory_limit(tmp_path):
    """With 100 million declared registers, under a 1.5 GiB address-space limit, the
    replay still runs and confirms the three overflows (exit 1). It used to allocate a
    dict entry per declared register: MemoryError, the errors fell back to warnings."""
    resource = pytest.importorskip("resource")
    path = tmp_path / "huge.ptx"
    path.write_text(VECTOR_ADD.replace(DECLARATION, ".reg .b32 \t%r<100000000>;"))

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    args = ["--kernel", "vector_add", "--format", "json", *_launch_options()]
    proc = subprocess.run([sys.executable, "-m", "ptxlint", str(path), *args],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit,
                          env=env)
    assert "Traceback" not in proc.stderr
    found = [o for d in json.loads(proc.stdout)["diagnostics"] if d["severity"] == "error"
             for o in d["occurrences"]]  # (a group per CUDA line: every instruction of it)
    assert sorted(o["line"] for o in found) == REPLAYED, proc.stdout
    assert all("in an emulated run of this launch" in o["message"] for o in found)
    assert proc.returncode == 1


def _launch_options() -> list[str]:
    out = ["--block", "256", "--grid", "4", "--param", "3=5001"]
    for i in range(3):
        out += ["--extent", f"{i}=20000"]
    return out


def _findings() -> list[tuple]:
    options = LintOptions(kernels=("vector_add",), launch=LaunchConfig.parse(LAUNCH))
    report = lint_text(VECTOR_ADD, "v.ptx", options)
    return [(d.rule, d.line, d.column, d.severity, d.certainty, d.message, d.notes,
             d.details) for d in report.diagnostics]


def _raise(exc: BaseException):
    def fail(*args, **kwargs):
        raise exc
    return fail


@pytest.mark.parametrize("where", ["ptxlint.emulate.api.run_kernel",
                                   "ptxlint.emulate.program.Program",
                                   "ptxlint.replay.Replay.independent",
                                   "ptxlint.replay.Replay._witness"])
@pytest.mark.parametrize("exc", [MemoryError(), TimeoutError("slow"), RuntimeError("bug")],
                         ids=lambda e: type(e).__name__)
def test_a_failed_replay_leaves_the_static_findings(monkeypatch, where, exc):
    replayed = _findings()
    assert [f[1] for f in replayed if f[3] is Severity.ERROR] == REPLAYED
    with monkeypatch.context() as m:
        m.setattr("ptxlint.replay.MAX_THREADS", 0)  # no replay at all
        static = _findings()
    assert static != replayed
    monkeypatch.setattr(where, _raise(exc))
    assert _findings() == static
