"""The shortcuts of the per-thread expression layer answer as the plain computations
they replace: `ExprBuilder.state` (replayed from access states) as `Facts.state_before`,
`ValueSources` (planned once per instruction) as the round-robin fixpoint over
`Instruction.uses`, `BlockVariance`'s per-block plans as `transfer` one instruction at a
time, `flow_key`'s fast path and `Conditions`' memo of linear forms as computed afresh,
and `request_groups`' registers written once as a count of `Instruction.defs`."""
from pathlib import Path

import pytest

from ptxlint.analysis import analyze
from ptxlint.ir.build import parse_module
from ptxlint.ir.operands import Register
from ptxlint.ir.reg_flow import _ELEMENT, flow_key
from ptxlint.rules.requests import _written_once
from ptxlint.threads.block_uniform import BlockVariance
from ptxlint.threads.pred_conditions import Conditions
from ptxlint.threads.thread_exprs import ExprBuilder
from ptxlint.threads.value_sources import ITER, ValueSources, _cyclic

SAMPLES = Path(__file__).resolve().parents[2] / "ptx_samples"
FILES = ["shared-memory-race/double_buffer.ok.ptx", "shared-memory-race/tree_sum.bad.ptx",
         "shared-memory-race/toggle_buffer.ok.ptx", "uninitialized-read/partial_tile.bad.ptx",
         "uninitialized-read/predicated.bad.ptx", "global-memory-race/grid_stride.bad.ptx",
         "global-memory-race/block_sum.ok.ptx", "bank-conflict/column.bad.ptx",
         "warp-sync-mask/ballot_syncwarp.bad.ptx"]


def _kernels(name):
    module = parse_module((SAMPLES / name).read_text(), name).module
    for fn in module.entries:
        yield fn, analyze(fn, None, module=module).facts


@pytest.mark.parametrize("name", FILES)
def test_state_as_state_before(name):
    for fn, facts in _kernels(name):
        builder = ExprBuilder(facts, BlockVariance(facts))
        insns = list(fn.instructions)
        for insn in insns[::-1] + insns:  # backwards first: replays from kept states
            got, want = builder.state(insn), facts.state_before(insn)
            assert (got is None) == (want is None)
            if got is not None:
                assert got.regs == want.regs, (name, str(insn))


def _naive_sources(vs: ValueSources) -> dict:
    facts, cfg = vs.facts, vs.cfg
    accs = {id(a.insn): a for a in facts.accesses}
    control = cfg.control_dependence()
    insns = [(b, insn) for b, block in enumerate(cfg.blocks)
             if facts.in_states[b] is not None for insn in block.instructions]
    naive = ValueSources.__new__(ValueSources)
    naive.__dict__.update(vs.__dict__)
    naive.deps = {k: ITER for k in _cyclic(insns)}
    changed = True
    while changed:
        changed = False
        for b, insn in insns:
            srcs = naive._own(insn, accs.get(id(insn)))
            for d in control.get(b, ()):
                term = cfg.blocks[d].terminator
                if term is not None and term.guard is not None:
                    srcs |= naive.of(term.guard.register)
            for reg in insn.uses:
                srcs |= naive.of(reg)
            for reg in insn.defs:
                old = naive.deps.get(reg.key, frozenset())
                if not srcs <= old:
                    naive.deps[reg.key] = old | srcs
                    changed = True
    return naive.deps


@pytest.mark.parametrize("name", FILES)
def test_value_sources_as_round_robin(name):
    for _fn, facts in _kernels(name):
        vs = ValueSources(facts)
        assert vs.deps == _naive_sources(vs)


@pytest.mark.parametrize("name", FILES)
def test_block_plans_as_transfer(name):
    for fn, facts in _kernels(name):
        bv = BlockVariance(facts)
        for b, block in enumerate(facts.cfg.blocks):
            varying = bv.entry_sets[b]
            for insn in block.instructions:
                if varying is not None:
                    assert bv._before(insn) == varying
                    varying = bv.transfer(insn, varying)
        assert all(k in bv.index for insn in fn.instructions for k in insn.def_keys
                   if bv.entry_sets[facts.cfg.block_of(insn)] is not None)


def _slow_flow_key(reg: Register) -> str:
    base, _, suffix = reg.name.partition(".")
    element = _ELEMENT.get(suffix) if not reg.is_special else None
    return f"{reg.key}.{element}" if element else reg.key


@pytest.mark.parametrize("name,key", [("%r1", "%r1"), ("%r1", "%r1_2"), ("%v.x", "%v"),
                                      ("%v.g", "%v"), ("%r2.b0", "%r2"), ("%tid.x", "%tid.x"),
                                      ("%laneid", "%laneid"), ("%envreg3", "%envreg3")])
def test_flow_key_fast_path(name, key):
    reg = Register(name, key)
    assert flow_key(reg) == _slow_flow_key(reg)


@pytest.mark.parametrize("name", FILES)
def test_linear_memo_as_fresh(name):
    for fn, _facts in _kernels(name):
        insns = list(fn.instructions)
        index: dict[str, int] = {}
        conds = Conditions(insns, lambda k: index.setdefault(k, len(index)))
        for insn in insns:
            for op in insn.sources:
                if isinstance(op, Register):
                    for depth in (0, 3, 8):
                        got = conds._linear(op, depth)
                        conds._linears.clear()
                        assert got == conds._linear(op, depth)


@pytest.mark.parametrize("name", FILES)
def test_written_once_as_count(name):
    for fn, _facts in _kernels(name):
        count: dict[str, int] = {}
        for insn in fn.instructions:
            for r in insn.defs:
                count[r.key] = count.get(r.key, 0) + 1

        class Rc:
            function = fn
        assert _written_once(Rc()) == {k for k, n in count.items() if n == 1}
