"""Where ptxlint lives on the web: the home page and the documentation, as
`[project.urls]` in pyproject.toml names them, and each rule's page under them.

The installed metadata is read at run time (a fork that changes its URLs and
reinstalls gets its own links); a checkout run without an install, or metadata that
names none, falls back on `PROJECT_URLS`, the one copy of those values in the code.
`PTXLINT_DOCS_URL`, when set, is the base of the rule pages instead (a mirror, a
fork's published docs): `$PTXLINT_DOCS_URL/<rule>.md`.

SARIF requires `helpUri` and `informationUri` to be absolute URIs, so every link made
here is one."""
from __future__ import annotations

import os
from functools import lru_cache

# The same as [project.urls] in pyproject.toml (tests/test_links.py checks it).
PROJECT_URLS = {
    "homepage": "https://github.com/ptxlint/ptxlint",
    "documentation": "https://github.com/ptxlint/ptxlint/blob/main/docs",
}
DOCS_URL_ENV = "PTXLINT_DOCS_URL"


@lru_cache(maxsize=1)
def project_urls() -> dict[str, str]:
    """`{label in lower case: url}` from the installed metadata, over the fallbacks."""
    urls = dict(PROJECT_URLS)
    try:
        from importlib.metadata import metadata  # noqa: PLC0415  (only when a link is made)

        entries = metadata("ptxlint").get_all("Project-URL") or []
    except Exception:  # noqa: BLE001  (not installed: run from a checkout)
        entries = []
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip().startswith(("https://", "http://")):
            urls[label.strip().lower()] = url.strip()
    return urls


def homepage() -> str:
    return project_urls()["homepage"]


def rules_base(env: dict[str, str] | None = None) -> str:
    """The URL the rule pages sit under: `$PTXLINT_DOCS_URL`, else the documentation's
    `rules/` folder."""
    given = (os.environ if env is None else env).get(DOCS_URL_ENV, "").strip()
    if given:
        return given.rstrip("/")
    return project_urls()["documentation"].rstrip("/") + "/rules"


def rule_url(rule_id: str, base: str | None = None) -> str:
    """The absolute URL of a rule's page. The tool's own diagnostics (`parse-error`,
    `config-error`, ...) have no page of their own: they are described together in
    the CI guide, one heading each."""
    from . import _BUILTIN  # noqa: PLC0415

    if rule_id in _BUILTIN:
        return f"{project_urls()['documentation'].rstrip('/')}/ci.md#{rule_id}"
    return f"{(base or rules_base()).rstrip('/')}/{rule_id}.md"


def is_absolute_uri(uri: str) -> bool:
    """A scheme and something after it (RFC 3986's absolute-URI, roughly)."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    parts = urlsplit(uri)
    return bool(parts.scheme) and parts.scheme.isascii() and bool(parts.netloc or parts.path)


__all__ = ["PROJECT_URLS", "DOCS_URL_ENV", "project_urls", "homepage", "rules_base",
           "rule_url", "is_absolute_uri"]
