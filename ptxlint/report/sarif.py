"""SARIF 2.1.0, as GitHub code scanning reads it: one run whose driver lists every rule
(id, name, summary, full doc, the absolute URL of its page, default level, tags and
precision) and one result per diagnostic with its physical location (1-based, end
column exclusive, columns counted in code points), the CUDA line as a related
location (a group's other instructions too: `grouping`), a fingerprint that survives unrelated edits, and ptxlint's own fields
(certainty, kernel, details) under `properties`. A result's `level` is the finding's
own severity, not one level for everything.

Paths are URIs relative to `%SRCROOT%` (the directory given as `root`) when they lie
inside it, else `file:` URIs, always normalised (`bin/../targets` is `targets`)."""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..demangle import demangle
from ..diagnostics import Diagnostic, Severity
from . import RuleInfo, links, pascal_name, path_bytes, taxonomy
from .json import jsonable

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}
FINGERPRINT = "ptxlintFinding/v1"


def render(diagnostics: Iterable[Diagnostic], rules: Sequence[RuleInfo], *,
           root: str | None = None, docs_base: str | None = None,
           information_uri: str | None = None,
           sources: Mapping[str, str] | None = None) -> str:
    """`root`: the directory result paths are made relative to (normally the
    repository root). `docs_base`: the URL the rule pages sit under (default: the
    project's documentation, `links.rules_base`). `information_uri`: the tool's home
    page (default: the project's). `sources`: the texts of the PTX and CUDA files by
    the path diagnostics name them with, for the fingerprints."""
    doc = document(diagnostics, rules, root=root, docs_base=docs_base,
                   information_uri=information_uri, sources=sources)
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def document(diagnostics: Iterable[Diagnostic], rules: Sequence[RuleInfo], *,
             root: str | None = None, docs_base: str | None = None,
             information_uri: str | None = None,
             sources: Mapping[str, str] | None = None) -> dict[str, Any]:
    diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
    rules = list(rules)
    known = {r.id for r in rules}
    for d in diagnostics:  # an id no catalog entry describes still needs a rule entry
        if d.rule not in known:
            known.add(d.rule)
            rules.append(RuleInfo(d.rule, pascal_name(d.rule), d.severity, "unknown",
                                  f"ptxlint diagnostic {d.rule}", ""))
    index = {r.id: i for i, r in enumerate(rules)}
    base = docs_base or links.rules_base({})
    driver: dict[str, Any] = {"name": "ptxlint", "version": __version__,
                              "semanticVersion": __version__,
                              "informationUri": information_uri or links.homepage()}
    driver["rules"] = [_rule(r, base) for r in rules]
    run: dict[str, Any] = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints"}
    if root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": _file_uri(Path(root).resolve()) + "/"}}
    results = [_result(d, index[d.rule], root) for d in diagnostics]
    seen: Counter = Counter()  # the same finding twice in a file: told apart by order
    for d, result in zip(diagnostics, results):
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        digest = fingerprint(d, uri, sources or {})
        seen[uri, digest] += 1
        result["partialFingerprints"] = {FINGERPRINT: f"{digest}:{seen[uri, digest]}"}
    run["results"] = results
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def fingerprint(d: Diagnostic, uri: str, sources: Mapping[str, str]) -> str:
    """A finding's identity across runs, so code scanning keeps one alert through
    unrelated edits: the rule, the file's URI, the kernel, the text of the instruction
    (its lines, comments dropped, runs of blanks made one space) and that of the CUDA
    line it came from when that text is known. No line number: inserting a line above
    moves the finding, it does not make a new one. Without the PTX text, the message
    stands for the instruction."""
    parts = [d.rule, uri, d.kernel or ""]
    text = sources.get(d.file)
    if d.span is not None and text is not None:
        lines = text.split("\n")[d.span.line - 1:max(d.span.line, d.span.end_line)]
        parts.append(" ".join(" ".join(line.split("//")[0].split()) for line in lines))
    else:
        parts.append(" ".join(d.message.split()))
    cuda = sources.get(d.cuda.file) if d.cuda is not None else None
    if cuda is not None and d.cuda is not None and d.cuda.line >= 1:
        lines = cuda.split("\n")
        if d.cuda.line <= len(lines):
            parts.append(" ".join(lines[d.cuda.line - 1].split()))
    raw = "\0".join(parts).encode("utf-8", "surrogateescape")
    return hashlib.sha256(raw).hexdigest()[:32]


def _rule(r: RuleInfo, docs_base: str) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.doc or r.summary},
        "help": {"text": r.doc or r.summary, "markdown": r.doc or r.summary},
        "helpUri": links.rule_url(r.id, docs_base),
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"stage": r.stage, "tags": taxonomy.tags(r.id, r.stage),
                       "precision": taxonomy.precision(r.id, r.stage)},
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
                                 "region": _region(r.span)},
            "message": {"text": r.label}})
    first = d.expanded()[0]
    for other in d.expanded()[1:]:  # a group's other instructions
        related = out.setdefault("relatedLocations", [])
        said = other.message if other.message != first.message else "the same finding"
        kernel = f" in {demangle(other.kernel)}" if other.kernel != first.kernel and \
            other.kernel else ""
        related.append({
            "id": len(related) + 1,
            "physicalLocation": {"artifactLocation": _artifact(other.file, root),
                                 "region": _region(other.span)},
            "message": {"text": f"{said}{kernel}"}})
    props: dict[str, Any] = {"certainty": str(d.certainty), "kernel": d.kernel,
                             "details": jsonable(d.details)}
    if d.kernel and demangle(d.kernel) != d.kernel:
        props["kernelDemangled"] = demangle(d.kernel)
    if d.instances:
        props["count"] = d.count
        props["occurrences"] = [{"line": o.line, "column": o.column, "kernel": o.kernel,
                                 "details": jsonable(o.details)} for o in d.instances]
    if d.label:
        props["label"] = d.label
    if d.notes:
        props["notes"] = list(d.notes)
    if d.help:
        props["help"] = d.help
    out["properties"] = props
    return out


def _region(span) -> dict[str, int]:
    return {"startLine": span.line, "startColumn": max(1, span.col),
            "endLine": max(span.line, span.end_line),
            "endColumn": max(1, span.col, span.end_col)}


def _artifact(path: str, root: str | None) -> dict[str, Any]:
    """A path relative to `root` when it lies inside it, else a `file:` URI; never
    with `.` or `..` segments (`os.path.normpath`: a CUDA toolkit header named as
    `.../bin/../targets/...`). URIs percent-encode the name's bytes, those that are
    not UTF-8 included (`%FF`)."""
    p = Path(os.path.normpath(path))
    if root is not None:
        base = Path(root).resolve()
        absolute = Path(os.path.normpath(p if p.is_absolute() else base / p))
        try:
            relative = absolute.resolve().relative_to(base)
        except (ValueError, OSError):
            return {"uri": _file_uri(absolute)}
        return {"uri": _quote(str(PurePosixPath(*relative.parts))), "uriBaseId": SRCROOT}
    if p.is_absolute():
        return {"uri": _file_uri(p)}
    if p.parts[:1] == ("..",):  # above the working directory: name it in full
        return {"uri": _file_uri(Path(os.path.abspath(p)))}
    return {"uri": _quote(p.as_posix())}


def _quote(path: str) -> str:
    return quote(path_bytes(path))


def _file_uri(path: Path) -> str:
    try:
        return path.as_uri()  # quotes the bytes `os.fsencode` gives (a Windows drive too)
    except (UnicodeEncodeError, ValueError):  # a surrogate no file name made
        return "file://" + _quote(path.as_posix())


__all__ = ["render", "document", "fingerprint", "LEVEL", "SCHEMA", "FINGERPRINT"]
