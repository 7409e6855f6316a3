"""PTO114 (pypto_ast.rounding_ties): a drop-in test that fails after its kernel rounded values lying
at a tie between two integers gets a warning at the cast, on both backends; a kernel that meets
no tie, or a test that passes, gets none.  Kernels of our own in the models' style: a symmetric
int8-style quantization through ``CAST_RINT`` to int32, a golden that sums in another order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import rounding_ties  # noqa: E402
from support import BACKENDS, line_of, write  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

QUANT_IMPL = """
import pypto


def quant_rows(x, tiles):
    pypto.set_vec_tile_shapes(tiles[0], tiles[1])
    scaled = pypto.mul(x, 4.0)
    q = pypto.cast(scaled, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
    return q


@pypto.frontend.jit
def quant_kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_INT32)):
    out[:] = quant_rows(x, [8, 64])
"""

QUANT_TEST = """
import torch

from quant_impl import quant_kernel


def draw(mode):
    torch.manual_seed(7)
    x = torch.empty(8, 64).uniform_(-20, 20)
    x = (x * 4).round() / 4 + 0.0625          # far from every tie of x * 4
    if mode == "large":
        x[1] = torch.arange(64) * 4097.0 + 2.0 ** 20   # x * 4 past 2^22: no tie on the fp32 grid there
    if mode == "near":
        # 2.625 * 4 = 10.5 exactly, then one fp32 step above: x * 4 rounds to 11 here
        x[3, 17] = torch.nextafter(torch.tensor(2.625), torch.tensor(3.0))
        x[5, 2] = -x[3, 17]
    return x


def golden(x):
    # the reference's order of operations lands under the tie where the kernel lands over it
    return torch.round(x.double() * 4 - 1e-6 * torch.sign(x.double())).to(torch.int32)


def test_quant(mode=MODE):
    x = draw(mode)
    out = torch.zeros(8, 64, dtype=torch.int32)
    quant_kernel(x, out)
    ref = golden(x)
    if mode == "large":
        ref[0, 0] += 1  # a failure with no tie behind it
    assert torch.equal(out, ref), f"{int((out != ref).sum())} mismatches"
"""


def _run(tmp_path: Path, backend: str, mode: str):
    write(tmp_path / "quant_impl.py", QUANT_IMPL)
    (tmp_path / "test_quant.py").write_text(QUANT_TEST.replace("MODE", repr(mode)), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYPTO_AST_BACKEND", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "pypto_ast.pytest_plugin", "-p",
                           "no:cacheprovider", "--pypto-backend", backend, "test_quant.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failure_after_ties_is_explained_at_the_cast(tmp_path, backend):
    run = _run(tmp_path, backend, "near")
    assert run.returncode == 1, run.stdout + run.stderr
    line = line_of(tmp_path / "quant_impl.py", "pypto.cast(")
    assert "warning[PTO114]" in run.stdout, run.stdout
    assert f"quant_impl.py:{line}:9" in run.stdout, run.stdout
    assert "2 mismatches" in run.stdout
    # the first tie: the kernel's value x * 4 one fp32 step above 10.5, rounded to 11
    assert "10.500001" in run.stdout and "rounded to 11" in run.stdout, run.stdout
    assert ("2 of 512 values" if backend == "interp" else "2 values") in run.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_tie_no_warning(tmp_path, backend):
    run = _run(tmp_path, backend, "far")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PTO114" not in run.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_large_values_are_no_ties(tmp_path, backend):
    # past 2^18 eight fp32 steps reach the half-unit: every integer there would look like a tie
    run = _run(tmp_path, backend, "large")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 mismatches" in run.stdout and "PTO114" not in run.stdout, run.stdout


def test_records_merge_per_cast_and_take_forgets():
    rounding_ties.clear()
    from pypto_ast.ir import Span

    at = Span(4, 8, 4, 40)
    rounding_ties.record(rounding_ties.Ties(at, 1, 100, 2.5000002, 3.0))
    rounding_ties.record(rounding_ties.Ties(at, 2, 100, 7.4999995, 7.0))
    rounding_ties.locate("k.py")
    rounding_ties.record(rounding_ties.Ties(at, 1, 100, 9.5, 10.0))  # the next call of the same kernel
    rounding_ties.locate("k.py")
    records = rounding_ties.take()
    assert [(r.count, r.total, r.value, r.path) for r in records] == [(4, 300, 2.5000002, "k.py")]
    assert rounding_ties.take() == []
    (diag,) = rounding_ties.diagnostics(records)
    assert diag.code == "PTO114" and (diag.span.path, diag.span.line, diag.span.col) == ("k.py", 4, 8)
    assert "4 of 300" in diag.message


def test_an_unlocated_record_is_not_reported():
    rounding_ties.clear()
    rounding_ties.record(rounding_ties.Ties(None, 3, 0, 0.5, 0.0, "host"))  # a host launch with no cast known
    rounding_ties.locate("k.py")
    assert rounding_ties.diagnostics(rounding_ties.take()) == []
