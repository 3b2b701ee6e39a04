"""The pre-commit hook that `.pre-commit-hooks.yaml` declares: its id, that it runs
ptxlint, and which files it is given. PyYAML is not a dependency: the file's few
`key: value` lines are read by hand."""
from __future__ import annotations

import json
import re
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of ptxlint on 3.10
    import tomli as tomllib

from .conftest import ROOT

HOOKS = ROOT / ".pre-commit-hooks.yaml"
ITEM = re.compile(r"^(?P<dash>- |  )(?P<key>[A-Za-z_]+):[ \t]*(?P<value>.*?)[ \t]*$")


def scalar(value: str) -> str:
    """A plain, single- or double-quoted YAML scalar on one line."""
    if value.startswith("'") and value.endswith("'"):
        return value[1:-1].replace("''", "'")
    if value.startswith('"') and value.endswith('"'):
        return json.loads(value)  # YAML's double-quoted escapes, as far as a hook needs
    return value


def hooks() -> list[dict[str, str]]:
    """The list of hook mappings: `- key: value` starts one, `  key: value` continues it."""
    out: list[dict[str, str]] = []
    for number, line in enumerate(HOOKS.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = ITEM.match(line)
        assert m, f"{HOOKS.name}:{number}: not a `key: value` line of a hook: {line!r}"
        if m["dash"] == "- ":
            out.append({})
        assert out, f"{HOOKS.name}:{number}: a key before the first `- `"
        assert m["key"] not in out[-1], f"{HOOKS.name}:{number}: '{m['key']}' given twice"
        out[-1][m["key"]] = scalar(m["value"])
    return out


def test_one_hook_named_ptxlint():
    [hook] = hooks()
    assert hook["id"] == "ptxlint"
    assert hook["name"] and hook["description"]


def test_entry_runs_the_ptxlint_console_script():
    [hook] = hooks()
    assert hook["language"] == "python"  # installs this repository, scripts included
    assert hook["entry"].split()[0] == "ptxlint"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["ptxlint"] == "ptxlint.cli:console_main"


def test_files_pattern_selects_ptx_only():
    [hook] = hooks()
    files = re.compile(hook["files"])  # pre-commit matches it with re.search
    for path in ("a/b.ptx", "b.ptx", "ptx_samples/cuda/vector_add.ptx"):
        assert files.search(path), path
    for path in ("a/b.cu", "a/b.ptx.bak", "a/b.ptxas", "a/ptx/b.cu", "a/b.PTX.cu"):
        assert not files.search(path), path
    assert hook["types"] == "[file]"


def test_reader_understands_quoting():
    assert scalar(r"\.ptx$") == r"\.ptx$"
    assert scalar(r"'\.ptx$'") == r"\.ptx$"
    assert scalar(r'"\\.ptx$"') == r"\.ptx$"
    assert scalar("'it''s'") == "it's"
