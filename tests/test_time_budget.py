"""`--time-budget` bounds every phase of a kernel: the pre-passes, the fixpoint, each rule
and what rules ask for. Past it the kernel gets one `analysis-incomplete` note naming the
phase, keeps the findings made on its final facts, and the other kernels are reported.

The generated kernels: `irreducible(n_blocks)`, about `n_blocks` basic blocks, a chain of
irreducible loops (each entered at two blocks) with early exits, whose branches all
depend on %tid.x, so every one is divergent; `small()`, a second kernel with one
out-of-bounds store. Both assemble with `ptxas -arch=sm_80`:

    python -m tests.test_time_budget 5000 > big.ptx   # the module of both kernels
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from ptxlint import check
from ptxlint.analysis import INCOMPLETE, analyze
from ptxlint.deadline import Deadline, DeadlineExceeded
from ptxlint.ir.build import parse_module
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.base import load_rules
from ptxlint.rules.shared_memory_race import SharedMemoryRace
from tests.conftest import ROOT, ptxas_path

HEADER = """\
.version 9.0
.target sm_80
.address_size 64
"""

# One link of the chain, 5 blocks: B enters a loop at L1 or at L2 (two entries: the
# loop has no single header, so it is irreducible); L1 and L2 branch to each other, and
# lanes whose %r3 meets their %tid.x leave for the end (an early exit). So the arms of
# every branch meet only at the end: each branch's divergent region is the rest of the
# kernel, branches x blocks in all.
#   B:   @%p bra L1;          (lanes below k go to L1)
#   B':  bra L2;
#   L1:  ...; @%q bra L2;
#   I:   ...; @%s bra DONE;
#   L2:  ...; @%r bra L1;      (falls into the next link, the last one into DONE)
LINK = """\
$B{i}:
\tsetp.lt.u32 \t%p1, %r1, {k};
\t@%p1 bra \t$L1_{i};
\tbra \t$L2_{i};
$L1_{i}:
\tadd.s32 \t%r2, %r2, {step};
\tsetp.gt.u32 \t%p2, %r2, %r1;
\t@%p2 bra \t$L2_{i};
\txor.b32 \t%r3, %r3, %r2;
\tsetp.eq.u32 \t%p4, %r3, %r1;
\t@%p4 bra \t$DONE;
$L2_{i}:
\tadd.s32 \t%r3, %r3, %r1;
\tsetp.lt.u32 \t%p3, %r3, {bound};
\t@%p3 bra \t$L1_{i};
"""
BLOCKS_PER_LINK = 5


def irreducible(n_blocks: int, name: str = "irreducible") -> str:
    links = max(1, n_blocks // BLOCKS_PER_LINK)
    body = "".join(LINK.format(i=i, k=i % 31 + 1, step=i + 1, bound=1000 + i)
                   for i in range(links))
    return f"""\
.visible .entry {name}(
\t.param .u64 {name}_param_0
)
{{
\t.reg .pred \t%p<5>;
\t.reg .b32 \t%r<5>;
\t.reg .b64 \t%rd<4>;

\tmov.u32 \t%r1, %tid.x;
\tmov.u32 \t%r2, 0;
\tmov.u32 \t%r3, 0;
{body}$DONE:
\tld.param.u64 \t%rd1, [{name}_param_0];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmul.wide.u32 \t%rd3, %r1, 4;
\tadd.s64 \t%rd2, %rd2, %rd3;
\tst.global.u32 \t[%rd2], %r3;
\tret;
}}
"""


def small(name: str = "small") -> str:
    """255 floats of shared memory written by 256 threads: thread 255 writes past it."""
    return f"""\
.visible .entry {name}()
.reqntid 256, 1, 1
{{
\t.reg .b32 \t%r<4>;
\t.shared .align 4 .b8 {name}_buf[1020];

\tmov.u32 \t%r1, %tid.x;
\tshl.b32 \t%r2, %r1, 2;
\tmov.u32 \t%r3, {name}_buf;
\tadd.s32 \t%r3, %r3, %r2;
\tst.shared.u32 \t[%r3], %r1;
\tret;
}}
"""


def module(n_blocks: int) -> str:
    """The big irreducible kernel first, then the small one."""
    return HEADER + "\n" + irreducible(n_blocks) + "\n" + small()


# The lint of the 5,000-block kernel, in a child process: a regression fails on the
# timeout instead of hanging the suite. Prints the findings, the seconds (of the clock
# and of the CPU, which a loaded machine does not stretch) and the peak memory. Before
# the pre-passes were bounded and made cheaper: 4.2 s of CPU and 448 MB; now 1.3 s and
# 75 MB.
CHILD = textwrap.dedent("""
    import json, re, resource, sys, time
    from ptxlint import check
    from tests.test_time_budget import module
    text = module(5000)
    start, cpu = time.perf_counter(), time.process_time()
    found = check(text, time_budget=1.0)
    try:  # this process's own peak: ru_maxrss keeps the forking parent's across exec
        with open("/proc/self/status") as status:
            peak = int(re.search(r"VmHWM:\\s*(\\d+)", status.read()).group(1)) / 1024
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
        "peak_mb": peak,
        "found": [[d.kernel, d.rule, d.message, d.details] for d in found]}))
""")


def test_deadline_names_the_phase_it_stops():
    d = Deadline(0.0)
    assert d.expired()
    with pytest.raises(DeadlineExceeded) as info:
        with d.phase("fixpoint"):
            pass
    assert info.value.phase == "fixpoint" and info.value.budget == 0.0
    with pytest.raises(DeadlineExceeded) as info:
        with d.phase("rule out-of-bounds"), d.phase("re-analysis"):
            pass
    assert info.value.phase == "rule out-of-bounds"  # the outer phase checks first
    never = Deadline()
    with never.phase("a"), never.phase("b"):
        assert never.current == "a > b"
        for _ in range(1000):
            never.tick()
    assert never.current == "the analysis" and not never.expired()


def test_the_generator_assembles(tmp_path):
    exe = ptxas_path()
    if exe is None:
        pytest.skip("ptxas is not installed")
    path = tmp_path / "irreducible.ptx"
    path.write_text(module(250))  # the shape of the 5,000-block test (ptxas: seconds)
    done = subprocess.run([exe, "-arch=sm_80", str(path), "-o", str(tmp_path / "out.cubin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_irreducible_kernel_stops_at_its_budget_and_the_others_are_reported():
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    wall = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert wall < 30, wall  # a hang guard: the budget is 1 s, parsing a fraction of it
    assert result["cpu"] < 3.0, result["cpu"]  # the budget + parsing + the small kernel
    assert result["peak_mb"] < 300, result["peak_mb"]
    big = [f for f in result["found"] if f[0] == "irreducible"]
    # no finding from a fixpoint that did not finish: the note alone
    assert [(rule, details["unfinished"]) for _, rule, _, details in big] == [(INCOMPLETE, [])]
    assert "stopped at its 1 s time budget in `" in big[0][2]
    assert big[0][3]["phase"] and big[0][3]["budget"] == 1.0
    rules = {rule for kernel, rule, _, _ in result["found"] if kernel == "small"}
    assert rules == {"out-of-bounds", "shared-memory-race"}


def _slow_race_check(kernel: str):
    """A shared-memory-race check that, on `kernel`, makes one finding and then works
    until the deadline stops it."""
    original = SharedMemoryRace.check

    def slow(self, rc):
        if rc.function.name != kernel:
            yield from original(self, rc)
            return
        yield self.diagnostic(rc, rc.function.span, "made before the budget ran out")
        give_up = time.perf_counter() + 30  # a regression fails below instead of hanging
        while time.perf_counter() < give_up:
            rc.deadline.check()
    return slow


def test_a_rule_over_budget_keeps_what_was_found(monkeypatch):
    monkeypatch.setattr(SharedMemoryRace, "check", _slow_race_check("slow"))
    text = HEADER + small("slow") + small("small")
    start = time.perf_counter()
    report = lint_text(text, "two.ptx", LintOptions(time_budget=0.5))
    assert time.perf_counter() - start < 10
    by_kernel: dict[str, list] = {}
    for d in report.diagnostics:
        by_kernel.setdefault(d.kernel, []).append(d)
    slow = {d.rule: d for d in by_kernel["slow"]}
    assert set(slow) == {"out-of-bounds", "shared-memory-race", INCOMPLETE}
    assert slow["shared-memory-race"].message == "made before the budget ran out"
    note = slow[INCOMPLETE]
    assert note.details["phase"] == "rule shared-memory-race"
    ids = sorted(load_rules())
    assert note.details["unfinished"] == ids[ids.index("shared-memory-race"):]
    assert "findings of shared-memory-race, " in note.message
    # the other kernel has its full report, with a budget of its own
    assert {d.rule for d in by_kernel["small"]} == {"out-of-bounds", "shared-memory-race"}


def test_the_budget_covers_analysis_and_rules_together(monkeypatch):
    """A kernel whose analysis used up its budget gets no rule run at all: the first
    rule stops as it starts, and the note lists every rule."""
    import ptxlint.lint as lint

    def slow_analyze(*args, **kwargs):
        result = analyze(*args, **kwargs)
        time.sleep(0.3)
        return result
    monkeypatch.setattr(lint, "analyze", slow_analyze)
    found = check(HEADER + small("k"), time_budget=0.2)
    assert [d.rule for d in found] == [INCOMPLETE]
    assert found[0].details["unfinished"] == sorted(load_rules())
    assert found[0].details["phase"] == f"rule {sorted(load_rules())[0]}"


def test_an_expired_budget_reports_no_iterate():
    parsed = parse_module(HEADER + irreducible(50, "k"), "k.ptx")
    fn = parsed.module.entries[0]
    result = analyze(fn, module=parsed.module, deadline=Deadline(0.0))
    assert result.facts is None and result.stopped is not None
    assert result.stopped.phase == "pre-passes"
    [note] = result.diagnostics
    assert note.rule == INCOMPLETE and note.message == (
        "analysis of 'k' stopped at its 0 s time budget in `pre-passes`: no findings "
        "are reported for it")
    # the same kernel with time to spare: analysed, divergent branches found
    done = analyze(fn, module=parsed.module, deadline=Deadline(60.0))
    assert done.complete and done.facts.divergent


def test_a_rule_re_analysis_runs_on_the_kernel_budget(monkeypatch):
    """The out-of-bounds rule's threshold search re-analyses the kernel with `n` fixed:
    on the kernel's deadline, and a probe that runs it out stops the rule, naming it."""
    import ptxlint.analysis

    original, seen = ptxlint.analysis.analyze, []

    def probe(*args, deadline=None, **kwargs):
        seen.append(deadline)
        deadline.end = time.perf_counter()  # this probe uses up the budget
        return original(*args, deadline=deadline, **kwargs)
    text = HEADER + textwrap.dedent("""\
        .visible .entry k(.param .u32 n)
        {
            .reg .pred %p<2>;
            .reg .b32 %r<12>;
            .reg .f32 %f<2>;
            .shared .align 4 .b8 tile[1024];
            ld.param.u32 %r10, [n];
            mov.u32 %r1, %tid.x;
            setp.ge.u32 %p1, %r1, %r10;
            @%p1 bra $done;
            shl.b32 %r2, %r1, 2;
            mov.u32 %r3, tile;
            add.s32 %r4, %r3, %r2;
            st.shared.f32 [%r4], %f1;
        $done:
            ret;
        }
        """)
    from ptxlint.launch import LaunchConfig
    options = LintOptions(launch=LaunchConfig.parse("block=1024"), time_budget=30,
                          enable=frozenset({"out-of-bounds", INCOMPLETE}))
    [found] = lint_text(text, "k.ptx", options).diagnostics  # as the search would find
    assert found.message.startswith("store may be out of bounds when `n` > 256: ")
    monkeypatch.setattr(ptxlint.analysis, "analyze", probe)
    [note] = lint_text(text, "k.ptx", options).diagnostics
    assert len(seen) == 1 and seen[0] is not None and seen[0].budget == 30
    assert note.rule == INCOMPLETE and note.details["unfinished"] == ["out-of-bounds"]
    assert note.details["phase"].startswith("rule out-of-bounds > re-analysis with ")


if __name__ == "__main__":
    sys.stdout.write(module(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
