"""`shared-memory-limit`: static shared memory above what ptxas accepts, static plus the
launch's dynamic size above the target's block maximum, which variables count, and the
docstring examples."""
from __future__ import annotations

import re

import pytest

from ptxlint.lint import LintOptions, lint_text
from ptxlint.launch import LaunchConfig
from ptxlint.rules.shared_memory_limit import SharedMemoryLimit

RULE = "shared-memory-limit"


def module(decls: str = "", body: str = "", target: str = "sm_90", top: str = "") -> str:
    return (f".version 9.0\n.target {target}\n.address_size 64\n{top}"
            ".visible .entry k()\n{\n    .reg .b32 %r<4>;\n" + decls + body + "    ret;\n}\n")


def lint(text: str, smem: int | None = None, arch: str | None = None):
    launch = LaunchConfig(block=(32, 1, 1), grid=(1, 1, 1), dynamic_smem=smem) \
        if smem is not None else None
    return [d for d in lint_text(text, "t.ptx", LintOptions(
        arch=arch, launch=launch, enable=frozenset({RULE}))).diagnostics if d.rule == RULE]


def test_static_shared_memory_above_48_kib():
    [d] = lint(module("    .shared .align 4 .b8 a[40000];\n    .shared .align 4 .b8 b[10000];\n"))
    assert d.message == ("`k` declares 50000 bytes of static shared memory; sm_90 (the "
                         "module's .target) allows 49152")
    assert d.details == {"static_bytes": 50000, "dynamic_bytes": None, "limit": 49152,
                         "target": "sm_90"}
    assert lint(module("    .shared .align 4 .b8 a[49152];\n")) == []


def test_module_scope_variables_count_when_named():
    top = ".shared .align 4 .b8 big[40000];\n"
    local = "    .shared .align 4 .b8 loc[10000];\n"
    assert lint(module(local, top=top)) == []  # `big` unused: ptxas does not allocate it
    [d] = lint(module(local, "    mov.u32 %r1, big;\n", top=top))
    assert d.details["static_bytes"] == 50000


def test_dynamic_shared_memory_counts_against_the_targets_maximum():
    text = module("    .shared .align 4 .b8 a[32768];\n")
    assert lint(text) == [] and lint(text, smem=196608) == []
    [d] = lint(text, smem=204800)
    assert d.message == ("`k` needs 237568 bytes of shared memory per block (32768 static + "
                         "204800 dynamic); sm_90 (the module's .target) allows 232448")
    [d] = lint(text, smem=80 * 1024, arch="sm_86")  # 99 KiB per block
    assert d.details["limit"] == 99 * 1024 and "the arch option" in d.message


def test_extern_arrays_are_dynamic():
    top = ".extern .shared .align 16 .b8 dyn[];\n"
    assert lint(module(body="    mov.u32 %r1, dyn;\n", top=top)) == []


@pytest.mark.parametrize("section,found", [("Example", 1), ("Use instead", 0)])
def test_docstring_examples(section: str, found: int):
    doc = SharedMemoryLimit.doc()
    body = doc.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```ptx\n(.+?)```", body, re.S).group(1)
    if ".extern" in block:
        assert lint(module(body="    mov.u32 %r1, tile;\n", top=block)) == []
    else:
        assert len(lint(module(block))) == found
