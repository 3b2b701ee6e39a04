"""Language server: `ptxlint lsp` or `python -m ptxlint.lsp` (pygls, stdio).

Publishes diagnostics for `.ptx` documents on open, change and save, with the
document's version, the rule id as the code and a link to the rule's page, the CUDA
line as related information, and positions converted at this edge from ptxlint's
1-based code-point columns to 0-based units of the negotiated encoding (UTF-16 unless
the client offers another). Settings, the launch configuration included, come from the
configuration file found upward from the document.

Changes are debounced per document: an edit after a quiet spell is analysed at once,
edits arriving within `DEBOUNCE` seconds of the previous one wait until the typing
pauses for that long. Analysis runs on one worker thread so the server keeps reading
messages; a result overtaken by a newer edit is dropped. `IncrementalLinter` analyses
only the kernels an edit touched.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from . import __version__, config
from .diagnostics import Diagnostic, Severity
from .incremental import IncrementalLinter
from .source import SourceFile

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

log = logging.getLogger("ptxlint.lsp")

DEBOUNCE = 0.15  # seconds
DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def _severity(s: Severity):
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


def doc_link(rule: str) -> str | None:
    """The rule's page: under $PTXLINT_DOCS_URL, else in this checkout's docs/."""
    base = os.environ.get("PTXLINT_DOCS_URL")
    if base:
        return f"{base.rstrip('/')}/{rule}.md"
    page = DOCS / f"{rule}.md"
    return page.as_uri() if page.is_file() else None


class Analyzer:
    """Text in, LSP diagnostics out: everything but the transport (the benchmark
    and the tests drive it directly)."""

    def __init__(self):
        self.linters: dict[str, IncrementalLinter] = {}
        self.config_problems: list[str] = []  # for the server to show, once each

    def diagnostics(self, uri: str, path: str, text: str) -> list[Diagnostic]:
        try:
            cfg = config.for_file(path) if path else config.Config()
        except config.ConfigError as exc:
            self.config_problems.append(str(exc))
            cfg = config.Config()
        linter = self.linters.setdefault(uri, IncrementalLinter(path or uri))
        found = linter.lint(text, config.options(cfg))
        minimum = cfg.severity or Severity.NOTE
        return [d for d in found if d.severity >= minimum or d.rule == "parse-error"]

    def publishable(self, uri: str, path: str, text: str, version: int | None,
                    encoding: str = "utf-16"):
        try:
            found = self.diagnostics(uri, path, text)
        except Exception as exc:  # noqa: BLE001  (shown in the editor, never a crash)
            from .cli.run import internal_error  # noqa: PLC0415

            self.linters.pop(uri, None)
            found = [internal_error(path or uri, exc)]
        source = SourceFile(path, text)
        return lsp.PublishDiagnosticsParams(
            uri=uri, version=version,
            diagnostics=[to_lsp(d, source, encoding) for d in found])

    def forget(self, uri: str) -> None:
        self.linters.pop(uri, None)


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
    link = doc_link(d.rule)
    return lsp.Diagnostic(
        range=rng, message=message, severity=_severity(d.severity), code=d.rule,
        code_description=lsp.CodeDescription(href=link) if link else None,
        source="ptxlint", related_information=_related(d, source.path) or None,
        data={"certainty": str(d.certainty), "kernel": d.kernel})


def _related(d: Diagnostic, ptx_path: str):
    here = Path(ptx_path).resolve()
    out = [lsp.DiagnosticRelatedInformation(
        location=lsp.Location(uri=here.as_uri(), range=lsp.Range(
            start=lsp.Position(line=r.span.line - 1, character=max(r.span.col - 1, 0)),
            end=lsp.Position(line=r.span.end_line - 1, character=max(r.span.end_col - 1, 0)))),
        message=r.label) for r in d.related]
    return out + _cuda_related(d, ptx_path)


def _cuda_related(d: Diagnostic, ptx_path: str):
    if d.cuda is None or d.cuda.line < 1:
        return []
    from .cli.run import cuda_path  # noqa: PLC0415

    found = cuda_path(d.cuda, ptx_path)
    path = found.resolve() if found else Path(d.cuda.file)
    if not path.is_absolute():
        return []
    where = lsp.Position(line=d.cuda.line - 1, character=max(d.cuda.column - 1, 0))
    return [lsp.DiagnosticRelatedInformation(
        location=lsp.Location(uri=path.as_uri(), range=lsp.Range(start=where, end=where)),
        message="CUDA source of this line")]


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

    def wanted(self, uri: str, language_id: str | None = None) -> bool:
        return uri.endswith(".ptx") or language_id == "ptx"

    def schedule(self, uri: str, delay: float) -> None:
        doc = self.documents.setdefault(uri, _Document())
        doc.generation += 1
        if doc.timer is not None:
            doc.timer.cancel()
        loop = asyncio.get_running_loop()
        generation = doc.generation

        def start() -> None:
            task = loop.create_task(self.analyse(uri, generation))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

        doc.timer = loop.call_later(delay, start)

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
            if problem not in self.shown:
                self.shown.add(problem)
                self.window_show_message(lsp.ShowMessageParams(
                    type=lsp.MessageType.Warning, message=f"ptxlint: {problem}"))
        self.analyzer.config_problems.clear()


def build_server() -> PtxlintServer:
    server = PtxlintServer()

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
           "DEBOUNCE"]

if __name__ == "__main__":
    sys.exit(main())
