"""``pypto-lint server``: the linter as a Language Server, for squiggles in the editor.

The same engine and settings as ``pypto-lint check`` (the ``[tool.pypto-lint]`` table found from the
document's folder), run on the editor's buffer on open, change and save.  Each finding is published
with its code, a link to the rule's documentation, its notes as related locations, and its fix when
that fix is safe (after the same proof ``--fix`` runs) as a quick fix; "Fix all" applies every safe
fix the way ``--fix`` would.  pygls (the ``[lsp]`` extra) is imported only by this command.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pypto_ast import __version__
from pypto_ast.config import ConfigError, Overrides, resolve
from pypto_ast.diagnostics import Applicability, Diagnostic, Severity
from pypto_ast.settings import Settings

from pypto_ast.cli.runner import Mode, lint_data

SOURCE = "pypto-lint"
FIX_ALL = "source.fixAll.pypto-lint"
_DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.BUG: types.DiagnosticSeverity.Error,
}


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _utf16_col(line: str, col: int) -> int:
    """LSP positions count UTF-16 code units; the engine counts characters."""
    return col + sum(1 for ch in line[:col] if ord(ch) > 0xFFFF)


def _position(lines: list, line: int, col: int) -> types.Position:
    """A 1-based line and character column as an LSP position (clamped to the document)."""
    index = max(0, line - 1)
    text = lines[index] if index < len(lines) else ""
    return types.Position(line=index, character=_utf16_col(text, min(col, len(text))))


def _range(lines: list, span_start, span_end) -> types.Range:
    return types.Range(start=_position(lines, span_start.line, span_start.col),
                       end=_position(lines, span_end.line, span_end.col))


def _settings_for(path: str) -> Settings:
    folder = Path(path).parent if Path(path).parent.is_dir() else Path.cwd()
    try:
        return resolve((path,), Overrides(), cwd=folder).settings
    except ConfigError:
        return Settings()


def _safe_fix(diag: Diagnostic) -> bool:
    return diag.fix is not None and diag.fix.applicability is Applicability.SAFE and bool(diag.fix.edits)


def to_lsp(diag: Diagnostic, lines: list, uri: str) -> types.Diagnostic:
    """One engine finding as an LSP diagnostic; a safe fix's edits ride along in ``data``."""
    message = diag.message + (f"\nhelp: {diag.help}" if diag.help else "")
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri if note.span.path == diag.span.path else Path(note.span.path).as_uri(),
                                    range=_range(lines, note.span.start, note.span.end)),
            message=note.message,
        )
        for note in diag.notes if note.span is not None
    ]
    data = None
    if _safe_fix(diag):
        data = {"title": diag.fix.title, "edits": [
            {"range": [e.start.line, e.start.col, e.end.line, e.end.col], "text": e.content} for e in diag.fix.edits
        ]}
    description = types.CodeDescription(href=f"{_DOCS.as_uri()}#{diag.code.lower()}") if _DOCS.is_file() else None
    return types.Diagnostic(
        range=_range(lines, diag.span.start, diag.span.end),
        message=message,
        severity=_SEVERITY.get(diag.severity, types.DiagnosticSeverity.Error),
        code=diag.code,
        code_description=description,
        source=SOURCE,
        related_information=related or None,
        data=data,
    )


class PyptoLintServer(LanguageServer):
    def lint(self, uri: str) -> list:
        document = self.workspace.get_text_document(uri)
        path = uri_to_path(uri)
        report = lint_data(document.source.encode("utf-8"), path, _settings_for(path), Mode())
        lines = document.source.splitlines()
        found = report.result.diagnostics if report.result else ()
        return [to_lsp(d, lines, uri) for d in found]

    def publish(self, uri: str) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=self.lint(uri)))

    def fix_all(self, uri: str):
        """The document with every safe fix applied (``--fix``'s outcome), or None when none applies."""
        document = self.workspace.get_text_document(uri)
        path = uri_to_path(uri)
        data = document.source.encode("utf-8")
        report = lint_data(data, path, _settings_for(path), Mode(diff=True))
        if report.fixed_bytes is None or report.fixed_bytes == data:
            return None
        end = types.Position(line=len(document.lines), character=0)
        return types.TextEdit(range=types.Range(start=types.Position(line=0, character=0), end=end),
                              new_text=report.fixed_bytes.decode("utf-8"))


server = PyptoLintServer(SOURCE, __version__)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: PyptoLintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: PyptoLintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: PyptoLintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: PyptoLintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
)
def code_action(ls: PyptoLintServer, params: types.CodeActionParams) -> list:
    uri = params.text_document.uri
    lines = ls.workspace.get_text_document(uri).source.splitlines()
    wanted = params.context.only
    actions = []
    if not wanted or any(k.startswith(types.CodeActionKind.QuickFix) for k in wanted):
        for diag in params.context.diagnostics:
            if diag.source != SOURCE or not isinstance(diag.data, dict):
                continue
            edits = [types.TextEdit(range=types.Range(start=_position(lines, r[0], r[1]), end=_position(lines, r[2], r[3])),
                                    new_text=e["text"])
                     for e in diag.data.get("edits", ()) for r in [e["range"]]]
            actions.append(types.CodeAction(
                title=f"{diag.code}: {diag.data.get('title', 'apply the fix')}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                is_preferred=True,
                edit=types.WorkspaceEdit(changes={uri: edits}),
            ))
    if not wanted or any(FIX_ALL.startswith(k) for k in wanted):
        edit = ls.fix_all(uri)
        if edit is not None:
            actions.append(types.CodeAction(title="pypto-lint: fix all safe fixes", kind=FIX_ALL,
                                            edit=types.WorkspaceEdit(changes={uri: [edit]})))
    return actions


def main() -> None:
    """Serve on stdin/stdout until the client exits."""
    server.start_io(sys.stdin.buffer, sys.stdout.buffer)
