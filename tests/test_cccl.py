"""The large real-world corpus: CUB device algorithms compiled by nvcc for sm_90
(~34k lines) parse with no error and no generic (unmodelled) instruction."""
from __future__ import annotations

from collections import Counter

import pytest

from ptxlint.ir.build import parse_module

from .conftest import load_cccl_generator, nvcc_path


@pytest.fixture(scope="module")
def cccl_ptx():
    if nvcc_path() is None:
        pytest.skip("nvcc is not installed: cannot generate the CCCL corpus")
    path = load_cccl_generator().generate("sm_90")
    if path is None:
        pytest.skip("nvcc could not build the CCCL corpus")
    return path


def test_cccl_corpus_parses_cleanly(cccl_ptx):
    text = cccl_ptx.read_text()
    assert text.count("\n") > 20_000, "the corpus should be large"
    result = parse_module(text, str(cccl_ptx))
    assert [f"{d.line}:{d.column}: {d.message}" for d in result.diagnostics][:20] == []
    kernels = result.module.entries
    assert len(kernels) >= 15
    generic = Counter(i.full_opcode for f in result.module.functions for i in f.instructions
                      if i.is_unmodelled)
    assert generic == Counter()
