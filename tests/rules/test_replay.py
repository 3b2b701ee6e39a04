"""`replay.py`: a possible out-of-bounds access whose address is fixed by an exact
launch is settled by running the launch on the emulator; anything that makes the address
depend on data, on buffer addresses or on floating point leaves the static verdict."""
from __future__ import annotations

from ptxlint.diagnostics import Certainty, Severity
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text

from ..conftest import ROOT

VECTOR_ADD = (ROOT / "ptx_samples" / "cuda" / "vector_add.ptx").read_text()
N_LOAD = "ld.param.u32 \t%r12, [vector_add_param_3];"
# the unrolled grid-stride loop's twelve accesses; the value domains bound the last
# three copies only by the trip count's prologue, which they cannot relate
UNROLLED = [98, 99, 102, 109, 110, 113, 119, 120, 123]


def findings(text: str, n: int | None = 5000, buffers: int = 20000,
             minimum: Severity = Severity.WARNING):
    spec = f"block=256 grid=4 buffer.0={buffers} buffer.1={buffers} buffer.2={buffers}"
    if n is not None:
        spec += f" param.3={n}"
    options = LintOptions(kernels=("vector_add",), launch=LaunchConfig.parse(spec),
                          enable=frozenset({"out-of-bounds"}))
    return [d for d in lint_text(text, "v.ptx", options).diagnostics
            if d.severity >= minimum]


def test_in_bounds_launch_has_no_finding():
    assert N_LOAD in VECTOR_ADD
    assert findings(VECTOR_ADD) == []


def test_one_element_too_many_is_definite_with_the_thread():
    found = findings(VECTOR_ADD, n=5001)
    assert [(d.line, d.severity, d.certainty) for d in found] == [
        (line, Severity.ERROR, Certainty.DEFINITE) for line in (119, 120, 123)]
    assert found[0].message == (
        "out-of-bounds load: bytes 20000..20003 of `vector_add_param_1` (20000 bytes); "
        "block (3, 0, 0) thread (136, 0, 0) reaches byte 20000 in an emulated run of this "
        "launch")
    assert found[0].details == {"object": "vector_add_param_1", "size": 20000,
                                "first_bad_byte": 20000, "last_byte": 20003,
                                "definite": True}


def _shown(found) -> list:
    return [(d.line, d.severity, d.message) for d in found]


def same_as_static(text: str, monkeypatch, n: int | None = 5000) -> list:
    """The findings with runs allowed, after checking they are those without runs."""
    with_runs = _shown(findings(text, n, minimum=Severity.NOTE))
    with monkeypatch.context() as m:
        m.setattr("ptxlint.replay.MAX_THREADS", 0)
        assert _shown(findings(text, n, minimum=Severity.NOTE)) == with_runs
    return with_runs


def test_unknown_scalar_leaves_the_static_verdict(monkeypatch):
    assert same_as_static(VECTOR_ADD, monkeypatch, n=None)


def test_bound_loaded_from_memory_leaves_the_static_verdict(monkeypatch):
    text = VECTOR_ADD.replace(N_LOAD, "ld.global.u32 \t%r12, [%rd15];")
    assert same_as_static(text, monkeypatch)


def test_arithmetic_on_a_buffer_address_leaves_the_static_verdict(monkeypatch):
    # the bound now depends on where the buffer lies (masked to 0, but not provably)
    text = VECTOR_ADD.replace(N_LOAD, N_LOAD + "\n\tcvt.u32.u64 \t%r28, %rd16;\n"
                              "\tand.b32 \t%r28, %r28, 0;\n\tadd.s32 \t%r12, %r12, %r28;")
    assert [line - 3 for line, severity, _ in same_as_static(text, monkeypatch)
            if severity is Severity.WARNING] == UNROLLED


def test_floating_point_in_the_address_leaves_the_static_verdict(monkeypatch):
    text = VECTOR_ADD.replace(N_LOAD, N_LOAD + "\n\tcvt.rn.f32.s32 \t%f15, %r12;\n"
                              "\tcvt.rzi.s32.f32 \t%r12, %f15;")
    assert same_as_static(text, monkeypatch)


def test_too_many_threads_are_not_run(monkeypatch):
    monkeypatch.setattr("ptxlint.replay.MAX_THREADS", 512)
    assert [d.line for d in findings(VECTOR_ADD)] == UNROLLED


def test_run_over_its_budget_leaves_the_static_verdict(monkeypatch):
    monkeypatch.setattr("ptxlint.replay.MAX_STEPS", 10)
    assert [d.line for d in findings(VECTOR_ADD)] == UNROLLED


def test_huge_buffers_are_not_allocated(monkeypatch):
    monkeypatch.setattr("ptxlint.replay.MAX_BUFFER_BYTES", 1000)
    assert [d.line for d in findings(VECTOR_ADD)] == UNROLLED


def test_register_never_written_leaves_the_static_verdict(monkeypatch):
    # %r12 (n) read without a definition: a GPU reads whatever the register holds
    assert same_as_static(VECTOR_ADD.replace(N_LOAD, ""), monkeypatch)
