"""`.ci/run` runs the README's test command verbatim (the second `sh` block of "Try it"),
and that command runs every test: no marker filter, no test path."""
from __future__ import annotations

import re

from .conftest import ROOT


def readme_test_command() -> str:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return blocks[1].strip()


def test_ci_runs_the_readmes_test_command():
    command = readme_test_command()
    assert "python -m pytest" in command
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in lines, f".ci/run does not run the README's test command: {command}"


def test_the_readmes_test_command_runs_everything():
    pytest_args = readme_test_command().split("python -m pytest", 1)[1].split()
    assert "-m" not in pytest_args and "-k" not in pytest_args, pytest_args
    assert not [a for a in pytest_args if a.startswith("tests")], pytest_args
