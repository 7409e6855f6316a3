"""Differential tests: every kernel in ``kernels/`` runs through the lowering and the torch
reference interpreter and must match its own plain-torch ``reference(**inputs)``.

Each kernel module is real PyPTO (``import pypto``, ``frontend.jit`` style, or the
``pypto_ast.jit`` return convention) with ``example_inputs()``, ``reference(**inputs)`` and
optionally ``TOLERANCE = (rtol, atol)``. The printed IR of each kernel must also survive
``print -> parse -> print`` unchanged.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pypto_ast import live, pipeline
from pypto_ast.runner import run_and_compare

KERNELS = sorted((Path(__file__).parent / "kernels").glob("k*.py"))
HAVE_PARSER = importlib.util.find_spec("pypto_ast.ir.parser") is not None


def _load(path: Path):
    module = live.load_module(str(path))
    return module, live.find_kernel(module)


@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_interp_matches_reference(path):
    module, kernel = _load(path)
    lines: list[str] = []
    code = run_and_compare(module, kernel, module.example_inputs(), backend="interp", echo=lines.append)
    assert code == 0, "\n".join(lines)


@pytest.mark.skipif(not HAVE_PARSER, reason="pypto_ast.ir.parser is not there yet")
@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_printed_ir_roundtrips(path):
    from pypto_ast.ir.parser import parse_program

    module, kernel = _load(path)
    program = pipeline.lower(kernel, module.example_inputs())
    text = pipeline.emit(program, "ir")
    parsed = parse_program(text)
    assert pipeline.emit(parsed, "ir") == text
    assert parsed == program


def test_enough_kernels():
    assert len(KERNELS) >= 32
