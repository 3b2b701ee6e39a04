"""Issue 18, items 2-4: `ptxlint run` refuses launches the hardware refuses and
arguments the kernel does not take (exit 2, one line), bounds a run's steps, time and
memory, and reads files as the linter does."""
from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ptxlint.cli import main
from ptxlint.cli import run_kernel as cli_run
from ptxlint.emulate.limits import LimitExceeded

from .helpers import HEADER, run_ptx

VECTOR_ADD = Path(__file__).parents[2] / "ptx_samples/cuda/vector_add.ptx"
ARGS = ["--arg", "0=zeros:f32:512", "--arg", "1=zeros:f32:512", "--arg", "2=zeros:f32:512",
        "--arg", "3=512"]


def run(capsys, *argv: str, file: Path = VECTOR_ADD, kernel: str = "vector_add",
        grid: str = "1", block: str = "32") -> tuple[int, str, str]:
    code = main(["run", str(file), "--kernel", kernel, "--grid", grid, "--block", block,
                 *argv])
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(capsys, *argv: str, **kw) -> str:
    code, _, err = run(capsys, *argv, **kw)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


# ---- item 2: the hardware's launch limits -------------------------------------------------
@pytest.mark.parametrize(("grid", "block", "says"), [
    ("2147483648", "1", "grid.x = 2147483648 is outside 1..2147483647"),
    ("1,65536", "1", "grid.y = 65536 is outside 1..65535"),
    ("1,1,65536", "1", "grid.z = 65536 is outside 1..65535"),
    ("1", "1025", "block.x = 1025 is outside 1..1024"),
    ("1", "1,1025", "block.y = 1025 is outside 1..1024"),
    ("1", "1,1,65", "block.z = 65 is outside 1..64"),
    ("1", "64,32", "a block of 2048 threads exceeds the hardware's limit of 1024"),
    ("0", "1", "positive integers"),
    ("1", "1,0", "positive integers"),
])
def test_launch_beyond_the_hardware_is_a_usage_error(capsys, grid, block, says):
    assert says in usage_error(capsys, *ARGS, grid=grid, block=block)


def test_the_largest_shapes_are_accepted(capsys):
    code, out, err = run(capsys, *ARGS, grid="2", block="1024")
    assert code == 0, err
    code, out, err = run(capsys, *ARGS, grid="1,2,3", block="4,4,64")
    assert code == 0, err


# ---- item 2: a budget for the whole launch --------------------------------------------------
def test_a_default_run_of_a_huge_grid_stops_with_a_message(capsys, monkeypatch):
    monkeypatch.setattr(cli_run, "DEFAULT_TIME_LIMIT", 1.0)  # the default, made short
    started = time.perf_counter()
    err = usage_error(capsys, *ARGS, grid="2147483647", block="1024")
    assert time.perf_counter() - started < 30
    assert "time limit of 1 s exceeded" in err and "of 2147483647 blocks done" in err
    assert "--time-limit" in err


def test_time_limit_option(capsys):
    err = usage_error(capsys, *ARGS, "--time-limit", "0.5", grid="2147483647,65535")
    assert "time limit of 0.5 s exceeded" in err


def test_help_documents_the_defaults(capsys):
    with pytest.raises(SystemExit):
        cli_run.build_parser().parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default 20000000)" in text and "(default 60)" in text and "(default 4G)" in text
    assert "one group of converged threads" in text  # what a step is


SPIN = HEADER + ".visible .entry k()\n{\nL:\n  bra.uni L;\n}\n"
STRAIGHT = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %ctaid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""


def test_the_step_budget_is_for_the_whole_launch_not_each_chunk():
    out = np.zeros(64, np.uint32)
    # one block per chunk: 64 chunks of 6 steps each
    run_ptx(STRAIGHT, grid=64, block=32, args={0: out}, chunk_threads=32, max_steps=64 * 6)
    assert (out == np.arange(64)).all()
    with pytest.raises(LimitExceeded, match=r"step limit of 100 exceeded.*\(16 of 64 blocks"):
        run_ptx(STRAIGHT, grid=64, block=32, args={0: out}, chunk_threads=32, max_steps=100)


def test_time_limit_stops_an_endless_loop():
    started = time.perf_counter()
    with pytest.raises(LimitExceeded, match="time limit of 0.3 s exceeded") as info:
        run_ptx(SPIN, grid=1, block=32, max_steps=10**12, time_limit=0.3)
    assert info.value.limit == "time"
    assert time.perf_counter() - started < 10


def test_steps_and_time_must_be_positive(capsys):
    assert "must be positive" in usage_error(capsys, *ARGS, "--max-steps", "0")
    assert "must be positive" in usage_error(capsys, *ARGS, "--time-limit", "-1")


# ---- item 2: memory --------------------------------------------------------------------------
HUGE_GLOBAL = HEADER + """
.global .align 4 .b8 g[1099511627776];
.visible .entry k()
{
  ret;
}
"""
# a 1 MB local array per thread, its last word written and read back
LOCAL_MB = HEADER + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<5>;
  .local .align 4 .b8 buf[1000000];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u64 %rd2, buf;
  st.local.u32 [%rd2+999996], %r1;
  ld.local.u32 %r3, [%rd2+999996];
  mad.lo.u32 %r1, %r2, %ntid.x, %r3;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r1;
  ret;
}
"""


def test_a_launch_over_the_memory_limit_is_refused_before_allocating(tmp_path, capsys):
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded, match="module variables need 1 TiB, over the "
                           "limit of 4 GiB") as info:
            run_ptx(HUGE_GLOBAL)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.limit == "memory" and peak < 50 << 20
    path = tmp_path / "g.ptx"
    path.write_text(HUGE_GLOBAL)
    err = usage_error(capsys, file=path, kernel="k")
    assert "emulated memory" in err and "--max-memory" in err


def test_one_block_over_the_memory_limit_is_refused(tmp_path, capsys):
    path = tmp_path / "local.ptx"
    path.write_text(LOCAL_MB)
    err = usage_error(capsys, "--arg", "out=zeros:u32:1024", "--max-memory", "512M",
                      file=path, kernel="k", block="1024")
    assert "one block of 1024 threads needs 2.001 GiB" in err
    assert "over the limit of 512 MiB" in err


def test_chunks_shrink_to_fit_the_memory_limit():
    out = np.zeros(8 * 64, np.uint32)
    # 64 threads with a 2 MB stack row each: 128 MB a block, two blocks a chunk
    run_ptx(LOCAL_MB, grid=8, block=64, args={0: out}, max_memory=300 << 20)
    assert (out == np.arange(8 * 64)).all()


def test_buffers_count_against_the_memory_limit(capsys):
    err = usage_error(capsys, "--arg", "0=zeros:f32:3000000000", *ARGS[2:],
                      "--max-memory", "1G")
    assert "zeros:f32:3000000000 (12000000000 bytes) does not fit" in err
    assert "--max-memory" in usage_error(capsys, *ARGS, "--max-memory", "lots")


# ---- item 3: arguments checked against the kernel's parameters ------------------------------
PARAMS = "vector_add_param_0, vector_add_param_1, vector_add_param_2, vector_add_param_3"


@pytest.mark.parametrize(("arg", "says"), [
    ("n=3", f"--arg n: kernel 'vector_add' has no parameter 'n' (its parameters, by name "
            f"or 0-based index: {PARAMS})"),
    ("4=3", "kernel 'vector_add' has no parameter 4"),
    ("3=zeros:u32:4", "--arg 3: parameter 'vector_add_param_3' is .u32: expected an "
                      "integer, got an array"),
    ("vector_add_param_3=2.5", "parameter 'vector_add_param_3' is .u32: expected an "
                               "integer, got 2.5"),
    ("3=4294967296", "expected an integer that fits in 32 bits"),
])
def test_a_bad_argument_is_a_usage_error(capsys, arg, says):
    argv = ARGS[:6] + ["--arg", arg]
    assert says in usage_error(capsys, *argv)


def test_missing_and_repeated_arguments_are_usage_errors(capsys):
    assert f"no --arg gives vector_add_param_2 (kernel 'vector_add' takes: {PARAMS})" in \
        usage_error(capsys, *ARGS[:4], *ARGS[6:])
    assert "given twice" in usage_error(capsys, *ARGS, "--arg", "vector_add_param_3=1")


POINTER = HEADER + """
.visible .entry k(.param .u64 .ptr.global .align 4 out, .param .f32 x)
{
  .reg .b64 %rd<2>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [out];
  ld.param.f32 %f1, [x];
  st.global.f32 [%rd1], %f1;
  ret;
}
"""


def test_pointer_and_float_parameters(tmp_path, capsys):
    path = tmp_path / "p.ptx"
    path.write_text(POINTER)
    err = usage_error(capsys, "--arg", "out=4096", "--arg", "x=1", file=path, kernel="k")
    assert "parameter 'out' is .u64 .ptr.global: expected a buffer (@FILE.npy or " \
           "zeros:DTYPE:N), got the number 4096" in err
    err = usage_error(capsys, "--arg", "out=zeros:f32:1", "--arg", "x=zeros:f32:1",
                      file=path, kernel="k")
    assert "parameter 'x' is .f32: expected a float, got an array" in err
    code, _, err = run(capsys, "--arg", "out=zeros:f32:1", "--arg", "x=2.5", file=path,
                       kernel="k", block="1")
    assert code == 0, err


@pytest.mark.parametrize("value", ["232449", "-1", "1.5", "lots"])
def test_dynamic_smem_out_of_range_is_a_usage_error(capsys, tmp_path, value):
    path = tmp_path / "p.ptx"
    path.write_text(POINTER)  # .target sm_90: 227 KiB a block
    err = usage_error(capsys, "--arg", "out=zeros:f32:1", "--arg", "x=1", "--dynamic-smem",
                      value, file=path, kernel="k")
    assert f"--dynamic-smem expects an integer from 0 to 232448 (the most shared memory a " \
           f"block may have on sm_90), got '{value}'" in err


def test_dynamic_smem_within_range_runs(capsys):
    code, _, err = run(capsys, *ARGS, "--dynamic-smem", "65536")  # sm_75: 64 KiB
    assert code == 0, err
    assert "sm_75" in usage_error(capsys, *ARGS, "--dynamic-smem", "65537")


# ---- item 4: files read as the linter reads them ------------------------------------------
def test_a_stray_non_utf8_byte_in_a_comment_runs(tmp_path, capsys):
    path = tmp_path / "latin1.ptx"
    path.write_bytes(VECTOR_ADD.read_bytes().replace(b"//\n", b"// caf\xe9 \xff\n", 1))
    code, out, err = run(capsys, *ARGS, file=path)
    assert code == 0 and err == "", err
    assert "no events" in out


def test_a_directory_is_a_one_line_error(tmp_path, capsys):
    assert "cannot read" in usage_error(capsys, *ARGS, file=tmp_path)
