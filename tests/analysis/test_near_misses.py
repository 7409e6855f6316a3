"""Near misses of the false alarms found on the official PyPTO kernels: each file in
``near_miss/`` names (first line) the codes it must not raise, or the one it must."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto_ast.analysis.engine import lint_text
from pypto_ast.settings import Settings

HERE = Path(__file__).parent / "near_miss"
FILES = sorted(HERE.glob("*.py"))


def _codes(path: Path):
    head = path.read_text().splitlines()[0]
    kind, _, codes = head.lstrip("# ").partition(":")
    return kind, codes.split()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_near_miss(path):
    kind, codes = _codes(path)
    result = lint_text(path.read_text(), str(path), Settings())
    assert result.failure is None, result.failure
    found = {d.code for d in result.diagnostics}
    if kind == "near-miss":
        assert not found & set(codes), [(d.code, d.span.start.line, d.message) for d in result.diagnostics]
    else:
        assert set(codes) <= found, sorted(found)


def test_every_class_has_a_file():
    assert len(FILES) >= 9
