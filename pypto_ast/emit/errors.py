"""The emitter's one error type, shared by every kernel emitter (vector, cube, control)."""

from __future__ import annotations

from typing import Optional


class EmitError(Exception):
    """The program is outside what the emitter supports; ``span`` locates the cause."""

    def __init__(self, message: str, span=None, code: str = "PTO109"):
        super().__init__(message)
        self.message, self.span, self.code = message, span, code

    def __str__(self) -> str:
        where = f" (line {self.span.line})" if self.span else ""
        return f"{self.message}{where}"


UNSUPPORTED = "pypto-ast's Ascend C emitter does not support it yet"


def unsupported(what: str, span: Optional[object] = None):
    """Raise the standard 'not supported yet' EmitError: a gap of the emitter (the Ascend C every
    backend builds from), never of one backend."""
    raise EmitError(f"{what}: {UNSUPPORTED}", span)


def refused(what: str, page: str, span: Optional[object] = None):
    """Raise PTO106: the program breaks a rule pypto itself has (``what``: pypto's rule and
    message), named by its op page -- not a gap of ours.  The front end keeps lowering such a
    kernel (it is valid IR); the emitter, like pypto's tracer, refuses it."""
    raise EmitError(f"{what} (pypto refuses it: see {page})", span, code="PTO106")
