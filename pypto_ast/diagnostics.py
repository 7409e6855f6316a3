"""The one diagnostic value that the linter, the transpiler, ``@jit`` and the tests share.

Lines are 1-based and columns 0-based character offsets (not bytes); renderers add 1 to
columns when they display them, like ruff.  Every value here is frozen and picklable so
results can cross worker processes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    BUG = "bug"  # our own failure: rendered with "please report"


class Applicability(str, enum.Enum):
    SAFE = "safe"  # keeps meaning: applied by --fix
    UNSAFE = "unsafe"  # may change behaviour: needs --unsafe-fixes
    DISPLAY_ONLY = "display-only"  # shown as help, never applied


@dataclass(frozen=True, slots=True, order=True)
class Pos:
    line: int  # 1-based
    col: int  # 0-based, in characters


@dataclass(frozen=True, slots=True)
class Span:
    path: str
    start: Pos
    end: Pos

    @property
    def line(self) -> int:
        return self.start.line

    @property
    def col(self) -> int:
        return self.start.col


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text between ``start`` and ``end`` (same coordinates as Span) by ``content``."""

    start: Pos
    end: Pos
    content: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True, slots=True)
class Note:
    message: str
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    name: str
    message: str
    span: Span
    severity: Severity = Severity.ERROR
    help: str | None = None
    fix: Fix | None = None
    notes: tuple[Note, ...] = field(default=())

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY

    def fix_applies(self, unsafe: bool) -> bool:
        """Would ``--fix`` (``--unsafe-fixes`` when ``unsafe``) apply this diagnostic's fix?"""
        if self.fix is None or not self.fix.edits:
            return False
        if self.fix.applicability is Applicability.SAFE:
            return True
        return unsafe and self.fix.applicability is Applicability.UNSAFE

    def sort_key(self) -> tuple:
        return (self.span.path, self.span.start, self.code)


EXACT_DIGITS = 18  # ints up to this many digits appear in messages exactly


def format_count(n) -> str:
    """An int for a message: exact up to ``EXACT_DIGITS`` digits, else scientific (``1.2e+30``).

    Never ``str()`` of a huge int: that is quadratic in its length and raises ``ValueError``
    past ``sys.get_int_max_str_digits()`` (4300 digits).  Other values are ``str()``-ed."""
    if not isinstance(n, int) or isinstance(n, bool):
        return str(n)
    m = -n if n < 0 else n
    if m.bit_length() < 60 or m < 10 ** EXACT_DIGITS:
        return str(n)
    import math

    # math.log10 takes arbitrarily large ints, precisely enough for two significant digits
    return ("-" if n < 0 else "") + format_log10(math.log10(m))


def format_log10(log10: float) -> str:
    """``10 ** log10`` in scientific form (``1.2e+30``), for counts known only by their logarithm."""
    exp = int(log10 // 1)
    mantissa = 10 ** (log10 - exp)
    if round(mantissa, 1) >= 10:
        mantissa, exp = mantissa / 10, exp + 1
    return f"{mantissa:.1f}e+{exp}" if exp >= 0 else f"{mantissa:.1f}e{exp}"


def format_power(base: int, exp: int) -> str:
    """``base ** exp`` for a message, computed only when it is small enough to print exactly."""
    if base in (0, 1) or exp <= 0:
        return format_count(base ** max(exp, 0))
    if exp * max(abs(base), 2).bit_length() <= 64:
        return format_count(base ** exp)
    return f"{format_count(base)}^{format_count(exp)}"
