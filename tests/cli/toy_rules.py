"""Rules with fixed, trivial behaviour so CLI tests do not depend on the real rules.

They run through the real engine and the real fixer: ``install`` adds them to the rule
list the engine iterates.  A line containing ``BAD`` gets a safe fix to ``GOOD``,
``RISKY`` an unsafe fix to ``CAREFUL``, ``UGLY`` no fix, and ``CRASH`` makes the rule
raise (an internal error, PTO999).  Usable from a subprocess too:
``python -c "import toy_rules; toy_rules.install(); toy_rules.main()" ARGS``.
"""

from __future__ import annotations

from typing import ClassVar

from pypto_ast.analysis.rule import Rule
from pypto_ast.diagnostics import Applicability, Edit, Fix, Pos, Span


class _Word(Rule):
    word: ClassVar[str]
    replacement: ClassVar[str | None] = None
    applicability: ClassVar[Applicability] = Applicability.SAFE

    def check(self, ctx):
        for number, line in enumerate(ctx.source.lines, 1):
            col = line.find(self.word)
            if col < 0:
                continue
            span = Span(ctx.source.path, Pos(number, col), Pos(number, col + len(self.word)))
            fix = None
            if self.replacement is not None:
                edit = Edit(span.start, span.end, self.replacement)
                fix = Fix(f"replace with `{self.replacement}`", self.applicability, (edit,))
            yield self.diagnostic(span, f"`{self.word}` found", fix=fix)


class ToyBad(_Word):
    """Flags BAD; the safe fix writes GOOD."""

    code, name, summary = "PTO901", "toy-bad", "BAD is bad"
    fix_availability = "safe"
    word, replacement = "BAD", "GOOD"


class ToyRisky(_Word):
    """Flags RISKY; the unsafe fix writes CAREFUL."""

    code, name, summary = "PTO902", "toy-risky", "RISKY is risky"
    fix_availability = "unsafe"
    word, replacement, applicability = "RISKY", "CAREFUL", Applicability.UNSAFE


class ToyUgly(_Word):
    """Flags UGLY; no fix."""

    code, name, summary = "PTO903", "toy-ugly", "UGLY has no fix"
    word = "UGLY"


class ToyCrash(Rule):
    """Raises on files containing CRASH."""

    code, name, summary = "PTO904", "toy-crash", "crashes"

    def check(self, ctx):
        if "CRASH" in ctx.source.text:
            raise RuntimeError("toy rule crashed on purpose")
        return iter(())


TOYS = [ToyBad(), ToyRisky(), ToyUgly(), ToyCrash()]


def install(patch=setattr) -> None:
    """Add the toy rules to the engine and the registry; pass ``monkeypatch.setattr`` as
    ``patch`` in tests so they are removed afterwards."""
    from pypto_ast.analysis import engine, registry

    patch(engine, "RULES", list(engine.RULES) + TOYS)
    patch(registry, "RULES", list(registry.RULES) + TOYS)
    patch(registry, "BY_CODE", {**registry.BY_CODE, **{r.code: r for r in TOYS}})


def main() -> None:
    from pypto_ast.cli.lint import main as cli_main

    cli_main()
