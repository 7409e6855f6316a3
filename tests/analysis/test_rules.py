"""Tests generated from every rule's VALID and INVALID cases (Fixit-style)."""

from __future__ import annotations

import dataclasses

import pytest

from pypto_ast.analysis.engine import lint_text
from pypto_ast.analysis.registry import RULES
from pypto_ast.analysis.rule import Case, Valid
from pypto_ast.settings import Settings
from pypto_ast.transforms.fixer import fix_text


def _settings(rule, overrides) -> Settings:
    return dataclasses.replace(Settings(select=(rule.code,)), **overrides)


def _valid_cases():
    for rule in RULES:
        for i, case in enumerate(rule.VALID):
            case = case if isinstance(case, Valid) else Valid(case)
            yield pytest.param(rule, case, id=f"{rule.code}-VALID-{i}")


def _invalid_cases():
    for rule in RULES:
        for i, case in enumerate(rule.INVALID):
            yield pytest.param(rule, case, id=f"{rule.code}-INVALID-{i}")


@pytest.mark.parametrize("rule,case", list(_valid_cases()))
def test_valid(rule, case: Valid):
    result = lint_text(case.code, "case.py", _settings(rule, case.settings))
    assert [d for d in result.diagnostics if d.code == rule.code] == []
    assert result.failure is None, result.failure


@pytest.mark.parametrize("rule,case", list(_invalid_cases()))
def test_invalid(rule, case: Case):
    settings = _settings(rule, case.settings)
    result = lint_text(case.code, "case.py", settings)
    assert result.failure is None, result.failure
    hits = [d for d in result.diagnostics if d.code == rule.code]
    assert hits, f"{rule.code} did not fire on:\n{case.code}"
    first = hits[0]
    assert first.name == rule.name
    if case.line is not None:
        assert first.span.start.line == case.line, first
    if case.col is not None:
        assert first.span.start.col + 1 == case.col, first
    if case.fixed is not None:
        outcome = fix_text(case.code, "case.py", settings, unsafe=case.unsafe)
        assert outcome.text == case.fixed
        assert outcome.converged
        assert not [d for d in outcome.result.diagnostics if d.code == rule.code and d.fixable]
        again = fix_text(outcome.text, "case.py", settings, unsafe=case.unsafe)
        assert again.text == outcome.text and again.applied == 0  # idempotent
    elif rule.code != "PTO000":
        outcome = fix_text(case.code, "case.py", settings, unsafe=case.unsafe)
        assert outcome.applied == 0, "a case without `fixed=` must not be changed by --fix"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_metadata(rule):
    docs = rule.docs()
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
        assert heading in docs, f"{rule.code} docs lack {heading!r}"
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.summary and rule.INVALID
    has_fix = any(c.fixed is not None for c in rule.INVALID)
    assert has_fix == (rule.fix_availability in ("safe", "unsafe", "sometimes"))


def test_codes_are_unique_and_ordered():
    codes = [r.code for r in RULES]
    assert codes == sorted(set(codes))
