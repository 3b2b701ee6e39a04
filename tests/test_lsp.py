"""The language server end to end: `python -m ptxlint.lsp` as a subprocess, spoken to
over stdio the way an editor does (framed JSON-RPC), waiting on messages with a
timeout rather than sleeping."""
from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow  # the quick loop (-m 'not slow') leaves it out

pytest.importorskip("pygls", reason="the language server needs pygls (pip install '.[lsp]')")

TIMEOUT = 60.0  # seconds; generous for a loaded CI machine, never slept through

GOOD = """.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
\t.reg .b32 %r<3>;
\tmov.u32 %r1, %tid.x;
\tret;
}
"""
BAD_LINE = "\tmov.u32 %r2, %r9;   // ∑ a non-ASCII comment before nothing\n"


class Client:
    """A minimal LSP client: Content-Length framing, a reader thread feeding a queue."""

    def __init__(self, cwd: Path):
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen([sys.executable, "-m", "ptxlint.lsp"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.messages: queue.Queue = queue.Queue()
        self.seen: list[dict] = []  # every message taken off the queue
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)  # the server exited
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                key, _, value = line.partition(":")
                headers[key.lower()] = value.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def wait(self, predicate, timeout: float = TIMEOUT) -> dict:
        """The first message satisfying `predicate`, answering server requests."""
        while True:
            try:
                message = self.messages.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError("no matching message from the server in time") from None
            if message is not None:
                self.seen.append(message)
            if message is None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise AssertionError(f"the server exited:\n{err}")
            if "method" in message and "id" in message:  # a request to the client
                self.send({"id": message["id"], "result": None})
            if predicate(message):
                return message

    def diagnostics(self, uri: str, version: int) -> list[dict]:
        message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri
                            and m["params"].get("version") == version)
        return message["params"]["diagnostics"]

    def close(self) -> int:
        self.request("shutdown", {})
        self.notify("exit", {})
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def client(tmp_path):
    c = Client(tmp_path)
    result = c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(),
                                      "capabilities": {}})
    assert result["result"]["capabilities"]["textDocumentSync"]
    c.notify("initialized", {})
    yield c
    if c.proc.poll() is None:
        c.proc.kill()


def test_publishes_on_open_and_on_change(client, tmp_path):
    path = tmp_path / "k.ptx"
    path.write_text(GOOD)
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 1, "text": GOOD}})
    assert client.diagnostics(uri, 1) == []

    # an undeclared register on line 8 (0-based 7), after a tab: column 14 (0-based 13)
    line = 7
    client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                      "end": {"line": line, "character": 0}},
                            "text": BAD_LINE}]})
    [d] = client.diagnostics(uri, 2)
    assert d["code"] == "parse-error" and d["source"] == "ptxlint"
    assert d["severity"] == 1
    assert d["range"]["start"] == {"line": 7, "character": 14}
    assert d["range"]["end"] == {"line": 7, "character": 17}
    assert "%r9" in d["message"]

    # fix it again: the diagnostics clear
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                             "contentChanges": [{"text": GOOD}]})
    assert client.diagnostics(uri, 3) == []
    assert client.close() == 0


def test_non_ascii_columns_are_utf16_units(client, tmp_path):
    # '∑' is one UTF-16 unit, '𝔸' two: the error after them moves by three units
    text = GOOD.replace("\tmov.u32 %r1, %tid.x;", "\t/* ∑𝔸 */ mov.u32 %r1, %r7;")
    uri = (tmp_path / "wide.ptx").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 1, "text": text}})
    [d] = client.diagnostics(uri, 1)
    prefix = "\t/* ∑𝔸 */ mov.u32 %r1, "
    assert d["range"]["start"] == {"line": 6, "character": len(prefix.encode("utf-16-le")) // 2}


def loc_before(text: str, line: int) -> tuple[int, int]:
    """The 0-based (line, character) of the CUDA position named by the last `.loc` at or
    above the PTX file's 0-based `line`."""
    for above in reversed(text.splitlines()[: line + 1]):
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)\s+(\d+)", above)
        if m:
            return int(m.group(1)) - 1, max(int(m.group(2)) - 1, 0)
    raise AssertionError(f"no .loc above line {line + 1}")


def assert_cuda_related(found: list[dict], text: str, cuda: Path) -> None:
    """Each diagnostic has the CUDA position of its instruction as related
    information, after the other instructions of its group (same CUDA line) if any."""
    assert found
    for d in found:
        line, character = loc_before(text, d["range"]["start"]["line"])
        *others, info = d["relatedInformation"]
        group = re.search(r" \(on (\d+) instructions\)", d["message"].split("\n")[0])
        assert len(others) == (int(group.group(1)) - 1 if group else 0)
        for other in others:
            assert loc_before(text, other["location"]["range"]["start"]["line"]) == \
                (line, character)  # the same CUDA line
        assert info["message"] == "CUDA source of this line"
        assert info["location"]["uri"] == cuda.resolve().as_uri()
        assert info["location"]["range"]["start"] == {"line": line, "character": character}


def test_cuda_line_is_related_information(client):
    sample = ROOT / "ptx_samples" / "cuda" / "vector_add.ptx"
    text = sample.read_text()
    uri = sample.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 7, "text": text}})
    found = client.diagnostics(uri, 7)
    for d in found:  # whatever the rules find, the shape is an editor's
        assert isinstance(d["code"], str) and d["severity"] in (1, 2, 3, 4)
    assert_cuda_related(found, text, sample.with_name("vector_add.cu"))


COLUMN_BAD = ROOT / "ptx_samples" / "bank-conflict" / "column.bad.ptx"


def without_launch(text: str) -> str:
    """The sample with its `// ptxlint: launch` comment blanked (lines kept): a kernel
    the server knows no launch of."""
    return re.sub(r"(?m)^// ptxlint: launch .*$", "//", text)


def test_severities_and_cuda_lines_of_a_real_sample(client, tmp_path, capsys):
    """The bank-conflict sample without a launch configuration: its column reads are
    possible conflicts (warnings), and the rules that need the block shape leave notes.
    The server publishes what the command line reports, severities mapped to LSP's
    (error 1, warning 2, note -> Information 3), positions 0-based, each with the CUDA
    line of `column.bad.cu` it came from."""
    from ptxlint.cli import main

    ptx, cuda = tmp_path / "column.bad.ptx", tmp_path / "column.bad.cu"
    text = without_launch(COLUMN_BAD.read_text())
    ptx.write_text(text)
    cuda.write_text(COLUMN_BAD.with_name("column.bad.cu").read_text())
    uri = ptx.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 3, "text": text}})
    found = client.diagnostics(uri, 3)

    main(["--format", "json", str(ptx)])
    cli = json.loads(capsys.readouterr().out)["diagnostics"]
    lsp_severity = {"error": 1, "warning": 2, "note": 3}
    assert sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["severity"]) for d in found) == \
        sorted((d["rule"], d["line"] - 1, d["column"] - 1, lsp_severity[d["severity"]])
               for d in cli)
    assert {d["severity"] for d in found} == {2, 3}
    # the four loads of one CUDA line: one diagnostic, the others related information
    [conflict] = [d for d in found if d["code"] == "bank-conflict"]
    assert (conflict["range"]["start"]["line"], conflict["severity"]) == (100, 2)
    assert conflict["message"].startswith(
        "possible 32-way shared-memory bank conflict (on 4 instructions)\n")
    assert [r["location"]["range"]["start"]["line"] for r in conflict["relatedInformation"]
            ][:3] == [105, 110, 113]
    assert_cuda_related(found, text, cuda)
    assert conflict["relatedInformation"][-1]["location"]["range"]["start"] \
        == {"line": 17, "character": 8}  # column.bad.cu:18:9


def test_save_close_and_a_burst_of_edits(client, tmp_path):
    uri = (tmp_path / "burst.ptx").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 1, "text": GOOD}})
    assert client.diagnostics(uri, 1) == []
    bad = GOOD.replace("%tid.x;", "%r8;")
    for version in range(2, 8):  # typing: changes faster than the debounce
        text = bad if version % 2 == 0 else GOOD
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": text}]})
    assert client.diagnostics(uri, 7) == []  # the last version wins
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 8},
                                             "contentChanges": [{"text": bad}]})
    assert len(client.diagnostics(uri, 8)) == 1
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert len(client.diagnostics(uri, 8)) == 1  # published again for the saved version
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    closed = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri)
    assert closed["params"]["diagnostics"] == []


def test_launch_configuration_comes_from_the_config_file(client, tmp_path):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "ptxlint.toml").write_text('[[launch]]\nkernel = "k"\nparams = { nope = 1 }\n')
    path = project / "src" / "k.ptx"
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 1, "text": GOOD}})
    [d] = client.diagnostics(uri, 1)
    assert d["code"] == "launch-config" and "no parameter named 'nope'" in d["message"]


def test_other_languages_are_left_alone(client, tmp_path):
    uri = (tmp_path / "notes.txt").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "plaintext", "version": 1, "text": "mov.u32 %r1, %r2;"}})
    ptx = (tmp_path / "after.ptx").as_uri()  # a later .ptx document is still served
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": ptx, "languageId": "ptx", "version": 1, "text": GOOD}})
    client.diagnostics(ptx, 1)
    assert not [m for m in client.seen if (m.get("params") or {}).get("uri") == uri]


def test_notifications_for_a_document_that_is_not_open_are_ignored(client, tmp_path):
    """A client may send a change, a save or a close for a document it never opened
    (or closed already): the server must not answer with an error, which editors show
    as a dialog, and must go on serving."""
    ghost = (tmp_path / "ghost.ptx").as_uri()
    edit = {"range": {"start": {"line": 0, "character": 0},
                      "end": {"line": 0, "character": 0}}, "text": "// x\n"}
    client.notify("textDocument/didChange", {"textDocument": {"uri": ghost, "version": 2},
                                             "contentChanges": [edit]})
    client.notify("textDocument/didChange", {"textDocument": {"uri": ghost, "version": 3},
                                             "contentChanges": [{"text": GOOD}]})
    client.notify("textDocument/didSave", {"textDocument": {"uri": ghost}})
    client.notify("textDocument/didClose", {"textDocument": {"uri": ghost}})
    # the same document opened afterwards is served from its own text
    bad = GOOD.replace("%tid.x;", "%r8;")
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": ghost, "languageId": "ptx", "version": 4, "text": bad}})
    [d] = client.diagnostics(ghost, 4)
    assert d["code"] == "parse-error" and "%r8" in d["message"]
    errors = [m for m in client.seen if m.get("method") in ("window/showMessage",
                                                            "window/logMessage")
              and m["params"]["type"] == 1]
    assert errors == []
    assert [m["params"].get("version") for m in client.seen
            if m.get("method") == "textDocument/publishDiagnostics"] == [4]
    assert client.close() == 0


def test_a_huge_line_of_errors_gives_a_bounded_report(client, tmp_path):
    """A 200 KB line holding 11,000 undeclared registers: the parser reports at most
    ~100 errors per file and quotes at most ~200 characters of a line (ir/build.py),
    and the server must not expand them again (messages built from source lines,
    excerpts sent as data), so the diagnostics come quickly and stay small."""
    line = "\t" + "mov.u32 %r1, %r9; " * 11_000 + "\n"
    text = GOOD.replace("\tret;\n", line + "\tret;\n")
    assert len(line) > 190_000
    uri = (tmp_path / "huge.ptx").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "ptx", "version": 1, "text": text}})
    message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                          and m["params"]["uri"] == uri, timeout=30)
    found = message["params"]["diagnostics"]
    assert 1 <= len(found) <= 101
    assert all(d["code"] == "parse-error" for d in found)
    assert {d["range"]["start"]["line"] for d in found} == {7}
    assert max(len(json.dumps(d)) for d in found) < 2_000
    assert client.close() == 0


# ---------------------------------------------------------------- in process
def test_positions_in_each_encoding():
    from ptxlint.diagnostics import Diagnostic, Severity
    from ptxlint.lsp import to_lsp, units
    from ptxlint.source import SourceFile

    text = "a\n\t/* é𝔸 */ x;\n"
    source = SourceFile("f.ptx", text)
    start = text.index("x")
    d = Diagnostic("parse-error", Severity.ERROR, "m", "f.ptx", source.span(start, start + 1),
                   notes=("one", "two"), help="fix")
    assert units("é𝔸", "utf-16") == 3 and units("é𝔸", "utf-8") == 6 and units("é𝔸", "utf-32") == 2
    for encoding, character in (("utf-16", 11), ("utf-8", 14), ("utf-32", 10)):
        got = to_lsp(d, source, encoding)
        assert (got.range.start.line, got.range.start.character) == (1, character)
        assert got.range.end.character == character + 1
    assert to_lsp(d, source).message == "m\nnote: one\nnote: two\nhelp: fix"
    nowhere = Diagnostic("internal-error", Severity.ERROR, "boom", "f.ptx", None)
    assert to_lsp(nowhere, source).range.start.line == 0


def test_an_analyser_failure_is_a_diagnostic(monkeypatch):
    from ptxlint.lsp import Analyzer

    analyzer = Analyzer()
    monkeypatch.setattr(analyzer, "diagnostics", lambda *a: 1 / 0)
    params = analyzer.publishable("file:///x.ptx", "/x.ptx", GOOD, 3)
    [d] = params.diagnostics
    assert d.code == "internal-error" and "ZeroDivisionError" in d.message
    assert params.version == 3


# ---------------------------------------------------------------- settings and config files
def started(cwd: Path, capabilities: dict | None = None, options=None) -> Client:
    c = Client(cwd)
    params = {"processId": os.getpid(), "rootUri": cwd.as_uri(),
              "capabilities": capabilities or {}}
    if options is not None:
        params["initializationOptions"] = options
    result = c.request("initialize", params)
    assert result["result"]["capabilities"]["textDocumentSync"]
    c.notify("initialized", {})
    return c


def published(client: Client, uri: str, predicate=lambda found: True) -> list[dict]:
    """The diagnostics of the next publication for `uri` that satisfies `predicate`."""
    message = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                          and m["params"]["uri"] == uri and predicate(m["params"]["diagnostics"]))
    return message["params"]["diagnostics"]


def open_doc(client: Client, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text)
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": path.as_uri(), "languageId": "ptx", "version": version, "text": text}})
    return path.as_uri()


BROKEN_LAUNCH = '[[launch]]\nkernel = "k"\nparams = { nope = 1 }\n'


def test_a_watched_config_change_republishes(tmp_path):
    """A client that can watch files is asked to watch both configuration files; the
    change it reports re-publishes the open documents at once."""
    client = started(tmp_path, {"workspace": {"didChangeWatchedFiles": {
        "dynamicRegistration": True}}})
    try:
        register = client.wait(lambda m: m.get("method") == "client/registerCapability")
        [registration] = register["params"]["registrations"]
        assert registration["method"] == "workspace/didChangeWatchedFiles"
        assert sorted(w["globPattern"] for w in registration["registerOptions"]["watchers"]) \
            == ["**/ptxlint.toml", "**/pyproject.toml"]
        config = tmp_path / "ptxlint.toml"
        config.write_text(BROKEN_LAUNCH)
        uri = open_doc(client, tmp_path / "k.ptx", GOOD)
        [d] = published(client, uri)
        assert d["code"] == "launch-config"
        config.write_text('disable = ["uniform-branch"]\n')
        client.notify("workspace/didChangeWatchedFiles", {"changes": [
            {"uri": config.as_uri(), "type": 2}]})
        assert published(client, uri) == []
        assert client.close() == 0
    finally:
        client.proc.kill()


def test_without_a_watcher_the_server_notices_config_changes(client, tmp_path):
    """The `client` fixture offers no capabilities: the server looks at the files."""
    uri = open_doc(client, tmp_path / "k.ptx", GOOD)
    assert published(client, uri) == []
    (tmp_path / "ptxlint.toml").write_text(BROKEN_LAUNCH)  # a new file counts
    [d] = published(client, uri, lambda found: found != [])
    assert d["code"] == "launch-config" and "nope" in d["message"]
    assert not [m for m in client.seen if m.get("method") == "client/registerCapability"]
    assert client.close() == 0


LAUNCH = {"block": [32, 8], "grid": [32, 32], "params": {"2": 1024, "3": 1024}}


def test_initialization_options_and_configuration_changes(tmp_path):
    """The editor's launch settings make the column reads definite 32-way conflicts;
    the file's `severity = "warning"` applies while the editor sets none, and the
    editor's own severity overrides it. New settings replace the old ones whole."""
    (tmp_path / "ptxlint.toml").write_text('severity = "warning"\n')
    (tmp_path / "column.bad.cu").write_text(COLUMN_BAD.with_name("column.bad.cu").read_text())
    client = started(tmp_path, options={"ptxlint": LAUNCH})
    try:
        uri = open_doc(client, tmp_path / "column.bad.ptx",
                       without_launch(COLUMN_BAD.read_text()))
        found = published(client, uri)
        [conflict] = [d for d in found if d["code"] == "bank-conflict"]  # on 4 loads
        assert conflict["message"].startswith(
            "32-way shared-memory bank conflict (on 4 instructions)\n")
        assert {d["severity"] for d in found} <= {1, 2}  # the file's minimum: warning

        client.notify("workspace/didChangeConfiguration",
                      {"settings": {"ptxlint": {"severity": "note", "disable": ["out-of-bounds"]}}})
        found = published(client, uri, lambda f: any(d["severity"] == 3 for d in f))
        assert all(d["message"].startswith("possible 32-way") for d in found
                   if d["code"] == "bank-conflict")  # the launch settings are gone
        assert not [d for d in found if d["code"] == "out-of-bounds"]

        client.notify("workspace/didChangeConfiguration", {"settings": {"ptxlint": {"blok": 1}}})
        shown = client.wait(lambda m: m.get("method") == "window/showMessage")
        assert "unknown setting 'blok'" in shown["params"]["message"]
        assert client.close() == 0
    finally:
        client.proc.kill()


def test_settings_are_pulled_from_a_client_that_offers_them(tmp_path):
    """A client with `workspace.configuration` is asked for the `ptxlint` section."""
    client = started(tmp_path, {"workspace": {"configuration": True}})
    try:
        request = client.wait(lambda m: m.get("method") == "workspace/configuration")
        assert request["params"]["items"] == [{"section": "ptxlint"}]
        assert client.close() == 0
    finally:
        client.proc.kill()


# ---------------------------------------------------------------- code actions
def test_code_actions_open_the_docs_and_suppress(tmp_path):
    client = started(tmp_path, {"window": {"showDocument": {"support": True}}},
                     options={"ptxlint": LAUNCH})
    try:
        text = COLUMN_BAD.read_text()
        uri = open_doc(client, tmp_path / "column.bad.ptx", text)
        found = published(client, uri)
        conflict = next(d for d in found if d["code"] == "bank-conflict")
        line = conflict["range"]["start"]["line"]
        answer = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": conflict["range"],
            "context": {"diagnostics": [conflict]}})
        actions = {a["title"]: a for a in answer["result"]}
        assert set(actions) == {"Open the documentation of bank-conflict",
                                "Suppress bank-conflict on this line"}
        [edit] = actions["Suppress bank-conflict on this line"]["edit"]["changes"][uri]
        end = len(text.splitlines()[line].rstrip())  # ASCII: UTF-16 units are characters
        assert edit == {"range": {"start": {"line": line, "character": end},
                                  "end": {"line": line, "character": end}},
                        "newText": "  // ptxlint: disable=bank-conflict"}

        command = actions["Open the documentation of bank-conflict"]["command"]
        client.request("workspace/executeCommand", {"command": command["command"],
                                                    "arguments": command["arguments"]})
        shown = next(m for m in client.seen if m.get("method") == "window/showDocument")
        assert shown["params"]["uri"] == (ROOT / "docs" / "rules" / "bank-conflict.md").as_uri()
        assert client.close() == 0
    finally:
        client.proc.kill()


def test_suppression_edit_extends_an_existing_comment():
    from ptxlint.lsp import suppression_edit

    line = "\tld.shared.f32 %f1, [%r4];  // ptxlint: disable=out-of-bounds"
    edit = suppression_edit(line + "  ", "bank-conflict", 3)
    assert edit.new_text == ",bank-conflict" and edit.range.start.character == len(line)
    assert edit.range.start.line == 3
    assert suppression_edit("\tx;  // ptxlint: disable=a,bank-conflict", "bank-conflict", 0) \
        is None
    wide = suppression_edit("\t/* 𝔸 */ x;", "bank-conflict", 0, "utf-16")
    assert wide.range.start.character == len("\t/* 𝔸 */ x;".encode("utf-16-le")) // 2
    assert wide.new_text == "  // ptxlint: disable=bank-conflict"
