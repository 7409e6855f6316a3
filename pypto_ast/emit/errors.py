"""The emitter's one error type, shared by every kernel emitter (vector, cube, control)."""

from __future__ import annotations

from typing import Optional


class EmitError(Exception):
    """The program is outside what the emitter supports; ``span`` locates the cause."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.message, self.span = message, span

    def __str__(self) -> str:
        where = f" (line {self.span.line})" if self.span else ""
        return f"{self.message}{where}"


def unsupported(what: str, span: Optional[object] = None):
    """Raise the standard 'not supported yet' EmitError."""
    raise EmitError(f"{what}: the host backend does not support it yet", span)
