"""The compiled copies of the hot modules (`ptxlint._native`, setup.py): loaded only
while they match their source, and the same findings as the source."""
from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptxlint import _native

ROOT = Path(__file__).resolve().parent.parent
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _package(tmp_path: Path, source: bytes) -> Path:
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "mod.py").write_bytes(source)
    return folder


def test_finder_takes_the_copy_built_from_the_current_text(tmp_path):
    folder = _package(tmp_path, b"X = 1\n")
    copy = folder / (_native.compiled_stem("pkg.mod", b"X = 1\n") + SUFFIX)
    copy.write_bytes(b"")
    spec = _native.NativeFinder(["pkg.mod"]).find_spec("pkg.mod", [str(folder)])
    assert spec is not None and spec.origin == str(copy)
    assert isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)


def test_finder_falls_back_to_the_source_once_it_is_edited(tmp_path):
    folder = _package(tmp_path, b"X = 2\n")  # edited after the build of "X = 1"
    (folder / (_native.compiled_stem("pkg.mod", b"X = 1\n") + SUFFIX)).write_bytes(b"")
    assert _native.NativeFinder(["pkg.mod"]).find_spec("pkg.mod", [str(folder)]) is None


def test_finder_leaves_other_modules_alone(tmp_path):
    folder = _package(tmp_path, b"X = 1\n")
    (folder / (_native.compiled_stem("pkg.mod", b"X = 1\n") + SUFFIX)).write_bytes(b"")
    assert _native.NativeFinder(["pkg.other"]).find_spec("pkg.mod", [str(folder)]) is None


def test_compiled_copy_names_are_not_module_names():
    """Python's own finders and pkgutil must never take a copy for a module."""
    stem = _native.compiled_stem("ptxlint.domains.strided", b"")
    assert stem.startswith("strided-") and not stem.isidentifier()


def _run(code: str, **env) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT, env={**os.environ, **env}).stdout


def test_pure_switch_loads_every_module_from_source():
    out = _run("import ptxlint.lint, ptxlint.analysis\n"
               "from ptxlint import _native; print(*_native.status())", PTXLINT_PURE="1")
    compiled, imported = map(int, out.split())
    assert compiled == 0 and imported > 20


def _compiled_now() -> int:
    return int(_run("import ptxlint.lint, ptxlint.analysis\n"
                    "from ptxlint import _native; print(_native.status()[0])"))


def _report(**env) -> dict:
    """The JSON report of every sample: each finding's rule, place, message, notes and
    details."""
    out = subprocess.run([sys.executable, "-m", "ptxlint", "ptx_samples", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env})
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_compiled_copies_find_what_the_source_finds():
    if _compiled_now() == 0:
        pytest.skip("this install has no compiled copies (no C compiler or Cython at "
                    "install time, or PTXLINT_PURE=1): nothing to compare")
    native, pure = _report(), _report(PTXLINT_PURE="1")
    assert len(native["diagnostics"]) > 100
    assert native == pure


def _c_integer(node: ast.AST) -> bool:
    """An expression Cython computes as a C integer in code without C types: an integer
    literal, `len(...)` or `ord(...)`, or arithmetic of those."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in ("len", "ord")
    if isinstance(node, ast.BinOp):
        return _c_integer(node.left) and _c_integer(node.right)
    return False


@pytest.mark.parametrize("module", _native.NATIVE_MODULES)
def test_compiled_modules_shift_no_c_integers(module):
    """`1 << len(xs)` is a C shift once compiled (64 bits, then garbage), not Python's;
    so is `2 ** len(xs)`. Two literals are folded by Cython with Python's arithmetic."""
    source = (ROOT / Path(*module.split("."))).with_suffix(".py")
    bad = [f"{source.name}:{n.lineno}: {ast.unparse(n)}"
           for n in ast.walk(ast.parse(source.read_text()))
           if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.LShift, ast.Pow))
           and _c_integer(n.left) and _c_integer(n.right)
           and not (isinstance(n.left, ast.Constant) and isinstance(n.right, ast.Constant))]
    assert not bad
