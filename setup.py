"""Compiles the hot modules (`ptxlint/_native.py`: NATIVE_MODULES) with Cython.

Everything else is in pyproject.toml. Each compiled copy is named after its source's hash
(`strided-<hash>.cpython-...so`, see `ptxlint/_native.py`), so it is used only while the
source is the text it was built from. Compiling is optional: without Cython or a C
compiler the install is plain Python, as correct and about a fifth slower.
"""

import os
import re
import runpy

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = runpy.run_path(os.path.join(HERE, "ptxlint", "_native.py"))


def _source(module: str) -> str:
    return os.path.join(*module.split(".")) + ".py"


class BuildNative(build_ext):
    """build_ext that names each output after its source's hash and builds in parallel."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self):
        super().run()
        if self.inplace or getattr(self, "editable_mode", False):
            for ext in self.extensions:
                _remove_stale(ext.name)

    # distutils asks for an output's name two ways: get_ext_fullpath (the build) passes
    # the full name and then asks get_ext_filename for the last part only; setuptools'
    # in-place copy (editable installs) asks get_ext_filename with the full name
    def get_ext_fullpath(self, ext_name):
        return _hashed(ext_name, super().get_ext_fullpath(ext_name))

    def get_ext_filename(self, fullname):
        path = super().get_ext_filename(fullname)
        return _hashed(fullname, path) if fullname in NATIVE["NATIVE_MODULES"] else path


def _hashed(module: str, path: str) -> str:
    """`path` (`.../strided.cpython-311-....so`) renamed to the compiled copy's name."""
    folder, name = os.path.split(path)
    short = module.rpartition(".")[2]
    assert name.startswith(short + "."), (module, path)
    return os.path.join(folder, _stem(module) + name[len(short):])


def _stem(module: str) -> str:
    with open(os.path.join(HERE, _source(module)), "rb") as f:
        return NATIVE["compiled_stem"](module, f.read())


def _remove_stale(module: str) -> None:
    """Delete `module`'s compiled copies built from older text (they would never load)."""
    folder, short = os.path.join(HERE, *module.split(".")[:-1]), module.rpartition(".")[2]
    current = _stem(module) + "."
    copy = re.compile(re.escape(short) + r"-[0-9a-f]{16}\.")
    for name in os.listdir(folder):
        if copy.match(name) and not name.startswith(current):
            os.remove(os.path.join(folder, name))


def _extensions():
    if os.environ.get(NATIVE["PURE_ENV"]) == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("ptxlint: Cython is not installed; installing the pure-Python modules only")
        return []
    from setuptools import Extension

    exts = [Extension(m, [_source(m)], optional=True) for m in NATIVE["NATIVE_MODULES"]]
    return cythonize(
        exts,
        build_dir=os.path.join("build", "cython"),
        language_level=3,
        # Python semantics only: annotations stay annotations (never C types)
        compiler_directives={"annotation_typing": False, "binding": True},
        nthreads=os.cpu_count() or 1,
        quiet=True,
    )


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildNative})
