"""Compiled copies of the hot modules, used only while they match their source.

The install (`setup.py`) compiles the modules of NATIVE_MODULES with Cython, unchanged,
into extension modules beside their source, named after the source's hash:
``ptxlint/domains/strided.py`` -> ``ptxlint/domains/strided-<hash>.cpython-311-...so``.
Python's own import machinery never picks such a file (the name is not the module's),
so without this finder ptxlint is plain Python. With it, ``import ptxlint.domains.strided``
loads the compiled copy when one was built from the very text of ``strided.py`` and the
source otherwise: editing a module in a checkout falls back to the edited source at once,
never to a stale build (``pip install -e .`` again compiles the new text).

The compiled copy has the same behaviour as the source (Cython compiles the Python
semantics; no annotations are used as C types) and does about a fifth fewer machine
instructions (docs/native.md). ``PTXLINT_PURE=1`` turns the finder off; `status()` says what was loaded.
This module imports nothing of ptxlint: `setup.py` reads NATIVE_MODULES from it.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys

#: Compiled at install: the parser's, the analysis's and the rules' modules (where a
#: lint spends its time). A module here must run unchanged under Cython: no frame inspection, no
#: `inspect` of its functions by callers (pyparsing's parse actions take all 3 arguments).
NATIVE_MODULES = (
    "ptxlint.analysis",
    "ptxlint.cfg",
    "ptxlint.launch",
    "ptxlint.source",
    "ptxlint.domains.affine",
    "ptxlint.domains.align",
    "ptxlint.domains.lattice",
    "ptxlint.domains.relation",
    "ptxlint.domains.space",
    "ptxlint.domains.state",
    "ptxlint.domains.strided",
    "ptxlint.domains.strided_arith",
    "ptxlint.domains.strided_bits",
    "ptxlint.domains.value",
    "ptxlint.interp.arith",
    "ptxlint.interp.arith_bits",
    "ptxlint.interp.arith_compare",
    "ptxlint.interp.arith_move",
    "ptxlint.interp.arith_values",
    "ptxlint.interp.barrier_intervals",
    "ptxlint.interp.barrier_split",
    "ptxlint.interp.block_uniform",
    "ptxlint.interp.calls",
    "ptxlint.interp.context",
    "ptxlint.interp.divergence",
    "ptxlint.interp.facts",
    "ptxlint.interp.induction",
    "ptxlint.interp.links",
    "ptxlint.interp.loops",
    "ptxlint.interp.memory",
    "ptxlint.interp.races",
    "ptxlint.interp.refine",
    "ptxlint.interp.relations",
    "ptxlint.interp.relevance",
    "ptxlint.interp.thread_eval",
    "ptxlint.interp.thread_exprs",
    "ptxlint.interp.thread_pairs",
    "ptxlint.interp.transfer",
    "ptxlint.interp.warp",
    "ptxlint.interp.worklist",
    "ptxlint.ir.build",
    "ptxlint.ir.instruction",
    "ptxlint.ir.module",
    "ptxlint.ir.operands",
    "ptxlint.ir.registry",
    "ptxlint.ir.traits",
    "ptxlint.ir.types",
    "ptxlint.ir.instructions.compare",
    "ptxlint.ir.instructions.control",
    "ptxlint.ir.instructions.convert",
    "ptxlint.ir.instructions.integer",
    "ptxlint.ir.instructions.logic",
    "ptxlint.ir.instructions.memory",
    "ptxlint.ir.instructions.move",
    "ptxlint.parse.grammar",
    "ptxlint.parse.lexer",
    "ptxlint.rules.address_space_mismatch",
    "ptxlint.rules.bank_conflict",
    "ptxlint.rules.barrier_divergence",
    "ptxlint.rules.divergent_bra_uni",
    "ptxlint.rules.misaligned_access",
    "ptxlint.rules.out_of_bounds",
    "ptxlint.rules.replay",
    "ptxlint.rules.shared_memory_race",
    "ptxlint.rules.uncoalesced_access",
)

#: Set to "1" to load every module from its source.
PURE_ENV = "PTXLINT_PURE"
#: Hex digits of the source's SHA-256 in a compiled copy's name.
HASH_DIGITS = 16


def source_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:HASH_DIGITS]


def compiled_stem(module: str, data: bytes) -> str:
    """The file name, without the extension suffix, of `module`'s copy compiled from
    source text `data`: ``strided-<hash>``."""
    return f"{module.rpartition('.')[2]}-{source_hash(data)}"


class NativeFinder:
    """A meta-path finder for NATIVE_MODULES: the compiled copy that matches the source
    found on the package's path, or nothing (the next finders load the source)."""

    def __init__(self, modules=NATIVE_MODULES):
        self.modules = frozenset(modules)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.modules or not path:
            return None
        for folder in path:
            found, compiled = compiled_copy(fullname, folder)
            if compiled:
                loader = importlib.machinery.ExtensionFileLoader(fullname, compiled)
                return importlib.util.spec_from_file_location(fullname, compiled,
                                                              loader=loader)
            if found:
                return None  # the source is here but no matching copy: the source it is
        return None


def compiled_copy(module: str, folder: str) -> tuple[bool, str | None]:
    """(whether `folder` holds `module`'s source, the path of its matching compiled copy
    there or None)."""
    try:
        with open(os.path.join(folder, module.rpartition(".")[2] + ".py"), "rb") as f:
            data = f.read()
    except OSError:
        return False, None
    stem = os.path.join(folder, compiled_stem(module, data))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.isfile(stem + suffix):
            return True, stem + suffix
    return True, None


def install() -> None:
    """Put the finder first on `sys.meta_path` (once), unless PTXLINT_PURE=1."""
    if os.environ.get(PURE_ENV) == "1":
        return
    if not any(isinstance(f, NativeFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, NativeFinder())


def is_compiled(module) -> bool:
    return isinstance(getattr(module, "__loader__", None),
                      importlib.machinery.ExtensionFileLoader)


def status() -> tuple[int, int]:
    """(compiled, imported): how many of the NATIVE_MODULES imported so far were loaded
    from a compiled copy."""
    mods = [sys.modules[m] for m in NATIVE_MODULES if m in sys.modules]
    return sum(map(is_compiled, mods)), len(mods)


def describe() -> str:
    """For ``ptxlint --version``: how many hot modules will load compiled, and why not."""
    if os.environ.get(PURE_ENV) == "1":
        return f"pure Python: {PURE_ENV}=1"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fresh = sum(
        compiled_copy(m, os.path.join(root, *m.split(".")[:-1]))[1] is not None
        for m in NATIVE_MODULES)
    if fresh == 0:
        return "pure Python: not compiled at install"
    return f"{fresh} of {len(NATIVE_MODULES)} hot modules compiled"
