"""Apply fixes the way ruff does: non-overlapping edits per pass, re-lint, repeat until stable.

Every character outside an edit is kept; a pass whose result does not parse is rejected.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, replace

from .. import deep
from ..analysis.engine import FileResult, lint_text
from .proof import demote_unproven
from ..diagnostics import Diagnostic
from ..settings import Settings
from ..source import apply_edits

MAX_PASSES = 10


@dataclass(frozen=True)
class FixOutcome:
    text: str  # the fixed source
    result: FileResult  # lint result of ``text``: what remains
    applied: int  # number of fixes applied
    converged: bool  # False: still fixable after MAX_PASSES, or a fix broke the code


def select_fixes(diagnostics, unsafe: bool) -> list[Diagnostic]:
    """Fixes whose edits overlap none already chosen (earlier in the file wins)."""
    chosen: list[Diagnostic] = []
    taken: list[tuple] = []
    for diag in sorted(diagnostics, key=lambda d: d.span.start):
        if not diag.fix_applies(unsafe):
            continue
        ranges = [(e.start, e.end) for e in diag.fix.edits]
        if any(a < te and ta < b or a == ta for a, b in ranges for ta, te in taken):
            continue
        chosen.append(diag)
        taken.extend(ranges)
    return chosen


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a fix nesting too deeply: rejected
        return False


def proven(result: FileResult) -> FileResult:
    """``result`` with every safe fix that lowering cannot prove safe marked unsafe."""
    if result.text is None or not any(d.fix_applies(False) for d in result.diagnostics):
        return result
    if not deep.in_worker():  # lowering recurses as deep as the file nests
        return deep.call(proven, result)
    from ..analysis.registry import BY_CODE

    meaning = {code: rule.fix_meaning for code, rule in BY_CODE.items()}
    return replace(result, diagnostics=demote_unproven(result.text, result.path, result.diagnostics, meaning))


def fix_text(text: str, path: str, settings: Settings, *, unsafe: bool = False) -> FixOutcome:
    if not deep.in_worker():  # every pass on the big-stack thread (deeply nested files)
        return deep.call(fix_text, text, path, settings, unsafe=unsafe)
    result = proven(lint_text(text, path, settings))
    applied = 0
    for _ in range(MAX_PASSES):
        if not result.parsed:
            return FixOutcome(text, result, applied, True)
        chosen = select_fixes(result.diagnostics, unsafe)
        if not chosen:
            return FixOutcome(text, result, applied, True)
        edits = [edit for diag in chosen for edit in diag.fix.edits]
        candidate = apply_edits(text, edits)
        if candidate == text or not _parses(candidate):
            return FixOutcome(text, result, applied, False)
        text = candidate
        applied += len(chosen)
        result = proven(lint_text(text, path, settings))
    return FixOutcome(text, result, applied, not select_fixes(result.diagnostics, unsafe))
