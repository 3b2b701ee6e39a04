"""Every bundled PTX sample parses cleanly, prints back to equivalent PTX, and the
printed PTX assembles with ptxas."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ptxlint.ir.build import parse_module
from ptxlint.ir.printer import print_module

from .conftest import ROOT, ptxas_max_version, ptxas_path, sample_files
from .ir_signature import module_signature

SAMPLES = sample_files()
# The `.bad` samples of `unsupported-instruction` use an instruction their `.target` lacks:
# ptxas must reject them (that is the defect they show), so they are exempt from
# assembling and checked to be rejected instead; their `.ok` twins assemble like any sample.
REJECTED_BY_DESIGN = "unsupported-instruction"


def rejected_by_design(path: Path) -> bool:
    return path.parent.name == REJECTED_BY_DESIGN and path.name.endswith(".bad.ptx")


def _id(p: Path) -> str:
    return str(p.relative_to(ROOT / "ptx_samples"))


def _parse(path: Path):
    return parse_module(path.read_text(), str(path))


@pytest.mark.parametrize("path", SAMPLES, ids=_id)
def test_sample_parses_without_errors(path: Path):
    result = _parse(path)
    assert [f"{d.line}:{d.column}: {d.message}" for d in result.diagnostics] == []
    assert result.module.functions, "a sample should define at least one function"


@pytest.mark.parametrize("path", SAMPLES, ids=_id)
def test_sample_uses_no_unmodelled_opcode(path: Path):
    result = _parse(path)
    generic = sorted({i.full_opcode for f in result.module.functions for i in f.instructions
                      if i.is_unmodelled})
    assert generic == []


@pytest.mark.parametrize("path", SAMPLES, ids=_id)
def test_print_then_reparse_gives_the_same_ir(path: Path):
    first = _parse(path)
    printed = print_module(first.module)
    second = parse_module(printed, "printed.ptx")
    assert [d.message for d in second.diagnostics] == []
    assert module_signature(second.module) == module_signature(first.module)


def _assembles(path: Path, text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    module = parse_module(text, str(path)).module
    sms = [t for t in module.targets if t.startswith("sm_")]
    # ptxas assembles for the newest listed target
    target = max(sms, key=lambda t: int("".join(c for c in t[3:] if c.isdigit()))) if sms \
        else "sm_75"
    out = tmp_path / "printed.ptx"
    out.write_text(text)
    options = []
    for line in path.read_text().splitlines()[:40]:
        if line.strip().startswith("// ptxas-options:"):
            options = line.split(":", 1)[1].split()
    return subprocess.run([ptxas_path(), f"-arch={target}", *options, str(out),
                           "-o", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("path", SAMPLES, ids=_id)
def test_printed_sample_assembles_with_ptxas(path: Path, tmp_path: Path):
    if ptxas_path() is None:
        pytest.skip("ptxas is not installed")
    module = _parse(path).module
    version = tuple(int(x) for x in (module.version or "0.0").split("."))
    newest = ptxas_max_version()
    if newest is not None and version > newest:
        pytest.skip(f"PTX {module.version} is newer than this ptxas accepts ({newest})")
    original = _assembles(path, path.read_text(), tmp_path)
    if rejected_by_design(path):
        assert original.returncode != 0, "ptxas accepts a sample meant to be rejected"
        assert _assembles(path, print_module(module), tmp_path).returncode != 0
        return
    if original.returncode != 0:
        pytest.skip(f"ptxas rejects the original sample too: {original.stderr.strip()[:200]}")
    printed = _assembles(path, print_module(module), tmp_path)
    assert printed.returncode == 0, printed.stderr
