"""The launch each kernel of a file is analysed with, from what the user wrote.

Sources, lowest precedence first, merged field by field (a later one's block, grid,
dynamic shared memory and each parameter's value replace an earlier one's):

1. the file's launch comment, `// ptxlint: launch [kernel=PATTERN] block=32,8 grid=64
   smem=0 param.n=1024 buffer.in=4096` (the first whose pattern matches the kernel;
   no pattern matches every kernel);
2. the configuration file's `[[tool.ptxlint.launch]]` table with the command line's
   launch options on top (`LintOptions.launches`).

`LintOptions.launch` (the API's and the pre-launch hook's one launch for every kernel)
is used alone: the file's comments are not read then.

A parameter is named as the PTX names it, by its 0-based index, or by its CUDA name
when the PTX records that: hand-written PTX names its parameters, and `nvcc -G` keeps
the CUDA names in its DWARF (`debuginfo`); nvcc's other output only has
`<kernel>_param_<i>`. A parameter is given to the kernels that have it; a kernel of
the same file without it is analysed without the value and gets a `launch-config`
note saying so. A parameter no kernel of the file has is a `launch-config` error.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import demangle
from .debuginfo import parameter_names
from .diagnostics import Diagnostic, Severity
from .ir.module import Function, Module
from .launch import LaunchConfig
from .source import SourceFile

if TYPE_CHECKING:
    from .lint import LintOptions

LAUNCH_ERROR = "launch-config"
_COMMENT = re.compile(r"//\s*ptxlint:\s*launch\b(.*)$", re.M)
_NVCC_PARAM = re.compile(r".*_param_\d+$")


@dataclass(frozen=True)
class LaunchComment:
    pattern: str  # fnmatch pattern of the kernels it is for ("*": all)
    config: LaunchConfig


@dataclass
class Plan:
    """One kernel's launch (None: nothing given) and the notes and errors about it."""

    launch: LaunchConfig | None = None
    error: str | None = None  # the kernel is not analysed
    skipped: list[str] = field(default_factory=list)  # parameters it does not have


def comments(source: SourceFile) -> tuple[list[LaunchComment], list[Diagnostic]]:
    """The file's launch comments, and a `launch-config` error for each malformed one."""
    found: list[LaunchComment] = []
    errors: list[Diagnostic] = []
    if "ptxlint:" not in source.text:
        return found, errors
    for m in _COMMENT.finditer(source.text):
        words, pattern = m.group(1).split(), "*"
        if words and words[0].startswith("kernel="):
            pattern = words.pop(0).partition("=")[2] or "*"
        try:
            found.append(LaunchComment(pattern, LaunchConfig.parse(" ".join(words))))
        except ValueError as exc:
            errors.append(Diagnostic(LAUNCH_ERROR, Severity.ERROR,
                                     f"invalid launch comment: {exc}", source.path,
                                     source.span(m.start(), m.end()),
                                     help="write it as `// ptxlint: launch block=32,8 "
                                          "grid=64 param.n=1024 buffer.in=4096`"))
    return found, errors


def plan(module: Module, options: LintOptions) -> tuple[dict[int, Plan], list[Diagnostic]]:
    """Per entry (by `id`) its plan, and the file-level errors (malformed comments)."""
    found: list[LaunchComment] = []
    errors: list[Diagnostic] = []
    if options.launch is None and module.source is not None:
        found, errors = comments(module.source)
    names = parameter_names(module.sections) if module.sections else {}
    layers = {id(fn): _layers(fn, found, options) for fn in module.entries}
    known: set = set()  # parameter keys some kernel of the file has
    for fn in module.entries:
        for layer in layers[id(fn)]:
            for key in (*layer.params, *layer.extents):
                if _resolve(fn, key, names.get(fn.name)) is not None:
                    known.add(key)
    return {id(fn): _plan(fn, layers[id(fn)], names.get(fn.name), known)
            for fn in module.entries}, errors


def _layers(fn: Function, found: list[LaunchComment], options: LintOptions
            ) -> list[LaunchConfig]:
    if options.launch is not None:
        return [options.launch]
    comment = next((c.config for c in found if demangle.matches(fn.name, c.pattern)), None)
    given = options.launch_for(fn.name)
    return [c for c in (comment, given) if c is not None]


def _resolve(fn: Function, key: str | int, cuda_names) -> str | None:
    """The PTX name of the parameter `key` names in `fn`, or None."""
    p = fn.param(key)
    if p is not None:
        return p.name
    if isinstance(key, str) and cuda_names and len(cuda_names) == len(fn.params) \
            and key in cuda_names:
        return fn.params[cuda_names.index(key)].name
    return None


def _plan(fn: Function, layers: list[LaunchConfig], cuda_names, known: set) -> Plan:
    if not layers:
        return Plan()
    out = Plan()
    merged = LaunchConfig()
    for layer in layers:
        try:
            params = _by_name(fn, layer.params, cuda_names, known, out, "a value")
            extents = _by_name(fn, layer.extents, cuda_names, known, out, "a buffer size")
        except ValueError as exc:
            return Plan(error=str(exc))
        merged = LaunchConfig(
            block=layer.block or merged.block, grid=layer.grid or merged.grid,
            dynamic_smem=layer.dynamic_smem if layer.dynamic_smem is not None
            else merged.dynamic_smem,
            params={**merged.params, **params}, extents={**merged.extents, **extents})
    out.launch = merged
    return out


def _by_name(fn: Function, given: dict, cuda_names, known: set, out: Plan, what: str
             ) -> dict[str, object]:
    """One source's values keyed by PTX parameter names; a key another kernel of the
    file has is left out (and listed in `out.skipped`), one no kernel has is an error."""
    resolved: dict[str, object] = {}
    spelled: dict[str, str | int] = {}
    for key, value in given.items():
        name = _resolve(fn, key, cuda_names)
        if name is None:
            if key not in known:
                raise ValueError(_missing(fn, key, cuda_names))
            if str(key) not in out.skipped:
                out.skipped.append(str(key))
            continue
        if name in resolved:
            raise ValueError(f"{what} for parameter '{name}' is given twice "
                             f"(as {spelled[name]!r} and as {key!r})")
        resolved[name], spelled[name] = value, key
    return resolved


def _missing(fn: Function, key: str | int, cuda_names) -> str:
    if isinstance(key, int):
        return f"'{fn.name}' has {len(fn.params)} parameters: index {key} is out of range"
    usable = cuda_names and len(cuda_names) == len(fn.params)
    names = ", ".join(p.name + (f" ({cuda_names[i]})" if usable and cuda_names[i] else "")
                      for i, p in enumerate(fn.params)) or "none"
    message = f"'{fn.name}' has no parameter named '{key}' (parameters: {names})"
    if not usable and fn.params and all(_NVCC_PARAM.match(p.name) for p in fn.params):
        message += ("; nvcc keeps CUDA parameter names only in -G builds: give the "
                    "0-based index")
    return message


def not_applied(module: Module, fn: Function, skipped: list[str]) -> Diagnostic:
    keys = ", ".join(f"`{k}`" for k in skipped)
    return Diagnostic(
        LAUNCH_ERROR, Severity.NOTE,
        f"launch value{'s' if len(skipped) > 1 else ''} for {keys} not applied to "
        f"'{fn.name}': it has no such parameter (another kernel of the file has)",
        module.path, fn.span, kernel=fn.name, details={"skipped": list(skipped)},
        help="give --kernel, or a [[tool.ptxlint.launch]] table per kernel, to say "
             "which kernel a value is for")


__all__ = ["plan", "comments", "not_applied", "Plan", "LaunchComment"]
