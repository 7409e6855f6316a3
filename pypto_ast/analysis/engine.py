"""Lint one file: parse -> model -> rules -> suppressions. Never raises; returns a FileResult."""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from ..diagnostics import Diagnostic, Pos, Severity, Span
from ..settings import Settings
from ..source import SourceError, SourceFile, decode
from .noqa import Suppressions
from .rule import LintContext
from .registry import RULES


@dataclass(frozen=True)
class FileResult:
    path: str
    diagnostics: tuple[Diagnostic, ...] = ()
    parsed: bool = True  # False: nothing but PTO000 could be checked
    text: str | None = None  # decoded source (None when it could not be decoded)
    encoding: str = "utf-8"
    suppressed: int = 0
    failure: str | None = None  # internal error text (with traceback) when a stage crashed


def lint_bytes(data: bytes, path: str, settings: Settings) -> FileResult:
    try:
        text, encoding = decode(data)
    except SourceError as exc:
        return _unparsable(path, exc, settings, None)
    return lint_text(text, path, settings, encoding=encoding)


def lint_text(text: str, path: str, settings: Settings, *, encoding: str = "utf-8") -> FileResult:
    try:
        source = SourceFile.parse(text, path)
    except SourceError as exc:
        return _unparsable(path, exc, settings, text, encoding)
    diagnostics: list[Diagnostic] = []
    failure = None
    try:
        from ..frontend import analyze as build_model

        model = build_model(source, settings)
        ctx = LintContext(source, model, settings)
        for rule in RULES:
            if not settings.enabled(rule.code, path):
                continue
            try:
                diagnostics.extend(rule.check(ctx))
            except Exception:  # a rule bug must not hide the others' findings
                failure = traceback.format_exc()
                diagnostics.append(_bug(path, f"rule {rule.code} crashed on this file"))
    except RecursionError:
        failure = traceback.format_exc()
        diagnostics.append(_bug(path, "the file nests too deeply to analyse"))
    except Exception:
        failure = traceback.format_exc()
        diagnostics.append(_bug(path, "the kernel model could not be built for this file"))
    unique = {}
    for diag in diagnostics:
        unique.setdefault((diag.code, diag.span.start, diag.span.end, diag.message), diag)
    suppressions = Suppressions.scan(source.lines)
    kept = [d for d in unique.values() if d.severity is Severity.BUG or not suppressions.suppresses(d)]
    kept.sort(key=Diagnostic.sort_key)
    return FileResult(path, tuple(kept), True, text, encoding, len(unique) - len(kept), failure)


def _unparsable(path, exc: SourceError, settings: Settings, text, encoding="utf-8") -> FileResult:
    diags: tuple = ()
    if settings.enabled("PTO000", path):
        span = Span(path, exc.pos, Pos(exc.pos.line, exc.pos.col))
        diags = (Diagnostic("PTO000", "syntax-error", exc.message, span),)
    return FileResult(path, diags, False, text, encoding)


def _bug(path: str, message: str) -> Diagnostic:
    span = Span(path, Pos(1, 0), Pos(1, 0))
    return Diagnostic(
        "PTO999", "internal-error", f"{message}; this is a pypto-ast bug, please report it",
        span, Severity.BUG,
    )
