"""The NPU control program of every example and differential kernel compiles against CANN's real ACL
headers (``g++ -fsyntax-only -Wall -Wextra -Werror``; pypto_ast/emit/aclheaders.py), and so does its
runtime.  The headers come from torch_npu's wheel: ``.ci/run`` downloads it and sets
``PYPTO_AST_ACL_INCLUDE``; without them these tests skip, saying how to get them."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from pypto_ast import live, pipeline
from pypto_ast.emit import aclheaders

from support import needs_cxx

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = aclheaders.find_acl_include()
pytestmark = [needs_cxx, pytest.mark.skipif(INCLUDE is None, reason=aclheaders.SKIP_REASON)]
PROGRAMS = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "differential" / "kernels").glob("k*.py"))


@pytest.fixture(scope="module")
def checker():
    with aclheaders.AclChecker(INCLUDE) as c:
        yield c


def npu_controls(path: Path) -> list:
    """control_npu.cpp of each program the module's kernel lowers to and emits (its own inputs)."""
    out = []
    with contextlib.redirect_stdout(io.StringIO()):
        module = live.load_module(str(path))
        inputs = module.example_inputs() if hasattr(module, "example_inputs") else None
        with contextlib.suppress(pipeline.PipelineError):
            program = pipeline.lower(live.find_kernel(module), inputs) if inputs is not None \
                else pipeline.lower_file(str(path))
            out.append(pipeline.emit(program, "ascendc", npu=True)["control_npu.cpp"])
    return out


def test_the_runtime_compiles(checker):
    assert checker.check_runtime() is None


def test_every_control_program_compiles(checker):
    checked, failures = 0, []
    for path in PROGRAMS:
        for text in npu_controls(path):
            checked += 1
            problem = checker.check(f"{path.stem}_control_npu.cpp", text)
            if problem:
                failures.append(f"{path.relative_to(ROOT)}:\n{problem}")
    assert checked >= 40, f"only {checked} programs emitted"
    assert not failures, "\n".join(failures)


def test_a_wrong_acl_call_is_caught(checker):
    """The check has teeth: an ACL call with the wrong arguments does not compile."""
    bad = '#include "pypto_npu_runtime.h"\nvoid f(void* s) { aclrtSynchronizeStream(s, 1, 2); }\n'
    assert "aclrtSynchronizeStream" in checker.check("bad.cpp", bad)
