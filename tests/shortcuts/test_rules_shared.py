"""What several rules used to build each for itself, made once per kernel: the kernel's
instruction list, the barrier sites; and the shortcuts that keep their answers: the
static shared variables read from one joined text of the operands, the first warp of a
`bar.warp.sync` whose mask names lanes that never come."""
from __future__ import annotations

import pytest

from differential.static import lint_kernel
from ptxlint.ir.build import parse_module
from ptxlint.ir.instruction import Instruction
from ptxlint.launch import LaunchConfig
from ptxlint.lint import LintOptions, lint_text
from ptxlint.rules.shared_memory_limit import _NAME, _is_static_shared, static_shared
from ptxlint.threads.barrier_split import BarrierSplits

MODULE = """.version 8.0
.target sm_80
.address_size 64

.shared .align 4 .b8 named[64];
.shared .align 4 .b8 addressed[128];
.shared .align 4 .b8 unused[256];
.extern .shared .align 4 .b8 dynamic[];

.func helper()
{
    .reg .b32 %r<4>;
    mov.u32 %r1, named;
    ret;
}

.visible .entry example(.param .u64 buf)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b32 unused2;
    .shared .align 4 .b8 local_tile[32];

    mov.u32 %r1, %tid.x;
    st.shared.u32 [addressed+16], %r1;
    mov.u32 unused2, %r1;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra SKIP;
    bar.warp.sync -1;
SKIP:
    call helper, ();
    bar.sync 0;
    ret;
}
"""


def scanned(module, kernel) -> list:
    """The definition: every operand's names, read one operand at a time."""
    functions, todo = [kernel], [kernel]
    while todo:
        for insn in todo.pop().instructions:
            callee = getattr(insn, "callee", None)
            fn = module.function(str(callee)) if callee is not None else None
            if fn is not None and fn.body is not None and fn not in functions:
                functions.append(fn)
                todo.append(fn)
    names, out = set(), []
    for fn in functions:
        out += [v for v in fn.variables if _is_static_shared(v)]
        for insn in fn.instructions:
            for op in insn.operands:
                names.update(_NAME.findall(str(op)))
    return out + [v for v in module.variables if _is_static_shared(v) and v.name in names]


def test_static_shared_names_what_the_operands_name():
    module = parse_module(MODULE, "t.ptx").module
    kernel = module.function("example")
    want = [v.name for v in scanned(module, kernel)]
    assert want == ["local_tile", "named", "addressed"]
    assert [v.name for v in static_shared(module, kernel)] == want
    assert [v.name for v in static_shared(module, kernel, kernel.instructions)] == want


def test_the_instruction_list_and_barrier_sites_are_made_once_per_kernel():
    module = parse_module(MODULE, "t.ptx").module
    facts = lint_kernel(module, "example", LaunchConfig.parse("block=64")).facts
    kernel = facts.function
    listed = kernel.instructions
    assert listed is kernel.instructions
    assert listed == [s for s in kernel.body if isinstance(s, Instruction)]
    kernel.body.append(listed[0])  # the builder appends: the list follows
    assert kernel.instructions == listed + [listed[0]]
    kernel.body.pop()
    kernel.body = list(kernel.body)  # a new body: listed again
    assert kernel.instructions == listed and kernel.instructions is not listed
    one, two = BarrierSplits(facts, module), BarrierSplits(facts, module)
    assert one.sites is two.sites and [k for _, k in one.sites] == ["warp", "cta"]


@pytest.mark.parametrize("test, label", [
    ("setp.lt.u32 %p1, %r1, 16;", "lanes 0-15 are in the mask but skip it"),
    ("setp.ge.u32 %p1, %r1, 48;", "lanes 16-31 of warp 1 are in the mask but skip it"),
    ("setp.eq.u32 %p1, %r1, 64;", None),  # every lane comes
])
def test_warp_sync_names_the_first_warp_with_lanes_that_never_come(test, label):
    options = LintOptions(launch=LaunchConfig.parse("block=64"),
                          enable=frozenset({"barrier-divergence"}))
    text = MODULE.replace("setp.lt.u32 %p1, %r1, 16;", test)
    found = [d for d in lint_text(text, "t.ptx", options).diagnostics
             if "member mask" in d.message]
    assert [d.label for d in found] == ([label] if label else [])
