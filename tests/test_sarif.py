"""SARIF output against what GitHub code scanning requires of an upload. (No copy of
the SARIF 2.1.0 JSON schema is vendored, so this is a structural check of the parts
GitHub reads: the version, the driver and its rules, and each result's rule, level,
message and 1-based physical location.)"""
from __future__ import annotations

import json

from ptxlint.cli import main
from ptxlint.diagnostics import Severity
from ptxlint.report import catalog, sarif

from .conftest import ROOT
from .test_report_goldens import FIXTURE, RULES

LEVELS = {"none", "note", "warning", "error"}


def problems(doc: dict) -> list[str]:
    """Every way `doc` falls short of an upload GitHub accepts."""
    out = []

    def need(cond: bool, what: str) -> None:
        if not cond:
            out.append(what)

    need(doc.get("version") == "2.1.0", "version must be 2.1.0")
    need(isinstance(doc.get("$schema"), str), "$schema is missing")
    runs = doc.get("runs")
    need(isinstance(runs, list) and len(runs) >= 1, "runs must be a non-empty list")
    for r, run in enumerate(runs or []):
        driver = run.get("tool", {}).get("driver", {})
        need(isinstance(driver.get("name"), str) and driver["name"], f"run {r}: driver.name")
        rules = driver.get("rules", [])
        ids = [rule.get("id") for rule in rules]
        need(len(ids) == len(set(ids)), f"run {r}: rule ids repeat")
        need(len(rules) <= 25_000, f"run {r}: too many rules")
        for rule in rules:
            rid = rule.get("id")
            need(isinstance(rid, str) and rid, "a rule without an id")
            need(bool(rule.get("shortDescription", {}).get("text")), f"{rid}: shortDescription")
            need(bool(rule.get("fullDescription", {}).get("text")), f"{rid}: fullDescription")
            need(isinstance(rule.get("helpUri"), str), f"{rid}: helpUri")
            need(rule.get("defaultConfiguration", {}).get("level") in LEVELS, f"{rid}: level")
        results = run.get("results")
        need(isinstance(results, list), f"run {r}: results must be a list")
        need(len(results or []) <= 25_000, f"run {r}: too many results")
        for i, res in enumerate(results or []):
            where = f"run {r} result {i}"
            index = res.get("ruleIndex")
            need(isinstance(res.get("ruleId"), str), f"{where}: ruleId")
            need(isinstance(index, int) and 0 <= index < len(rules)
                 and rules[index]["id"] == res["ruleId"], f"{where}: ruleIndex")
            need(res.get("level") in LEVELS, f"{where}: level")
            need(bool(res.get("message", {}).get("text")), f"{where}: message.text")
            locations = res.get("locations", [])
            need(1 <= len(locations) <= 10, f"{where}: locations")
            for loc in locations + [rel for rel in res.get("relatedLocations", [])]:
                out.extend(_location_problems(loc.get("physicalLocation", {}), where))
    return out


def _location_problems(physical: dict, where: str) -> list[str]:
    out = []
    uri = physical.get("artifactLocation", {}).get("uri")
    if not isinstance(uri, str) or not uri or "\\" in uri:
        out.append(f"{where}: artifactLocation.uri {uri!r}")
    if uri and uri.startswith("/"):
        out.append(f"{where}: a path, not a URI: {uri}")
    region = physical.get("region")
    if region is None:
        return out
    start, end = region.get("startLine"), region.get("endLine", region.get("startLine"))
    if not (isinstance(start, int) and start >= 1):
        out.append(f"{where}: startLine {start!r} must be >= 1")
    elif not (isinstance(end, int) and end >= start):
        out.append(f"{where}: endLine {end!r}")
    for key in ("startColumn", "endColumn"):
        if key in region and not (isinstance(region[key], int) and region[key] >= 1):
            out.append(f"{where}: {key} {region[key]!r} must be >= 1")
    if end == start and "endColumn" in region and \
            region["endColumn"] < region.get("startColumn", 1):
        out.append(f"{where}: endColumn before startColumn")
    return out


def test_fixture_document_is_accepted():
    doc = sarif.document(FIXTURE, RULES, root=str(ROOT))
    assert problems(doc) == []
    json.dumps(doc, allow_nan=False)


def test_levels_are_the_findings_own_severity():
    doc = sarif.document(FIXTURE, RULES, root=str(ROOT))
    levels = {r["ruleId"]: r["level"] for r in doc["runs"][0]["results"]}
    assert levels["bank-conflict"] == "warning"
    assert levels["uniform-branch"] == "note"
    assert levels["out-of-bounds"] == "error"
    assert sarif.LEVEL == {Severity.ERROR: "error", Severity.WARNING: "warning",
                           Severity.NOTE: "note"}


def test_paths_are_relative_to_the_root_and_cuda_is_related():
    doc = sarif.document(FIXTURE, RULES, root=str(ROOT))
    results = {r["ruleId"]: r for r in doc["runs"][0]["results"]}
    bank = results["bank-conflict"]
    assert bank["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "kernels/fixture.ptx", "uriBaseId": "%SRCROOT%"}
    [related] = bank["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == \
        "ptx_samples/cuda/vector_add.cu"
    assert related["physicalLocation"]["region"] == {"startLine": 9, "startColumn": 9}
    assert bank["properties"]["details"]["lanes"] == [0, 1]
    outside = results["uniform-branch"]["relatedLocations"][0]["physicalLocation"]
    assert outside["artifactLocation"]["uri"] == "file:///nowhere/missing.cu"


def test_docs_base_makes_absolute_help_links():
    doc = sarif.document([], RULES, docs_base="https://example.invalid/docs/rules/")
    uris = [r["helpUri"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    assert uris[0] == "https://example.invalid/docs/rules/bank-conflict.md"


def test_command_line_sarif_lists_every_rule(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                   "\tmov.u32 %r1, 1;\n\tret;\n}\n")
    code = main(["--format", "sarif", "ptx_samples/cuda/transpose.ptx", str(bad)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2
    assert problems(doc) == []
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in catalog()]
    for rule in rules:
        assert rule["helpUri"] == f"docs/rules/{rule['id']}.md"
    parse = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "parse-error"]
    assert parse and parse[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] \
        .startswith("file://")  # outside the working directory
