"""``# noqa`` suppressions, spelled as ruff users already write them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..diagnostics import Diagnostic

_LINE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)
_FILE = re.compile(r"#\s*pypto-lint\s*:\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)

ALL = frozenset({"*"})


def _codes(match: re.Match) -> frozenset:
    codes = match.group("codes")
    if not codes:
        return ALL
    return frozenset(c.strip().upper() for c in codes.split(","))


@dataclass
class Suppressions:
    file_codes: frozenset
    by_line: dict

    @classmethod
    def scan(cls, lines: list[str]) -> "Suppressions":
        file_codes: set = set()
        by_line: dict = {}
        for number, text in enumerate(lines, 1):
            if "noqa" not in text and "NOQA" not in text and "Noqa" not in text:
                continue
            fmatch = _FILE.search(text)
            if fmatch:
                file_codes |= _codes(fmatch)
                continue
            match = _LINE.search(text)
            if match:
                by_line[number] = _codes(match)
        return cls(frozenset(file_codes), by_line)

    def suppresses(self, diag: Diagnostic) -> bool:
        if _covers(self.file_codes, diag.code):
            return True
        for line in {diag.span.start.line, diag.span.end.line}:
            if _covers(self.by_line.get(line, frozenset()), diag.code):
                return True
        return False


def _covers(codes: frozenset, code: str) -> bool:
    return "*" in codes or code in codes
