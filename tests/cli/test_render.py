"""Renderers as pure functions: exact text for each format and the awkward spans."""

from __future__ import annotations

import json

from pypto_ast.diagnostics import Applicability, Diagnostic, Edit, Fix, Note, Pos, Severity, Span
from pypto_ast.render import (
    render, render_full, render_github, render_statistics, to_sarif, unified_diff,
)


def diag(line, col, end_line, end_col, *, code="PTO001", path="k.py", severity=Severity.ERROR, **kw):
    span = Span(path, Pos(line, col), Pos(end_line, end_col))
    return Diagnostic(code, "output-rebind", "output `y` is rebound", span, severity, **kw)


SOURCE = "def k(x, y):\n    y = x + 1\n    return y\n"


def test_full_single_line_with_fix_title():
    fix = Fix("write into the output instead: `y[:] = x + 1`", Applicability.SAFE, ())
    text = render_full(diag(2, 4, 2, 5, fix=fix), SOURCE)
    assert text == (
        "error[PTO001] output `y` is rebound\n"
        " --> k.py:2:5\n"
        "  |\n"
        "2 |     y = x + 1\n"
        "  |     ^\n"
        "help: write into the output instead: `y[:] = x + 1`\n"
    )


def test_full_help_and_distinct_fix_title_both_shown():
    fix = Fix("rewrite as a slice write", Applicability.SAFE, ())
    text = render_full(diag(2, 4, 2, 5, help="outputs are written in place", fix=fix), SOURCE)
    assert text.endswith("help: outputs are written in place\nhelp: rewrite as a slice write\n")


def test_full_multiline_span_underlines_rest_of_first_line():
    text = render_full(diag(1, 0, 3, 12), SOURCE)
    assert "1 | def k(x, y):\n  | ^^^^^^^^^^^^\n" in text


def test_full_empty_span_gets_one_caret():
    text = render_full(diag(2, 8, 2, 8), SOURCE)
    assert "  |         ^\n" in text


def test_full_span_past_end_of_line():
    text = render_full(diag(1, 40, 1, 40), SOURCE)
    assert "  | " + " " * 12 + "^\n" in text  # just after the 12 characters of line 1


def test_full_gutter_width_follows_line_number():
    source = "\n" * 99 + "y = 1\n"
    text = render_full(diag(100, 0, 100, 1), source)
    assert text.splitlines()[1:5] == ["   --> k.py:100:1", "    |", "100 | y = 1", "    | ^"]


def test_full_tabs_and_wide_characters_align_carets():
    source = "\tx = '数据' + y\n"
    text = render_full(diag(1, 12, 1, 13), source)
    lines = text.splitlines()
    assert lines[3] == "1 |     x = '数据' + y"
    assert lines[4] == "  |                  ^"  # 4 (tab) + 10 cells before `y`


def test_full_without_source_still_locates():
    text = render_full(diag(2, 4, 2, 5), None)
    assert text == "error[PTO001] output `y` is rebound\n --> k.py:2:5\n"


def test_full_crlf_source():
    text = render_full(diag(2, 4, 2, 5), SOURCE.replace("\n", "\r\n"))
    assert "2 |     y = x + 1\n" in text


def test_full_line_numbers_ignore_form_feed():
    """Only \\n, \\r\\n and \\r end lines for the tokenizer; str.splitlines would also split \\f."""
    text = render_full(diag(2, 0, 2, 1), "x = 1\x0c\ny = 2\n")
    assert "2 | y = 2\n" in text


def test_full_bug_severity():
    text = render_full(diag(1, 0, 1, 0, code="PTO999", severity=Severity.BUG), SOURCE)
    assert text.startswith("bug[PTO999] output `y` is rebound\n")


def test_full_notes():
    note = Note("`y` is declared here", Span("k.py", Pos(1, 9), Pos(1, 10)))
    text = render_full(diag(2, 4, 2, 5, notes=(note,)), SOURCE)
    assert text.endswith("note: `y` is declared here (k.py:1:10)\n")


def test_full_colour():
    text = render_full(diag(2, 4, 2, 5), SOURCE, color=True)
    assert "\x1b[1;31merror[PTO001]\x1b[0m" in text
    assert "\x1b[1;31m^\x1b[0m" in text


def test_render_sorts_and_separates():
    a, b = diag(2, 4, 2, 5), diag(1, 0, 1, 3)
    text = render("full", [a, b], {"k.py": SOURCE})
    assert text.index("k.py:1:1") < text.index("k.py:2:5")
    assert "\n\nerror[PTO001]" in text


def test_concise():
    assert render("concise", [diag(2, 4, 2, 5)], {}) == "k.py:2:5: PTO001 output `y` is rebound\n"


def test_github_escapes():
    d = Diagnostic("PTO001", "n", "100% wrong\nsee: docs, page 2", Span("a,b:c.py", Pos(1, 0), Pos(1, 2)))
    assert render_github(d) == (
        "::error title=pypto-lint (PTO001),file=a%2Cb%3Ac.py,line=1,col=1,endLine=1,endColumn=3"
        "::PTO001 100%25 wrong%0Asee: docs, page 2"
    )


def test_github_warning_level():
    assert render_github(diag(1, 0, 1, 1, severity=Severity.WARNING)).startswith("::warning ")


def test_json_fix_edits():
    edit = Edit(Pos(2, 4), Pos(2, 5), "y[:]")
    d = diag(2, 4, 2, 5, fix=Fix("slice", Applicability.UNSAFE, (edit,)), help="h")
    (data,) = json.loads(render("json", [d], {}))
    assert data["fix"] == {
        "applicability": "unsafe",
        "message": "slice",
        "edits": [{"content": "y[:]", "location": {"row": 2, "column": 5}, "end_location": {"row": 2, "column": 6}}],
    }
    assert data["help"] == "h"
    assert data["url"] == "docs/rules.md#pto001"


class FakeRule:
    code, name, summary, fix_availability = "PTO001", "output-rebind", "outputs rebound", "safe"

    def docs(self):
        return "Long docs."

    def url(self):
        return "https://example.invalid/PTO001"


def test_sarif_rules_and_unknown_codes():
    bug = diag(1, 0, 1, 0, code="PTO999", severity=Severity.BUG, path="/abs/k.py")
    doc = to_sarif([diag(2, 4, 2, 5), bug], [FakeRule()])
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["rules"][0] == {
        "id": "PTO001",
        "name": "output-rebind",
        "shortDescription": {"text": "outputs rebound"},
        "fullDescription": {"text": "Long docs."},
        "properties": {"fix": "safe"},
    }
    assert driver["rules"][1]["id"] == "PTO999"
    results = doc["runs"][0]["results"]
    assert [r["ruleIndex"] for r in results] == [0, 1]
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "file:///abs/k.py"
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "k.py"


def test_applicable():
    safe = diag(1, 0, 1, 1, fix=Fix("t", Applicability.SAFE, (Edit(Pos(1, 0), Pos(1, 1), "z"),)))
    unsafe = diag(1, 0, 1, 1, fix=Fix("t", Applicability.UNSAFE, (Edit(Pos(1, 0), Pos(1, 1), "z"),)))
    display = diag(1, 0, 1, 1, fix=Fix("t", Applicability.DISPLAY_ONLY, ()))
    assert safe.fix_applies(False) and not unsafe.fix_applies(False) and unsafe.fix_applies(True)
    assert not display.fix_applies(True) and not diag(1, 0, 1, 1).fix_applies(True)


def test_statistics_empty():
    assert render_statistics([]) == ""


def test_unified_diff_marks_missing_newline():
    assert unified_diff("x = 1", "x = 2", "k.py") == (
        "--- k.py\n+++ k.py\n@@ -1 +1 @@\n-x = 1\n\\ No newline at end of file\n+x = 2\n\\ No newline at end of file\n"
    )
    assert unified_diff("same\n", "same\n", "k.py") == ""
