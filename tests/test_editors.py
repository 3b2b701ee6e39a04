"""docs/editors.md's Neovim snippet for old releases, run in a real Neovim: the first
Lua block of the "Neovim" section as `init.lua`, a copy of the bank-conflict sample
opened, its diagnostics and code actions read back. Skipped with the reason when
`nvim` is not installed (Debian: apt-get install neovim, 0.7.2 on Debian 12)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

SAMPLE = ROOT / "ptx_samples" / "bank-conflict" / "column.bad.ptx"

CHECK = """
vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 100)
local out = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?"
  table.insert(out, string.format("diagnostic %d %s %s", d.lnum + 1, code,
                                  vim.split(d.message, "\\n")[1]))
end
local first = vim.diagnostic.get(0)[1]
if first then
  local params = vim.lsp.util.make_range_params()
  params.range = { start = { line = first.lnum, character = first.col },
                   ["end"] = { line = first.end_lnum, character = first.end_col } }
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(0, first.lnum) }
  for _, r in pairs(vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, 20000) or {}) do
    for _, a in ipairs(r.result or {}) do table.insert(out, "action " .. a.title) end
  end
end
vim.fn.writefile(out, vim.env.PTXLINT_NVIM_OUT)
vim.cmd("qa!")
"""


def snippet() -> str:
    text = (ROOT / "docs" / "editors.md").read_text()
    section = text[text.index("\n## Neovim\n"):]
    return re.search(r"```lua\n(.*?)```", section, re.S).group(1)


def test_the_neovim_snippet_runs_on_an_old_neovim(tmp_path):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed (Debian: apt-get install neovim)")
    assert "vim.lsp.start_client" in snippet()  # the form Neovim 0.7 has
    project = tmp_path / "proj"
    project.mkdir()
    (project / "ptxlint.toml").write_text('severity = "warning"\n')
    shutil.copy(SAMPLE, project / SAMPLE.name)
    shutil.copy(SAMPLE.with_name("column.bad.cu"), project / "column.bad.cu")
    (tmp_path / "init.lua").write_text(snippet())
    (tmp_path / "check.lua").write_text(CHECK)
    out = tmp_path / "out.txt"
    scripts = str(Path(sys.executable).parent)  # where `ptxlint` is installed
    env = dict(os.environ, PATH=scripts + os.pathsep + os.environ.get("PATH", ""),
               PTXLINT_NVIM_OUT=str(out), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    subprocess.run([nvim, "--headless", "-u", str(tmp_path / "init.lua"), "-i", "NONE",
                    str(project / SAMPLE.name), "-c", f"luafile {tmp_path / 'check.lua'}"],
                   env=env, cwd=tmp_path, timeout=180, capture_output=True)
    lines = out.read_text().splitlines()
    # the launch from init_options makes the conflicts definite; the file's minimum
    # severity (warning) hides the notes; the four loads of one CUDA line are one finding
    assert [line for line in lines if line.startswith("diagnostic")] == [
        "diagnostic 101 bank-conflict 32-way shared-memory bank conflict "
        "(on 4 instructions)"]
    assert [line for line in lines if line.startswith("action")] == [
        "action Open the documentation of bank-conflict",
        "action Suppress bank-conflict on this line",
        "action Suppress bank-conflict on its CUDA line (column.bad.cu:18)"]
