"""The exceptions ``@pypto_ast.jit`` raises for the kernel itself (no torch, no front end).

``KernelError`` holds :class:`~pypto_ast.diagnostics.Diagnostic` values and renders them the
way ``pypto-lint`` / ``pypto-transpile`` print them (code, ``file:line:col``, the source line
with a caret; ``pypto_ast.render.render_full``), so a kernel that fails at its first call reads
like the command line.  Wrong arguments are ``TypeError`` / ``ValueError`` instead (the
kernel is fine, the call is not).
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from .diagnostics import Diagnostic, Pos, Severity, Span
from .pipeline import KernelErrors


class KernelError(KernelErrors):
    """The kernel has errors: lint errors in its lines, or the front end, the emitter, the UB
    plan or the device refused it.  ``diagnostics`` lists them (sorted); ``str()`` renders them
    all, each with its code, ``file:line:col`` and a caret under the source.

    A ``pipeline.KernelErrors`` too (``findings``, ``path``, ``code`` of the first diagnostic),
    so code that catches the pipeline's exception keeps working."""

    def __init__(self, diagnostics: Iterable[Diagnostic], sources: Optional[Mapping[str, Optional[str]]] = None):
        self.diagnostics = tuple(sorted(diagnostics, key=Diagnostic.sort_key))
        self.sources = dict(sources or {})
        first = self.diagnostics[0] if self.diagnostics else None
        findings = [(d.message, (d.span.line, d.span.col)) for d in self.diagnostics]
        super().__init__(findings or [("kernel error", None)], first.span.path if first else None,
                         code=first.code if first else "PTO100")

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(d.code for d in self.diagnostics)

    def __str__(self) -> str:
        from .render import render

        return render("full", self.diagnostics, self.sources).rstrip("\n")

    def __reduce__(self):  # picklable: crosses process pools like Diagnostic does
        return (type(self), (self.diagnostics, self.sources))


class KernelWarning(UserWarning):
    """A lint warning in a ``@pypto_ast.jit`` kernel's lines (shown at its first call)."""


class BackendUnavailable(RuntimeError):
    """The backend asked for cannot run in this environment (``npu`` without CANN and an NPU)."""


def finding_diagnostic(path: Optional[str], message: str, span, code: str = "PTO100",
                       name: Optional[str] = None, severity: Severity = Severity.ERROR) -> Diagnostic:
    """A Diagnostic from a pipeline finding: ``span`` is an ``ir.Span``, a ``(line, col)`` pair
    or None (then the file's first line), as ``pypto-transpile`` reports them."""
    if name is None:
        from .frontend.errors import CODES

        name = CODES[code].name if code in CODES else "cannot-lower"
    path = path or "<unknown>"
    if span is None:
        where = Span(path, Pos(1, 0), Pos(1, 0))
    elif isinstance(span, tuple):
        where = Span(path, Pos(span[0], span[1]), Pos(span[0], span[1] + 1))
    else:
        end = Pos(span.end_line, span.end_col) if (span.end_line, span.end_col) > (span.line, span.col) \
            else Pos(span.line, span.col + 1)
        where = Span(path, Pos(span.line, span.col), end)
    return Diagnostic(code, name, message, where, severity)
