"""Properties of the linter over generated kernels and generated broken Python:
no crash, fixes idempotent and converging, untouched files byte-for-byte unchanged.

Run longer with HYPOTHESIS_PROFILE=long.
"""

from __future__ import annotations

import ast

from hypothesis import given
from hypothesis import strategies as st
from kernelgen import kernels, mutated

from pypto_ast.analysis.engine import lint_bytes, lint_text
from pypto_ast.diagnostics import Severity
from pypto_ast.settings import Settings
from pypto_ast.transforms.fixer import fix_text, select_fixes

SETTINGS = Settings()


def _no_bug(result):
    assert result.failure is None, result.failure
    assert not [d for d in result.diagnostics if d.severity is Severity.BUG]


@given(kernels())
def test_generated_kernels_lint_and_fix(source):
    result = lint_text(source, "k.py", SETTINGS)
    _no_bug(result)
    assert result.parsed
    for unsafe in (False, True):
        outcome = fix_text(source, "k.py", SETTINGS, unsafe=unsafe)
        _no_bug(outcome.result)
        assert outcome.converged
        ast.parse(outcome.text)
        assert not select_fixes(outcome.result.diagnostics, unsafe)
        again = fix_text(outcome.text, "k.py", SETTINGS, unsafe=unsafe)
        assert again.text == outcome.text and again.applied == 0
        if outcome.applied == 0:
            assert outcome.text == source  # byte-exact when nothing was fixed


@given(mutated())
def test_broken_python_never_crashes(source):
    result = lint_text(source, "m.py", SETTINGS)
    _no_bug(result)
    outcome = fix_text(source, "m.py", SETTINGS, unsafe=True)
    _no_bug(outcome.result)
    if outcome.applied == 0:
        assert outcome.text == source


@given(st.text(max_size=300))
def test_arbitrary_text_never_crashes(text):
    _no_bug(lint_text(text, "t.py", SETTINGS))


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data):
    result = lint_bytes(data, "b.py", SETTINGS)
    _no_bug(result)


@given(kernels(), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_line_endings_and_bom_survive_fixes(source, newline, bom):
    text = source.replace("\n", newline)
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    result = lint_bytes(data, "k.py", SETTINGS)
    _no_bug(result)
    outcome = fix_text(result.text, "k.py", SETTINGS)
    if newline == "\r\n":
        assert outcome.text.count("\n") == outcome.text.count("\r\n")
