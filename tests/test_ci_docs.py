"""docs/ci.md's pre-commit configuration works as written: the repository is the
project's ([project.urls]), `rev:` names something pre-commit can fetch (the `main`
branch, a tag, or a commit SHA; no tag exists before the first release), the hook id is
the one `.pre-commit-hooks.yaml` declares. With `pre-commit` installed, the documented
configuration is run for real, pointed at this checkout instead of the web: a bad
kernel fails the hook, a clean one passes."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of ptxlint on 3.10
    import tomli as tomllib

import pytest

from .conftest import ROOT
from .test_precommit import hooks

GUIDE = ROOT / "docs" / "ci.md"


def precommit_configs() -> list[str]:
    """The YAML blocks of the guide's pre-commit section."""
    text = GUIDE.read_text()
    section = text[text.index("\n## pre-commit\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"```yaml\n(.*?)```", section, re.S)


def field(block: str, key: str) -> str:
    m = re.search(rf"^\s*-?\s*{key}:\s*(\S+)", block, re.M)
    assert m, f"no {key}: in\n{block}"
    return m.group(1)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def test_the_remote_configuration_names_this_project_and_a_fetchable_rev():
    remote = precommit_configs()[0]
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert field(remote, "repo") == urls["Repository"]
    assert field(remote, "id") == hooks()[0]["id"]
    rev = field(remote, "rev")
    if re.fullmatch(r"[0-9a-f]{40}", rev):
        return  # a commit: always fetchable
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: cannot tell which branches and tags exist")
    known = set(git("for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags")
                .split())
    if not known:  # a shallow CI clone may list no refs: its checked-out branch will do
        known = {git("rev-parse", "--abbrev-ref", "HEAD")}
    assert rev in known, f"rev: {rev} is neither a branch nor a tag here ({sorted(known)})"


def test_the_local_configuration_runs_the_installed_command():
    local = precommit_configs()[1]
    [hook] = hooks()
    assert field(local, "repo") == "local"
    assert (field(local, "id"), field(local, "entry"), field(local, "language")) == \
        (hook["id"], "ptxlint", "system")
    assert field(local, "files") == hook["files"]


def test_the_documented_configuration_runs_in_pre_commit(tmp_path):
    exe = shutil.which("pre-commit")
    if exe is None:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    if git("rev-parse", "--verify", "--quiet", "main") == "":
        pytest.skip("this checkout has no `main` branch to fetch the hook from")
    config = precommit_configs()[0]
    config = re.sub(r"(repo:\s*)\S+", lambda m: m.group(1) + ROOT.as_uri(), config, count=1)
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / ".pre-commit-config.yaml").write_text(config)
    shutil.copy(ROOT / "ptx_samples" / "bank-conflict" / "column.bad.ptx", work / "bad.ptx")
    shutil.copy(ROOT / "ptx_samples" / "cuda" / "vector_add.ptx", work / "good.ptx")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    runs = {name: subprocess.run([exe, "run", "--files", name], cwd=work, env=env,
                                 capture_output=True, text=True, timeout=600)
            for name in ("bad.ptx", "good.ptx")}
    assert runs["bad.ptx"].returncode == 1, runs["bad.ptx"].stdout[-3000:]
    assert "bank-conflict" in runs["bad.ptx"].stdout
    assert runs["good.ptx"].returncode == 0, runs["good.ptx"].stdout[-3000:]
