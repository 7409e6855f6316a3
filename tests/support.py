"""Helpers several test folders share (``tests/`` is on sys.path: see conftest.py)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from pypto_ast import knobs

# the host backend compiles with g++ (or PYPTO_AST_CXX); without one its tests skip, saying why
needs_cxx = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None,
    reason=f"C++ compiler {knobs.cxx!r} not on PATH (set PYPTO_AST_CXX): the host backend needs one",
)
BACKENDS = ["interp", pytest.param("host", marks=needs_cxx)]


def write(path: Path, source: str) -> Path:
    """Write ``source`` dedented (test kernels are indented in their test) and return ``path``."""
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    """1-based number of the first line of ``path`` that contains ``needle``."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in text:
            return number
    raise AssertionError(f"{needle!r} not in {path}")
