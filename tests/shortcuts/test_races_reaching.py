"""`Intervals.reaching` (one pass over the blocks) answers as `Intervals.reaches` asked of
every pair of instructions, for each kind of separator."""
from pathlib import Path

import pytest

from ptxlint.analysis import analyze
from ptxlint.ir.build import parse_module
from ptxlint.threads.barrier_intervals import intervals

SAMPLES = Path(__file__).resolve().parents[2] / "ptx_samples"
FILES = ["shared-memory-race/double_buffer.ok.ptx", "shared-memory-race/tree_sum.bad.ptx",
         "shared-memory-race/warp_sum.ok.ptx", "shared-memory-race/toggle_buffer.ok.ptx",
         "uninitialized-read/partial_tile.bad.ptx",
         "shared-memory-race/double_buffer.bad.ptx", "shared-memory-race/run_marks.ok.ptx"]


@pytest.mark.parametrize("name", FILES)
def test_reaching_answers_as_reaches(name):
    module = parse_module((SAMPLES / name).read_text(), name).module
    for fn in module.entries:
        facts = analyze(fn, None, module=module).facts
        insns = list(fn.instructions)
        for between in ("warps", "lanes", "any"):
            iv = intervals(facts, module, between)
            got = iv.reaching(insns, insns[::-1])
            for t, y in enumerate(insns[::-1]):
                want = sum(1 << k for k, x in enumerate(insns) if iv.reaches(x, y))
                assert got[t] == want, (name, between, str(y))
