"""The JSON report: `{"version": 1, "tool": {...}, "diagnostics": [...]}` (docs/json-format.md)."""
from __future__ import annotations

import json
from collections.abc import Iterable

from .. import __version__
from ..diagnostics import Diagnostic

SCHEMA_VERSION = 1


def render(diagnostics: Iterable[Diagnostic]) -> str:
    doc = {
        "version": SCHEMA_VERSION,
        "tool": {"name": "ptxlint", "version": __version__},
        "diagnostics": [d.to_json() for d in sorted(diagnostics, key=Diagnostic.sort_key)],
    }
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"
