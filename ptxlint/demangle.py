"""C++ names as CUDA programmers wrote them: `_Z14transposeNaivePfS_ii` is
`transposeNaive(float*, float*, int, int)`.

The demangling is libstdc++'s own `abi::__cxa_demangle` (libc++'s on macOS), the one
`c++filt` uses, called through `cxxfilt`: no hand-written demangler. Where it is not
available (no C++ runtime library on the machine) or a name is not a valid mangled
name (nvcc's `<kernel>_param_0`), the name stays as it is.
"""
from __future__ import annotations

import fnmatch
import re
from functools import lru_cache

# a mangled name inside a message: `_Z` then identifier characters (PTX allows `$`)
_MANGLED = re.compile(r"(?<![\w$])_Z[\w$]+")


@lru_cache(maxsize=1)
def _backend():
    try:
        import cxxfilt  # noqa: PLC0415  (loads the C++ runtime library: on first use only)
    except Exception:  # noqa: BLE001  (cxxfilt.Error without a C++ library, or not installed)
        return None
    return cxxfilt


@lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    """The demangled name, or `name` itself when it is not a mangled C++ name."""
    if not name.startswith("_Z"):
        return name
    backend = _backend()
    if backend is None:
        return name
    try:
        out = backend.demangle(name)
    except Exception:  # noqa: BLE001  (InvalidName, or the library failing)
        return name
    return out or name


def demangle_text(text: str) -> str:
    """Every mangled name in `text` demangled (those that are not valid stay)."""
    if "_Z" not in text:
        return text
    return _MANGLED.sub(lambda m: demangle(m.group()), text)


def _without_parameters(name: str) -> str:
    """`ns::f<int>(float*, int)` -> `ns::f<int>`: the last balanced `(...)` cut off."""
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return name[:i]
    return name


def _without_template(name: str) -> str:
    """`ns::f<int>` -> `ns::f`."""
    if not name.endswith(">"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {">": 1, "<": -1}.get(name[i], 0)
        if depth == 0:
            return name[:i]
    return name


@lru_cache(maxsize=4096)
def aliases(name: str) -> tuple[str, ...]:
    """The names `--kernel` matches a kernel by: the PTX name, the demangled one, and
    the demangled one without its parameter list, without its return type (a template
    instance's demangling starts with it) and without its template arguments:
    `_Z5scaleIfEvPT_i`, `void scale<float>(float*, int)`, `scale<float>`, `scale`."""
    full = demangle(name)
    if full == name:
        return (name,)
    out = [name, full]
    bare = _without_parameters(full)
    if " " in bare and not bare.startswith("operator"):
        # the return type of a template instance; `<`/`>` inside the name's own
        # template arguments may hold spaces too, so cut at the first space outside
        depth = 0
        for i, c in enumerate(bare):
            depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(c, 0)
            if c == " " and depth == 0:
                bare = bare[i + 1:]
                break
    out += [bare, _without_template(bare)]
    return tuple(dict.fromkeys(out))


def matches(name: str, pattern: str) -> bool:
    """Whether `--kernel pattern` (a name or an fnmatch pattern) selects kernel `name`."""
    return any(fnmatch.fnmatchcase(alias, pattern) for alias in aliases(name))


__all__ = ["demangle", "demangle_text", "aliases", "matches"]
