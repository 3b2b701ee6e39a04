"""`ptxlint run`: runs a kernel, prints observations, writes buffers, never a traceback."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ptxlint.cli import main

CUDA = Path(__file__).parents[2] / "ptx_samples/cuda"


def test_run_prints_and_writes_buffers(tmp_path, capsys):
    a = np.arange(100, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    code = main(["run", str(CUDA / "vector_add.ptx"), "--kernel", "vector_add", "--grid", "1",
                 "--block", "128", "--arg", f"0=@{tmp_path / 'a.npy'}", "--arg", f"1=@{tmp_path / 'a.npy'}",
                 "--arg", "2=zeros:f32:100", "--arg", "3=100", "--out", str(tmp_path / "out")])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "thread-instructions" in text and "ld.global.nc.f32" in text and "no events" in text
    assert np.array_equal(np.load(tmp_path / "out/2.npy"), 2 * a)


def test_run_reports_events_and_json(capsys):
    code = main(["run", str(CUDA / "reduce.ptx"), "--kernel", "warp_max", "--grid", "2",
                 "--block", "64", "--arg", "0=zeros:s32:128", "--arg", "1=zeros:s32:2", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 1
    assert any(e["kind"] == "out-of-bounds" for e in payload["events"])


def test_run_errors_are_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k() {\n  frob;\n}\n")
    for argv in (["run", str(bad), "--kernel", "k", "--grid", "1", "--block", "1"],
                 ["run", str(CUDA / "reduce.ptx"), "--kernel", "nope", "--grid", "1", "--block", "1"],
                 ["run", str(CUDA / "reduce.ptx"), "--kernel", "warp_max", "--grid", "1",
                  "--block", "1"],
                 ["run", str(CUDA / "reduce.ptx"), "--kernel", "warp_max", "--grid", "x",
                  "--block", "1"],
                 ["run", str(tmp_path / "missing.ptx"), "--kernel", "k", "--grid", "1", "--block", "1"]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
