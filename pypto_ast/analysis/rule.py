"""Rule base class: one rule per module, its VALID/INVALID cases beside it (Fixit-style)."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Iterator

from ..diagnostics import Diagnostic, Fix, Note, Severity, Span

if TYPE_CHECKING:
    from ..frontend import ModuleModel
    from ..settings import Settings
    from ..source import SourceFile


@dataclass(frozen=True)
class Case:
    """An INVALID example: ``code`` must fire; ``fixed`` is what ``--fix`` must make of it."""

    code: str
    fixed: str | None = None
    line: int | None = None  # expected line of the first diagnostic of this rule
    col: int | None = None  # expected 1-based column
    settings: dict = field(default_factory=dict)  # Settings overrides for this case
    unsafe: bool = False  # the fix needs --unsafe-fixes


@dataclass(frozen=True)
class Valid:
    """A VALID example with Settings overrides (plain strings are VALID with defaults)."""

    code: str
    settings: dict = field(default_factory=dict)


class LintContext:
    """What a rule sees: the source, the kernel model and the settings; ``report`` builds diagnostics."""

    def __init__(self, source: "SourceFile", model: "ModuleModel", settings: "Settings"):
        self.source = source
        self.model = model
        self.settings = settings

    def span(self, node: ast.AST) -> Span:
        return self.source.span(node)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, used by `pypto-lint rules`
    fix_availability: ClassVar[str] = "none"  # "none" | "safe" | "unsafe" | "display-only" | "sometimes"
    # what a safe fix may change in the lowered program (transforms/proof.py): "same" |
    # "loop1-merge" | "output-write" | "unroll-tail"; anything else it changes makes the fix unsafe
    fix_meaning: ClassVar[str] = "same"
    severity: ClassVar[Severity] = Severity.ERROR
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list[Case]] = []

    def check(self, ctx: LintContext) -> Iterator[Diagnostic]:
        raise NotImplementedError

    def diagnostic(
        self,
        span: Span,
        message: str,
        *,
        help: str | None = None,
        fix: Fix | None = None,
        notes: tuple[Note, ...] = (),
    ) -> Diagnostic:
        return Diagnostic(self.code, self.name, message, span, self.severity, help, fix, notes)

    @classmethod
    def docs(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()

    @classmethod
    def url(cls) -> str:
        return f"docs/rules.md#{cls.code.lower()}"
