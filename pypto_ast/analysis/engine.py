"""Lint one file: parse -> model -> rules -> suppressions. Never raises; returns a FileResult."""

from __future__ import annotations

import ast
import contextlib
import gc
import traceback
from dataclasses import dataclass

from .. import deep
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
    """Lint ``text`` on a big-stack worker thread (``pypto_ast.deep``): nesting as deep as CPython
    parses is analysed, deeper still is a located PTO100, never a crash."""
    with collector_paused():
        return deep.call(_lint_text, text, path, settings, encoding)


@contextlib.contextmanager
def collector_paused():
    """No cyclic garbage collection while one file is linted, one young-generation collection
    after it. A syntax tree is hundreds of thousands of objects: the collector, triggered by
    their allocation, kept walking them (a fifth of the official corpus's lint time); what the
    file left behind is all in the young generation afterwards, so memory stays one file's."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect(0)


def _lint_text(text: str, path: str, settings: Settings, encoding: str) -> FileResult:
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
            except (RecursionError, MemoryError) as exc:
                too_deep = _too_deep(source, settings, exc, f"rule {rule.code} was not checked")
                if too_deep is None:
                    failure = traceback.format_exc()
                    diagnostics.append(_bug(path, f"rule {rule.code} crashed on this file"))
                else:
                    diagnostics.extend(too_deep)
            except Exception:  # a rule bug must not hide the others' findings
                failure = traceback.format_exc()
                diagnostics.append(_bug(path, f"rule {rule.code} crashed on this file"))
    except (RecursionError, MemoryError) as exc:
        too_deep = _too_deep(source, settings, exc, "nothing else in this file was checked")
        if too_deep is None:
            failure = traceback.format_exc()
            diagnostics.append(_bug(path, "the file nests too deeply to analyse"))
        else:
            diagnostics.extend(too_deep)
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


# a RecursionError (or MemoryError) of the analysis with the tree nesting at least this deep is the
# input's nesting, reported as PTO100 where it is deepest; on a shallower tree it is our bug (PTO999)
DEEP_TREE = 500


def _too_deep(source: SourceFile, settings: Settings, exc: BaseException, consequence: str):
    """The PTO100 diagnostics for an analysis stopped by the file's nesting, or None when the
    tree is not deep (then the RecursionError is a bug of ours)."""
    depth, path = source.deepest()
    if depth < DEEP_TREE:
        return None
    if not settings.enabled("PTO100", source.path):
        return []
    node = next((n for n in path if isinstance(n, ast.expr)), None)
    if node is None:
        node = next((n for n in reversed(path) if isinstance(n, ast.stmt)), path[-1])
    what = "expression" if isinstance(node, ast.expr) else "code"
    if isinstance(exc, MemoryError):
        cause = "analysing it ran out of memory"
    else:
        cause = "deeper than pypto-lint can analyse"
    message = (f"{what} nested too deeply: {depth} levels of syntax tree, {cause}; {consequence} "
               "(split the expression, e.g. sum partial results in named temporaries)")
    try:
        span = source.span(node) if hasattr(node, "lineno") else Span(source.path, Pos(1, 0), Pos(1, 0))
    except Exception:  # noqa: BLE001 - positions are a courtesy here
        span = Span(source.path, Pos(1, 0), Pos(1, 0))
    return [Diagnostic("PTO100", "unsupported-construct", message, span, Severity.ERROR)]


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
