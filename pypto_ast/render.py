"""Turning diagnostics into text: the human formats, the machine formats and ``--diff``.

Pure functions of (diagnostics, sources): no I/O, no terminal detection (the CLI decides
colour), no import of the rule registry (SARIF takes the rule descriptors as an argument),
so every format can be pinned by a test.  Columns are 0-based inside Diagnostic and shown
1-based everywhere here, like ruff; end columns are exclusive.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections import Counter
from typing import Iterable, Mapping, Protocol, Sequence
from urllib.parse import quote

from . import __version__
from .diagnostics import Diagnostic, Pos, Severity

FORMATS = ("full", "concise", "json", "json-lines", "github", "sarif")

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_BLUE = "\x1b[1;34m"
_CYAN = "\x1b[1;36m"
_LEVEL_COLOUR = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m", Severity.BUG: "\x1b[1;35m"}
_TAB = "    "
# the line breaks the tokenizer counts (str.splitlines also splits on \f, \x1c, \u2028 ...)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class RuleInfo(Protocol):
    """What SARIF needs from a rule (``pypto_ast.analysis.rule.Rule`` satisfies it)."""

    code: str
    name: str
    summary: str

    def docs(self) -> str: ...


def rule_url(code: str) -> str:
    return f"docs/rules.md#{code.lower()}"


def render(
    fmt: str,
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, str | None],
    *,
    color: bool = False,
    rules: Iterable[RuleInfo] = (),
) -> str:
    """Render in one of FORMATS; the result ends with a newline unless it is empty."""
    ordered = sorted(diagnostics, key=Diagnostic.sort_key)
    if fmt == "full":
        split: dict = {}  # each source split into lines once, not once per diagnostic
        for d in ordered:
            if d.span.path not in split:
                source = sources.get(d.span.path)
                split[d.span.path] = _LINE_BREAK.split(source) if source is not None else []
        return "".join(render_full(d, None, color=color, lines=split[d.span.path]) + "\n" for d in ordered)
    if fmt == "concise":
        return "".join(render_concise(d, color=color) + "\n" for d in ordered)
    if fmt == "json":
        return json.dumps([to_json(d) for d in ordered], indent=2, ensure_ascii=False) + "\n"
    if fmt == "json-lines":
        return "".join(json.dumps(to_json(d), ensure_ascii=False) + "\n" for d in ordered)
    if fmt == "github":
        return "".join(render_github(d) + "\n" for d in ordered)
    if fmt == "sarif":
        return json.dumps(to_sarif(ordered, rules), indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown output format {fmt!r}")


# -- human formats -----------------------------------------------------------------------
def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color and text else text


def _where(path: str, pos: Pos) -> str:
    return f"{path}:{pos.line}:{pos.col + 1}"


def render_concise(diag: Diagnostic, *, color: bool = False) -> str:
    code = _paint(diag.code, _LEVEL_COLOUR[diag.severity], color)
    return f"{_paint(_where(diag.span.path, diag.span.start), _BOLD, color)}: {code} {diag.message}"


LONG_LINE = 1000  # source lines longer than this are shown as a window around the caret
_CONTEXT = 100  # characters of that window before the caret and after its end


def render_full(diag: Diagnostic, source: str | None, *, color: bool = False, lines: list | None = None) -> str:
    """ruff's layout: header, ``-->`` location, one source line with carets, then help.
    ``lines``: ``source`` already split at its line breaks (then ``source`` is not read)."""
    level = _LEVEL_COLOUR[diag.severity]
    start, end = diag.span.start, diag.span.end
    out = [f"{_paint(f'{diag.severity.value}[{diag.code}]', level, color)} {_paint(diag.message, _BOLD, color)}"]
    if lines is None:
        lines = _LINE_BREAK.split(source) if source is not None else []
    width = len(str(start.line))
    pad = " " * width
    out.append(f"{pad}{_paint('-->', _BLUE, color)} {_where(diag.span.path, start)}")
    if 0 < start.line <= len(lines):
        text = lines[start.line - 1]
        stop = end.col if end.line == start.line else len(text)
        col = start.col
        if len(text) > LONG_LINE:  # a window around the caret, not the whole (1 MB) line per diagnostic
            lo = max(0, col - _CONTEXT)
            hi = min(len(text), min(max(stop, col + 1), col + 2 * _CONTEXT) + _CONTEXT)
            text = ("\u2026" if lo > 0 else "") + text[lo:hi] + ("\u2026" if hi < len(text) else "")
            shift = lo - (1 if lo > 0 else 0)
            col, stop = col - shift, min(stop, hi) - shift
        lead = _display_width(text[:col])
        count = max(1, _display_width(text[col : max(stop, col)]))
        bar = _paint("|", _BLUE, color)
        out.append(f"{pad} {bar}")
        out.append(f"{_paint(str(start.line), _BLUE, color)} {bar} {text.replace(chr(9), _TAB)}".rstrip())
        out.append(f"{pad} {bar} {' ' * lead}{_paint('^' * count, level, color)}")
    for hint in _hints(diag):
        out.append(f"{_paint('help', _CYAN, color)}: {hint}")
    for note in diag.notes:
        where = f" ({_where(note.span.path, note.span.start)})" if note.span else ""
        out.append(f"{_paint('note', _CYAN, color)}: {note.message}{where}")
    return "\n".join(out) + "\n"


def _hints(diag: Diagnostic) -> list[str]:
    hints = [diag.help] if diag.help else []
    if diag.fix is not None and diag.fix.title and diag.fix.title != diag.help:
        hints.append(diag.fix.title)
    return hints


def _display_width(text: str) -> int:
    """Terminal cells: tabs as four, wide (CJK) characters as two, combining marks as none."""
    width = 0
    for ch in text:
        if ch == "\t":
            width += len(_TAB)
        elif unicodedata.combining(ch):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            width += 2
        else:
            width += 1
    return width


# -- machine formats ---------------------------------------------------------------------
def _loc(pos: Pos) -> dict:
    return {"row": pos.line, "column": pos.col + 1}


def to_json(diag: Diagnostic) -> dict:
    """One diagnostic with ruff's JSON field names (plus name, severity and help)."""
    fix = None
    if diag.fix is not None:
        fix = {
            "applicability": diag.fix.applicability.value,
            "message": diag.fix.title,
            "edits": [
                {"content": e.content, "location": _loc(e.start), "end_location": _loc(e.end)}
                for e in diag.fix.edits
            ],
        }
    return {
        "code": diag.code,
        "name": diag.name,
        "message": diag.message,
        "filename": diag.span.path,
        "location": _loc(diag.span.start),
        "end_location": _loc(diag.span.end),
        "fix": fix,
        "url": rule_url(diag.code),
        "severity": diag.severity.value,
        "help": diag.help,
    }


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diag: Diagnostic) -> str:
    """A GitHub Actions workflow command, so findings show up as annotations on the PR."""
    level = "warning" if diag.severity is Severity.WARNING else "error"
    s, e = diag.span.start, diag.span.end
    props = ",".join(
        f"{k}={_gh_prop(str(v))}"
        for k, v in (
            ("title", f"pypto-lint ({diag.code})"),
            ("file", diag.span.path),
            ("line", s.line),
            ("col", s.col + 1),
            ("endLine", e.line),
            ("endColumn", e.col + 1),
        )
    )
    return f"::{level} {props}::{_gh_data(f'{diag.code} {diag.message}')}"


def _uri(path: str) -> str:
    """Relative paths stay relative (to the checkout); absolute ones become file:// URIs."""
    posix = path.replace("\\", "/")
    if posix.startswith("/"):
        return "file://" + quote(posix)
    if len(posix) > 2 and posix[1] == ":" and posix[2] == "/":  # C:/...
        return "file:///" + quote(posix)
    return quote(posix)


def _sarif_level(severity: Severity) -> str:
    return "warning" if severity is Severity.WARNING else "error"


def to_sarif(diagnostics: Sequence[Diagnostic], rules: Iterable[RuleInfo]) -> dict:
    """SARIF 2.1.0 with one run; codes without a registered rule (PTO999) get a stub descriptor."""
    descriptors = []
    for rule in rules:
        entry = {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.docs() or rule.summary},
        }
        entry["properties"] = {"fix": getattr(rule, "fix_availability", "none")}
        descriptors.append(entry)
    known = {d["id"] for d in descriptors}
    for diag in diagnostics:
        if diag.code not in known:
            known.add(diag.code)
            descriptors.append(
                {"id": diag.code, "name": diag.name, "shortDescription": {"text": diag.name}}
            )
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    results = []
    for diag in diagnostics:
        s, e = diag.span.start, diag.span.end
        results.append(
            {
                "ruleId": diag.code,
                "ruleIndex": index[diag.code],
                "level": _sarif_level(diag.severity),
                "message": {"text": diag.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": _uri(diag.span.path)},
                            "region": {
                                "startLine": s.line,
                                "startColumn": s.col + 1,
                                "endLine": e.line,
                                "endColumn": e.col + 1,
                            },
                        }
                    }
                ],
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pypto-lint",
                        "version": __version__,
                        "informationUri": "https://github.com/pypto-ast/pypto-ast",
                        "rules": descriptors,
                    }
                },
                "results": results,
            }
        ],
    }


# -- statistics and diffs ----------------------------------------------------------------
def render_statistics(diagnostics: Sequence[Diagnostic], *, unsafe: bool = False, as_json: bool = False) -> str:
    """Counts per code, most frequent first, with how many of each ``--fix`` would repair."""
    counts = Counter(d.code for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix_applies(unsafe))
    names = {d.code: d.name for d in diagnostics}
    rows = sorted(counts, key=lambda c: (-counts[c], c))
    if as_json:
        data = [
            {"code": c, "name": names[c], "count": counts[c], "fixable": fixable[c]} for c in rows
        ]
        return json.dumps(data, indent=2) + "\n"
    if not rows:
        return ""
    cw = max(len(str(counts[c])) for c in rows)
    kw = max(len(c) for c in rows)
    nw = max(len(names[c]) for c in rows)
    out = []
    for c in rows:
        fix = f"{fixable[c]} fixable" if fixable[c] else ""
        out.append(f"{counts[c]:>{cw}}  {c:<{kw}}  {names[c]:<{nw}}  {fix}".rstrip() + "\n")
    return "".join(out)


def unified_diff(old: str, new: str, path: str) -> str:
    """A ``git apply``-able diff of one file, marking a missing final newline like diff(1)."""
    if old == new:
        return ""
    out = []
    for line in difflib.unified_diff(
        old.splitlines(True), new.splitlines(True), fromfile=path, tofile=path
    ):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)
