"""The JSON report (schema in docs/json-format.md; version 1 is stable: fields may be
added, none renamed or removed without a new version)."""
from __future__ import annotations

import enum
import json
import math
from collections.abc import Iterable
from typing import Any

from .. import __version__
from ..diagnostics import Diagnostic
from . import shown_path

SCHEMA_VERSION = 1


def diagnostic(d: Diagnostic) -> dict[str, Any]:
    """One entry of `diagnostics`: `Diagnostic.to_json` plus the label, notes and help."""
    out = d.to_json()
    out["file"] = shown_path(d.file)
    if d.cuda is not None:
        out["cuda_file"] = shown_path(d.cuda.file)
    out["details"] = jsonable(out["details"])
    out["label"] = d.label
    out["notes"] = list(d.notes)
    out["help"] = d.help
    out["related"] = [{"line": r.span.line, "column": r.span.col, "end_line": r.span.end_line,
                       "end_column": r.span.end_col, "label": r.label} for r in d.related]
    out["occurrences"] = [occurrence(member) for member in d.expanded()]
    return out


def occurrence(d: Diagnostic) -> dict[str, Any]:
    """One instruction of a diagnostic (all of a group's, in file order): where, in
    which kernel, and what the rule said there."""
    full = d.to_json()
    return {key: full[key] for key in ("line", "column", "end_line", "end_column", "kernel",
                                       "kernel_demangled", "message")} | {
        "label": d.label, "details": jsonable(d.details)}


def document(diagnostics: Iterable[Diagnostic]) -> dict[str, Any]:
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "ptxlint", "version": __version__},
        "diagnostics": [diagnostic(d) for d in sorted(diagnostics, key=Diagnostic.sort_key)],
    }


def render(diagnostics: Iterable[Diagnostic]) -> str:
    return json.dumps(document(diagnostics), indent=2, allow_nan=False) + "\n"


def jsonable(value: Any) -> Any:
    """`details` as plain JSON: sets become sorted lists, tuples lists, enums their
    names, non-finite floats strings, anything else its `str`."""
    if isinstance(value, enum.Enum):
        return str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


__all__ = ["render", "document", "diagnostic", "occurrence", "jsonable", "SCHEMA_VERSION"]
