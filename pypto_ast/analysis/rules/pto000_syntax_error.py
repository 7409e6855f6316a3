"""PTO000 syntax-error."""

from __future__ import annotations

from ..rule import Case, LintContext, Rule


class SyntaxErrorRule(Rule):
    """
    ## What it does
    Reports a file that cannot be read as Python: a syntax error, an undecodable byte
    sequence or a bad ``# coding`` declaration.

    ## Why is this bad?
    Nothing else in the file can be checked, and PyPTO's frontend would fail at import
    time with a traceback far from the kernel author's intent.

    ## Example
    ```python
    def kernel(x, y)
        y[:] = x + 1
    ```

    ## Use instead
    ```python
    def kernel(x, y):
        y[:] = x + 1
    ```

    ## Fix safety
    No fix is offered.

    ## Exit status
    A file that does not parse makes ``pypto-lint`` exit 2 only when no other file could
    be checked; otherwise it is an ordinary diagnostic (exit 1).
    """

    code = "PTO000"
    name = "syntax-error"
    summary = "the file does not parse as Python"
    VALID = ["x = 1\n", ""]
    INVALID = [
        Case("def kernel(x, y)\n    y[:] = x + 1\n", line=1, col=17),
        Case("x = (1,\n", line=1),
        Case("def k():\n\treturn 1\n        return 2\n", line=3),
    ]

    def check(self, ctx: LintContext):
        return ()  # reported by the engine when parsing fails


RULE = SyntaxErrorRule
