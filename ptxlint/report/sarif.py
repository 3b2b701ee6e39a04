"""SARIF 2.1.0, as GitHub code scanning reads it: one run whose driver lists every rule
(id, name, summary, full doc, a link to its page, default level) and one result per
diagnostic with its physical location (1-based, end column exclusive, columns counted
in code points), the CUDA line as a related location, and ptxlint's own fields
(certainty, kernel, details) under `properties`. A result's `level` is the finding's
own severity, not one level for everything."""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..diagnostics import Diagnostic, Severity
from . import RuleInfo, pascal_name, path_bytes
from .json import jsonable

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def render(diagnostics: Iterable[Diagnostic], rules: Sequence[RuleInfo], *,
           root: str | None = None, docs_base: str | None = None,
           information_uri: str | None = None) -> str:
    """`root`: the directory result paths are made relative to (normally the
    repository root). `docs_base`: prefix of the rule pages' URLs; without it each
    `helpUri` is the page's path in the repository (`docs/rules/<id>.md`)."""
    doc = document(diagnostics, rules, root=root, docs_base=docs_base,
                   information_uri=information_uri)
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def document(diagnostics: Iterable[Diagnostic], rules: Sequence[RuleInfo], *,
             root: str | None = None, docs_base: str | None = None,
             information_uri: str | None = None) -> dict[str, Any]:
    diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
    rules = list(rules)
    known = {r.id for r in rules}
    for d in diagnostics:  # an id no catalog entry describes still needs a rule entry
        if d.rule not in known:
            known.add(d.rule)
            rules.append(RuleInfo(d.rule, pascal_name(d.rule), d.severity, "unknown",
                                  f"ptxlint diagnostic {d.rule}", ""))
    index = {r.id: i for i, r in enumerate(rules)}
    driver: dict[str, Any] = {"name": "ptxlint", "version": __version__,
                              "semanticVersion": __version__}
    if information_uri:
        driver["informationUri"] = information_uri
    driver["rules"] = [_rule(r, docs_base) for r in rules]
    run: dict[str, Any] = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints"}
    if root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": _file_uri(Path(root).resolve()) + "/"}}
    run["results"] = [_result(d, index[d.rule], root) for d in diagnostics]
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _rule(r: RuleInfo, docs_base: str | None) -> dict[str, Any]:
    help_uri = (docs_base.rstrip("/") + f"/{r.id}.md") if docs_base else r.doc_path
    return {
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.doc or r.summary},
        "help": {"text": r.doc or r.summary, "markdown": r.doc or r.summary},
        "helpUri": help_uri,
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"stage": r.stage},
    }


def _result(d: Diagnostic, rule_index: int, root: str | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(d.file, root)}
    if d.span is not None and d.line >= 1:
        span = d.span
        physical["region"] = {"startLine": span.line, "startColumn": max(1, span.col),
                              "endLine": max(span.line, span.end_line),
                              "endColumn": max(1, span.col, span.end_col)}
    out: dict[str, Any] = {
        "ruleId": d.rule,
        "ruleIndex": rule_index,
        "level": LEVEL[d.severity],
        "message": {"text": d.message},
        "locations": [{"physicalLocation": physical}],
    }
    if d.cuda is not None and d.cuda.line >= 1:
        region: dict[str, Any] = {"startLine": d.cuda.line}
        if d.cuda.column > 0:
            region["startColumn"] = d.cuda.column
        out["relatedLocations"] = [{
            "id": 1,
            "physicalLocation": {"artifactLocation": _artifact(d.cuda.file, root),
                                 "region": region},
            "message": {"text": "CUDA source of this line"}}]
    for r in d.related:
        related = out.setdefault("relatedLocations", [])
        related.append({
            "id": len(related) + 1,
            "physicalLocation": {"artifactLocation": _artifact(d.file, root),
                                 "region": {"startLine": r.span.line,
                                            "startColumn": max(1, r.span.col),
                                            "endLine": max(r.span.line, r.span.end_line),
                                            "endColumn": max(1, r.span.col, r.span.end_col)}},
            "message": {"text": r.label}})
    props: dict[str, Any] = {"certainty": str(d.certainty), "kernel": d.kernel,
                             "details": jsonable(d.details)}
    if d.label:
        props["label"] = d.label
    if d.notes:
        props["notes"] = list(d.notes)
    if d.help:
        props["help"] = d.help
    out["properties"] = props
    return out


def _artifact(path: str, root: str | None) -> dict[str, Any]:
    """A path relative to `root` when it lies inside it, else a `file:` URI. URIs
    percent-encode the name's bytes, those that are not UTF-8 included (`%FF`)."""
    p = Path(path)
    if root is not None:
        base = Path(root).resolve()
        absolute = p if p.is_absolute() else base / p
        try:
            relative = absolute.resolve().relative_to(base)
        except ValueError:
            return {"uri": _file_uri(absolute) if absolute.is_absolute() else _quote(path)}
        return {"uri": _quote(str(PurePosixPath(*relative.parts))), "uriBaseId": SRCROOT}
    if p.is_absolute():
        return {"uri": _file_uri(p)}
    return {"uri": _quote(p.as_posix())}


def _quote(path: str) -> str:
    return quote(path_bytes(path))


def _file_uri(path: Path) -> str:
    try:
        return path.as_uri()  # quotes the bytes `os.fsencode` gives (a Windows drive too)
    except (UnicodeEncodeError, ValueError):  # a surrogate no file name made
        return "file://" + _quote(path.as_posix())


__all__ = ["render", "document", "LEVEL", "SCHEMA"]
