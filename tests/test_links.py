"""The project's URLs: `[project.urls]` in pyproject.toml, the fallback copy in
ptxlint/report/links.py, and the rule links made from them."""
from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of ptxlint on 3.10
    import tomli as tomllib

import pytest

from ptxlint.report import catalog, links

from .conftest import ROOT


@pytest.fixture
def fresh_urls():
    links.project_urls.cache_clear()
    yield
    links.project_urls.cache_clear()


def test_fallback_is_pyprojects_urls():
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    declared = {label.lower(): url for label, url in urls.items()}
    assert {k: declared[k] for k in links.PROJECT_URLS} == links.PROJECT_URLS
    assert all(links.is_absolute_uri(u) for u in declared.values())


def test_installed_metadata_wins(monkeypatch, fresh_urls):
    class Meta:
        def get_all(self, name):
            assert name == "Project-URL"
            return ["Homepage, https://fork.example/ptxlint",
                    "Documentation, https://fork.example/ptxlint/docs/", "Bad, not-a-url"]

    monkeypatch.setattr("importlib.metadata.metadata", lambda name: Meta())
    monkeypatch.delenv(links.DOCS_URL_ENV, raising=False)
    assert links.homepage() == "https://fork.example/ptxlint"
    assert links.rule_url("bank-conflict") == \
        "https://fork.example/ptxlint/docs/rules/bank-conflict.md"
    assert "bad" not in links.project_urls()


def test_not_installed_falls_back(monkeypatch, fresh_urls):
    def missing(name):
        raise ModuleNotFoundError(name)

    monkeypatch.setattr("importlib.metadata.metadata", missing)
    assert links.project_urls() == links.PROJECT_URLS


def test_docs_url_environment_overrides_rule_pages(monkeypatch):
    monkeypatch.setenv(links.DOCS_URL_ENV, "https://mirror.example/rules/")
    assert links.rule_url("out-of-bounds") == "https://mirror.example/rules/out-of-bounds.md"
    # the tool's own diagnostics are described in the CI guide, not in rule pages
    assert links.rule_url("parse-error").endswith("/ci.md#parse-error")


def test_every_rule_link_is_absolute_and_its_page_exists():
    ci_guide = (ROOT / "docs" / "ci.md").read_text()
    for rule in catalog():
        url = links.rule_url(rule.id, "https://example.invalid/docs/rules")
        assert links.is_absolute_uri(url)
        if rule.stage == "built-in":
            assert f"\n### {rule.id}\n" in ci_guide
        else:
            assert (ROOT / "docs" / "rules" / f"{rule.id}.md").is_file()


def test_absolute_uri():
    assert links.is_absolute_uri("https://a.example/b")
    assert links.is_absolute_uri("file:///tmp/x")
    for relative in ("docs/rules/x.md", "/docs/x.md", "", "https:"):
        assert not links.is_absolute_uri(relative)
