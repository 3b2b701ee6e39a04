"""Language server: `ptxlint lsp` or `python -m ptxlint.lsp` (pygls, stdio).

Publishes diagnostics for `.ptx` documents on open, change and save, with the
document's version, the rule id as the code and a link to the rule's page, the CUDA
line as related information, and positions converted at this edge from ptxlint's
1-based code-point columns to 0-based units of the negotiated encoding (UTF-16 unless
the client offers another).

Settings come from the configuration file found upward from the document and from the
editor: `initializationOptions` and `workspace/didChangeConfiguration` (or, for a
client that offers it, `workspace/configuration`), under a `ptxlint` key, with the keys
of `config.editor_settings`. Editor settings override the file as command-line options
do. A change to a `pyproject.toml` or `ptxlint.toml` re-publishes every open document:
the server asks the client to watch them (`workspace/didChangeWatchedFiles`, dynamic
registration) or, when the client cannot, looks at them once a second.

Code actions on a finding: "Open the documentation of RULE" (the `ptxlint.openRuleDocs`
command, through `window/showDocument`), "Suppress RULE on this line" (appends
`// ptxlint: disable=RULE` to the line; the analysis honours it, `suppress`) and, for
nvcc output whose CUDA file is at hand, "Suppress RULE on its CUDA line" (the same
comment at the end of that line, which covers all its PTX instructions). The
findings of one CUDA line on several instructions are published once, as the command
line reports them (`grouping`), the other instructions as related information.

Changes are debounced per document: an edit after a quiet spell is analysed at once,
edits arriving within `DEBOUNCE` seconds of the previous one wait until the typing
pauses for that long. Analysis runs on one worker thread so the server keeps reading
messages; a result overtaken by a newer edit is dropped. `IncrementalLinter` analyses
only the kernels an edit touched.

Start-up: the analysis (the grammar, the rules, numpy) is imported on the worker thread
after `initialize` is answered, not before; pygls itself needs `lsprotocol.types`,
the largest part of what is left (benchmarks/lsp.py --startup measures it).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from . import __version__

try:
    from lsprotocol import types as lsp
    from pygls.lsp.server import LanguageServer
    from pygls.protocol import LanguageServerProtocol
    from pygls.protocol.language_server import lsp_method
except ImportError:  # pragma: no cover - reported by main()
    lsp = None  # type: ignore[assignment]
    LanguageServer = LanguageServerProtocol = object  # type: ignore[assignment,misc]

    def lsp_method(method_name):  # type: ignore[no-redef]
        return lambda f: f

if TYPE_CHECKING:
    from .diagnostics import Diagnostic, Severity
    from .source import SourceFile

log = logging.getLogger("ptxlint.lsp")

DEBOUNCE = 0.15  # seconds
POLL = 1.0  # seconds between looks at the configuration files, without a watcher
DOCS = Path(__file__).resolve().parent.parent / "docs"
CONFIG_FILES = ("ptxlint.toml", "pyproject.toml")  # config.FILES, without importing it
OPEN_DOCS = "ptxlint.openRuleDocs"
NOT_SUPPRESSIBLE = frozenset({"parse-error", "config-error", "launch-config", "internal-error"})
SUPPRESSION = re.compile(r"//\s*ptxlint:\s*disable=([\w,-]+)\s*$")


def _severity(s: Severity):
    from .diagnostics import Severity  # noqa: PLC0415

    return {Severity.ERROR: lsp.DiagnosticSeverity.Error,
            Severity.WARNING: lsp.DiagnosticSeverity.Warning,
            Severity.NOTE: lsp.DiagnosticSeverity.Information}[s]


def units(text: str, encoding: str) -> int:
    """The length of `text` in the position units of `encoding`."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def doc_link(rule: str) -> str:
    """The rule's page: under $PTXLINT_DOCS_URL when set, else in this checkout's docs/
    when there is one (it matches the code), else on the project's site."""
    from .report import _BUILTIN, links  # noqa: PLC0415

    if not os.environ.get(links.DOCS_URL_ENV):
        page = DOCS / "rules" / f"{rule}.md"
        if page.is_file():
            return page.as_uri()
        if rule in _BUILTIN and (DOCS / "ci.md").is_file():
            return (DOCS / "ci.md").as_uri() + f"#{rule}"
    return links.rule_url(rule)


class Analyzer:
    """Text in, LSP diagnostics out: everything but the transport (the benchmark
    and the tests drive it directly)."""

    def __init__(self):
        self.linters: dict[str, Any] = {}  # uri -> IncrementalLinter
        self.config_problems: list[str] = []  # for the server to show, once each
        self.settings: Any = None  # config.EditorSettings from the editor, or None

    def configure(self, values: Any) -> str | None:
        """Take the editor's settings (the `ptxlint` object; None: none). A problem is
        returned as a message and the settings are ignored until they are fixed."""
        from . import config  # noqa: PLC0415

        try:
            self.settings = config.editor_settings(values) if values is not None else None
        except config.ConfigError as exc:
            self.settings = None
            return str(exc)
        return None

    def diagnostics(self, uri: str, path: str, text: str) -> list[Diagnostic]:
        from . import config  # noqa: PLC0415
        from .diagnostics import Severity  # noqa: PLC0415
        from .incremental import IncrementalLinter  # noqa: PLC0415

        try:
            cfg = config.for_file(path) if path else config.Config()
        except config.ConfigError as exc:
            self.config_problems.append(str(exc))
            cfg = config.Config()
        settings = self.settings or config.EditorSettings()
        linter = self.linters.setdefault(uri, IncrementalLinter(path or uri))
        from .grouping import group  # noqa: PLC0415

        found = group(linter.lint(text, config.options(cfg, settings.overrides)))
        minimum = next((s for s in (settings.severity, cfg.severity) if s is not None),
                       Severity.NOTE)  # the editor's, the file's (NOTE is falsy)
        return [d for d in found if d.severity >= minimum or d.rule == "parse-error"]

    def publishable(self, uri: str, path: str, text: str, version: int | None,
                    encoding: str = "utf-16"):
        from .source import SourceFile  # noqa: PLC0415

        try:
            found = self.diagnostics(uri, path, text)
        except Exception as exc:  # noqa: BLE001  (shown in the editor, never a crash)
            from .report import internal_error  # noqa: PLC0415

            self.linters.pop(uri, None)
            found = [internal_error(path or uri, exc)]
        source = SourceFile(path, text)
        return lsp.PublishDiagnosticsParams(
            uri=uri, version=version,
            diagnostics=[to_lsp(d, source, encoding) for d in found])

    def forget(self, uri: str) -> None:
        self.linters.pop(uri, None)


def warm_up() -> None:
    """Import the analysis (on the worker thread, once `initialize` is answered); a
    failure here shows up, as a diagnostic, when a document is analysed."""
    try:
        from . import config, incremental  # noqa: F401, PLC0415
        from .rules.base import load_rules  # noqa: PLC0415

        load_rules()
    except Exception:  # noqa: BLE001
        log.exception("warming up the analysis failed")


def to_lsp(d: Diagnostic, source: SourceFile, encoding: str = "utf-16"):
    def position(line: int, col: int):
        text = source.line_text(line)
        return lsp.Position(line=max(line - 1, 0), character=units(text[: max(col - 1, 0)],
                                                                  encoding))

    if d.span is not None:
        rng = lsp.Range(start=position(d.span.line, d.span.col),
                        end=position(d.span.end_line, d.span.end_col))
    else:
        rng = lsp.Range(start=lsp.Position(line=0, character=0),
                        end=lsp.Position(line=0, character=0))
    message = d.message
    extra = ([d.label] if d.label else []) + [f"note: {n}" for n in d.notes] + \
        ([f"help: {d.help}"] if d.help else [])
    if extra:
        message += "\n" + "\n".join(extra)
    return lsp.Diagnostic(
        range=rng, message=message, severity=_severity(d.severity), code=d.rule,
        code_description=lsp.CodeDescription(href=doc_link(d.rule)),
        source="ptxlint", related_information=_related(d, source.path) or None,
        data={"certainty": str(d.certainty), "kernel": d.kernel})


def _related(d: Diagnostic, ptx_path: str):
    here = Path(ptx_path).resolve().as_uri()

    def at(span, message: str):
        return lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=here, range=lsp.Range(
                start=lsp.Position(line=span.line - 1, character=max(span.col - 1, 0)),
                end=lsp.Position(line=span.end_line - 1,
                                 character=max(span.end_col - 1, 0)))),
            message=message)

    out = [at(r.span, r.label) for r in d.related]
    first, *others = d.expanded()
    out += [at(o.span, o.message if o.message != first.message else "the same finding")
            for o in others if o.span is not None]
    return out + _cuda_related(d, ptx_path)


def _cuda_related(d: Diagnostic, ptx_path: str):
    if d.cuda is None or d.cuda.line < 1:
        return []
    from .suppress import cuda_path  # noqa: PLC0415

    found = cuda_path(d.cuda, ptx_path)
    path = found.resolve() if found else Path(os.path.normpath(d.cuda.file))
    if not path.is_absolute():
        return []
    where = lsp.Position(line=d.cuda.line - 1, character=max(d.cuda.column - 1, 0))
    return [lsp.DiagnosticRelatedInformation(
        location=lsp.Location(uri=path.as_uri(), range=lsp.Range(start=where, end=where)),
        message="CUDA source of this line")]


# ---------------------------------------------------------------- code actions
def code_actions(uri: str, lines: list[str], diagnostics, encoding: str = "utf-16"):
    """For each ptxlint finding: open its rule's page, and (but for the tool's own
    errors) suppress it on its line, once per rule and line."""
    out, seen = [], set()
    for diag in diagnostics:
        rule = diag.code if diag.source == "ptxlint" and isinstance(diag.code, str) else None
        if rule is None:
            continue
        if rule not in seen:
            out.append(lsp.CodeAction(
                title=f"Open the documentation of {rule}", diagnostics=[diag],
                command=lsp.Command(title=f"Open the documentation of {rule}",
                                    command=OPEN_DOCS, arguments=[rule])))
        seen.add(rule)
        line = diag.range.start.line
        if rule in NOT_SUPPRESSIBLE or (rule, line) in seen or line >= len(lines):
            continue
        seen.add((rule, line))
        edit = suppression_edit(lines[line].rstrip("\r\n"), rule, line, encoding)
        if edit is not None:
            out.append(lsp.CodeAction(
                title=f"Suppress {rule} on this line", kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[diag], edit=lsp.WorkspaceEdit(changes={uri: [edit]})))
        out += _cuda_suppression(diag, rule, encoding)
    return out


def _cuda_suppression(diag, rule: str, encoding: str):
    """For nvcc output, "Suppress RULE on its CUDA line": the comment at the end of the
    CUDA line the finding's `.loc` names (its related information), which covers every
    PTX instruction of that line; none when that file cannot be read."""
    where = next((r.location for r in diag.related_information or ()
                  if r.message == "CUDA source of this line"), None)
    if where is None or not where.uri.startswith("file:"):
        return []
    path = Path(unquote(where.uri.removeprefix("file://")))
    line = where.range.start.line
    try:
        text = path.read_text(encoding="utf-8", errors="replace").split("\n")[line]
    except (OSError, IndexError):
        return []
    edit = suppression_edit(text.rstrip("\r"), rule, line, encoding)
    if edit is None:
        return []
    return [lsp.CodeAction(
        title=f"Suppress {rule} on its CUDA line ({path.name}:{line + 1})",
        kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
        edit=lsp.WorkspaceEdit(changes={where.uri: [edit]}))]


def suppression_edit(text: str, rule: str, line: int, encoding: str = "utf-16"):
    """`// ptxlint: disable=RULE` at the end of the line, or `,RULE` added to the list
    already there; None when the line names the rule already."""
    body = text.rstrip()
    existing = SUPPRESSION.search(body)
    if existing and rule in existing.group(1).split(","):
        return None
    addition = f",{rule}" if existing else f"  // ptxlint: disable={rule}"
    at = lsp.Position(line=line, character=units(body, encoding))
    return lsp.TextEdit(range=lsp.Range(start=at, end=at), new_text=addition)


# ---------------------------------------------------------------- the server
class _Protocol(LanguageServerProtocol):  # type: ignore[misc,valid-type]
    @lsp_method("textDocument/didChange")
    def lsp_text_document__did_change(self, params):
        """pygls applies a change to a document it does not hold with a KeyError, which
        editors show as an error dialog; a client that changes a document it never
        opened (or already closed) gets nothing instead."""
        # the workspace keys its documents by the unquoted URI
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.info("ignored a change to %s, which is not open", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)


@dataclass
class _Document:
    generation: int = 0
    last_change: float = 0.0
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class PtxlintServer(LanguageServer):  # type: ignore[misc,valid-type]
    def __init__(self):
        super().__init__("ptxlint", __version__, protocol_cls=_Protocol)
        self.analyzer = Analyzer()
        self.documents: dict[str, _Document] = {}
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptxlint")
        self.shown: set[str] = set()
        self.tasks: set[asyncio.Task] = set()  # running analyses, kept from the collector
        self.poller: asyncio.Task | None = None

    def wanted(self, uri: str, language_id: str | None = None) -> bool:
        return uri.endswith(".ptx") or language_id == "ptx"

    def capability(self, *path: str) -> Any:
        """A client capability (`capability("workspace", "configuration")`), or None."""
        value: Any = self.protocol.client_capabilities
        for name in path:
            value = getattr(value, name, None)
        return value

    def keep(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def schedule(self, uri: str, delay: float) -> None:
        doc = self.documents.setdefault(uri, _Document())
        doc.generation += 1
        if doc.timer is not None:
            doc.timer.cancel()
        generation = doc.generation
        doc.timer = asyncio.get_running_loop().call_later(
            delay, lambda: self.keep(self.analyse(uri, generation)))

    def republish(self) -> None:
        """Every open document again: its configuration or the settings changed."""
        for uri in list(self.documents):
            self.schedule(uri, 0)

    def warn(self, problem: str) -> None:
        if problem not in self.shown:
            self.shown.add(problem)
            self.window_show_message(lsp.ShowMessageParams(
                type=lsp.MessageType.Warning, message=f"ptxlint: {problem}"))

    def apply_settings(self, values: Any) -> None:
        problem = self.analyzer.configure(values)
        if problem is not None:
            self.warn(f"{problem}; the editor settings are ignored until it is fixed")

    async def pull_settings(self) -> None:
        """`workspace/configuration` for the `ptxlint` section, when the client has it;
        a null answer keeps the settings there are."""
        if not self.capability("workspace", "configuration"):
            return
        try:
            answer = await self.workspace_configuration_async(lsp.ConfigurationParams(
                items=[lsp.ConfigurationItem(section="ptxlint")]))
        except Exception as exc:  # noqa: BLE001  (a client that fails it: keep what we have)
            log.info("workspace/configuration failed: %s", exc)
            return
        if answer and isinstance(answer[0], dict):
            self.apply_settings(answer[0])
            self.republish()

    async def analyse(self, uri: str, generation: int) -> None:
        state = self.documents.get(uri)
        if state is None or state.generation != generation:
            return  # closed before this started: the workspace would read the disk
        document = self.workspace.get_text_document(uri)
        encoding = str(getattr(self.workspace, "position_encoding", None) or "utf-16")
        loop = asyncio.get_running_loop()
        params = await loop.run_in_executor(
            self.pool, self.analyzer.publishable, uri, document.path, document.source,
            document.version, encoding.lower())
        state = self.documents.get(uri)
        if state is None or state.generation != generation:
            return  # closed, or edited again while this ran: the newer run publishes
        self.text_document_publish_diagnostics(params)
        for problem in self.analyzer.config_problems:
            self.warn(problem)
        self.analyzer.config_problems.clear()

    # ------------------------------------------------------------ configuration files
    async def watch_config(self) -> None:
        """Ask the client to watch the configuration files, or look at them ourselves."""
        if self.capability("workspace", "did_change_watched_files", "dynamic_registration"):
            watchers = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}")
                        for name in CONFIG_FILES]
            try:
                await self.client_register_capability_async(lsp.RegistrationParams(
                    registrations=[lsp.Registration(
                        id="ptxlint-config-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                            watchers=watchers))]))
                return
            except Exception as exc:  # noqa: BLE001  (refused: poll instead)
                log.info("the client refused to watch the configuration files: %s", exc)
        self.poller = asyncio.get_running_loop().create_task(self.poll_config())

    async def poll_config(self) -> None:
        seen = self.config_stamp()
        while True:
            await asyncio.sleep(POLL)
            now = self.config_stamp()
            if now != seen:
                seen = now
                self.republish()

    def config_stamp(self) -> frozenset:
        """(path, mtime, size) of every configuration file that could govern an open
        document: in its directory or above (a new file counts as a change)."""
        out = set()
        for uri in self.documents:
            path = self.workspace.get_text_document(uri).path
            for directory in Path(path).resolve().parents if path else ():
                for name in CONFIG_FILES:
                    try:
                        st = (directory / name).stat()
                    except OSError:
                        continue
                    out.add((str(directory / name), st.st_mtime_ns, st.st_size))
        return frozenset(out)


def build_server() -> PtxlintServer:
    server = PtxlintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: PtxlintServer, params: lsp.InitializeParams):
        options = params.initialization_options
        if isinstance(options, dict):
            ls.apply_settings(options.get("ptxlint", options))

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: PtxlintServer, params: lsp.InitializedParams):
        asyncio.get_running_loop().run_in_executor(ls.pool, warm_up)
        ls.keep(ls.watch_config())
        ls.keep(ls.pull_settings())

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: PtxlintServer, *args):
        if ls.poller is not None:
            ls.poller.cancel()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: PtxlintServer,
                                       params: lsp.DidChangeConfigurationParams):
        settings = params.settings
        if isinstance(settings, dict) and "ptxlint" in settings:
            ls.apply_settings(settings["ptxlint"])
            ls.republish()
        else:  # pull clients send no settings: ask for them
            await ls.pull_settings()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: PtxlintServer,
                                       params: lsp.DidChangeWatchedFilesParams):
        names = {unquote(change.uri).rsplit("/", 1)[-1] for change in params.changes}
        if names & set(CONFIG_FILES):
            ls.republish()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: PtxlintServer, params: lsp.DidOpenTextDocumentParams):
        doc = params.text_document
        if ls.wanted(doc.uri, doc.language_id):
            ls.schedule(doc.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: PtxlintServer, params: lsp.DidChangeTextDocumentParams):
        uri = params.text_document.uri
        if uri not in ls.documents:
            return
        now = time.monotonic()
        quiet = now - ls.documents[uri].last_change >= DEBOUNCE
        ls.documents[uri].last_change = now
        ls.schedule(uri, 0 if quiet else DEBOUNCE)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: PtxlintServer, params: lsp.DidSaveTextDocumentParams):
        if params.text_document.uri in ls.documents:
            ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: PtxlintServer, params: lsp.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        state = ls.documents.pop(uri, None)
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        ls.analyzer.forget(uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri,
                                                                          diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def code_action(ls: PtxlintServer, params: lsp.CodeActionParams):
        uri = params.text_document.uri
        if uri not in ls.documents:
            return None
        encoding = str(getattr(ls.workspace, "position_encoding", None) or "utf-16")
        lines = ls.workspace.get_text_document(uri).lines
        return code_actions(uri, lines, params.context.diagnostics, encoding.lower()) or None

    @server.command(OPEN_DOCS)
    def open_docs(ls: PtxlintServer, *arguments):
        rule = arguments[0] if arguments and isinstance(arguments[0], str) else None
        if rule is None or not re.fullmatch(r"[a-z0-9-]+", rule):
            return None
        link = doc_link(rule)
        if ls.capability("window", "show_document", "support"):
            # not awaited: the command is done once asked, whatever the client answers
            ls.window_show_document(lsp.ShowDocumentParams(
                uri=link, external=not link.startswith("file:")))
        else:
            ls.window_show_message(lsp.ShowMessageParams(
                type=lsp.MessageType.Info, message=f"ptxlint: {rule}: {link}"))
        return None

    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ptxlint lsp",
                                     description="ptxlint language server (stdio)")
    parser.add_argument("--stdio", action="store_true", help="talk over stdio (the default)")
    parser.add_argument("--version", action="version", version=f"ptxlint {__version__}")
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    if lsp is None:
        print("ptxlint lsp needs pygls: pip install 'ptxlint[lsp]'", file=sys.stderr)
        return 2
    build_server().start_io()
    return 0


__all__ = ["Analyzer", "PtxlintServer", "build_server", "main", "to_lsp", "units",
           "code_actions", "suppression_edit", "doc_link", "DEBOUNCE"]

if __name__ == "__main__":
    sys.exit(main())
