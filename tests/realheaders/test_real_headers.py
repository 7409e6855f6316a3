"""Emitted kernels against the real Ascend C API (pypto_ast/emit/realheaders.py, docs/realheaders.md).

Every kernel TU of the suite's programs (scripts/check_real_headers.py's sources) is compiled
against a checkout of github.com/mirror-cann/asc-devkit.  CI has no network to fetch one, so these
run only with

    PYPTO_AST_ASC_DEVKIT=/path/to/asc-devkit python -m pytest -m realheaders tests/realheaders

and skip, saying so, without it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from pypto_ast.emit import realheaders

from support import needs_cxx

ROOT = Path(__file__).resolve().parents[2]
DEVKIT = os.environ.get(realheaders.DEVKIT_ENV)
pytestmark = [pytest.mark.realheaders, needs_cxx, pytest.mark.skipif(not DEVKIT, reason=realheaders.SKIP_REASON)]

_spec = importlib.util.spec_from_file_location("check_real_headers", ROOT / "scripts" / "check_real_headers.py")
check_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_script)

# the smallest kernel of each core: the stand-ins must let the devkit parse for both
VECTOR_KERNEL = '''#include "kernel_operator.h"
extern "C" __global__ __aicore__ void copy(GM_ADDR src, GM_ADDR dst)
{
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    AscendC::GlobalTensor<float> gs, gd;
    gs.SetGlobalBuffer((__gm__ float*)src, 64);
    gd.SetGlobalBuffer((__gm__ float*)dst, 64);
    AscendC::LocalTensor<float> t = q.AllocTensor<float>();
    AscendC::DataCopy(t, gs, 64);
    AscendC::Exp(t, t, 64);
    AscendC::DataCopy(gd, t, 64);
    q.FreeTensor(t);
}
'''
CUBE_KERNEL = '''#include "kernel_operator.h"
extern "C" __global__ __aicore__ void mm(GM_ADDR c)
{
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::CO1, 1> q;
    pipe.InitBuffer(q, 1, 1024);
    AscendC::LocalTensor<float> acc = q.AllocTensor<float>();
    AscendC::GlobalTensor<float> gc;
    gc.SetGlobalBuffer((__gm__ float*)c, 256);
    AscendC::FixpipeParamsV220 params;
    AscendC::Fixpipe(gc, acc, params);
    q.FreeTensor(acc);
}
'''


@pytest.fixture(scope="module")
def checker():
    with realheaders.Checker(DEVKIT) as c:
        yield c


@pytest.mark.parametrize("core, text", [("AIV", VECTOR_KERNEL), ("AIC", CUBE_KERNEL)], ids=["AIV", "AIC"])
def test_the_stand_ins_let_the_devkit_compile_a_kernel_of_each_core(checker, core, text):
    assert checker.check(realheaders.Unit("k.cpp", core, text)) is None


@pytest.mark.parametrize("wrong, says", [
    ("AscendC::Exp(t, t);", "no matching function for call to 'Exp"),  # the count is missing
    ("AscendC::Exponent(t, t, 64);", "'Exponent' is not a member of 'AscendC'"),
    ("AscendC::Duplicate(t, INFINITY, 64);", 'attempt to use poisoned "INFINITY"'),
], ids=["arity", "name", "cmath"])
def test_a_kernel_the_api_rejects_fails_with_the_compilers_message(checker, wrong, says):
    text = VECTOR_KERNEL.replace("AscendC::Exp(t, t, 64);", wrong)
    failure = checker.check(realheaders.Unit("bad.cpp", "AIV", text))
    assert failure is not None and failure.name == "bad.cpp"
    assert says in failure.messages.replace("\u2018", "'").replace("\u2019", "'")
    assert "bad.cpp:12:" in failure.messages  # located in the kernel, under its own name


@pytest.mark.parametrize("source", check_script.SOURCES)
def test_every_kernel_tu_of_the_suite_compiles_against_the_real_headers(checker, source):
    units = check_script.collect(source)
    assert units, f"no kernel TUs from {source}"
    failures = checker.check_all(units)
    report = "\n\n".join(f"{f.name} ({f.core}):\n" + _errors(f.messages) for f in failures)
    assert not failures, f"{len(failures)} of {len({u.key for u in units})} kernel TUs do not compile:\n{report}"


def _errors(messages: str, limit: int = 12) -> str:
    """The compiler's error lines and what each was required from, not the include chains."""
    lines = [ln for ln in messages.splitlines() if "error:" in ln or "required from here" in ln]
    return "\n".join(lines[:limit] + ([f"... {len(lines) - limit} more"] if len(lines) > limit else []))
