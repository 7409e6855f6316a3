"""PTO113 (pypto_ast.rounding_steps): a failed comparison whose every mismatch is one bf16/fp16
rounding step is explained at the comparison's line; anything else (two steps, a NaN, values off
the 16-bit grid) is left to the comparison's own message."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto_ast.rounding_steps import explain, one_step, render

ROOT = Path(__file__).resolve().parents[2]


def bf16(values) -> np.ndarray:
    """fp32 values rounded to bf16 (to nearest even), as float32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def step(x: np.ndarray, k: int) -> np.ndarray:
    """Each bf16 value moved ``k`` places outward from zero on the bf16 grid."""
    bits = x.view(np.uint32).astype(np.int64) + (k << 16)
    return bits.astype(np.uint32).view(np.float32)


def test_one_step_is_explained_with_the_first_element():
    expected = bf16(np.linspace(2, 3.9, 64, dtype=np.float32) * np.resize([1, -1], 64)).reshape(8, 8)
    actual = expected.copy()
    actual[3, 5] = step(expected[3:4, 5], 1)[0]
    actual[6, 1] = step(expected[6:7, 1], -1)[0]
    s = one_step(actual, expected, 3e-3, 3e-3)
    assert s is not None and s.fmt == "bf16"
    assert (s.count, s.total, s.index) == (2, 64, (3, 5))
    assert s.step == abs(float(actual[3, 5]) - float(expected[3, 5])) > s.allowed


@pytest.mark.parametrize("case", ["two steps", "nan", "off the grid", "shapes"])
def test_anything_else_is_not(case):
    expected = bf16(np.linspace(1, 3, 16, dtype=np.float32))
    actual = expected.copy()
    if case == "two steps":
        actual[4] = step(expected[4:5], 2)[0]
    elif case == "nan":
        actual[4] = np.nan
    elif case == "off the grid":
        actual[4] = expected[4] + 0.01  # not a bf16 value: a wrong result, not a rounding
    else:
        actual = actual[:8]
    assert one_step(actual, expected, 3e-3, 3e-3) is None


def test_fp16_grid_and_no_mismatch():
    expected = np.linspace(-2, 2, 32).astype(np.float16)
    actual = expected.copy()
    actual[7] = np.nextafter(expected[7], np.float16(np.inf))
    s = one_step(actual.astype(np.float64), expected.astype(np.float64), 0.0, 0.0)
    assert s is not None and s.fmt == "fp16" and s.count == 1
    assert one_step(expected, expected, 0.0, 0.0) is None


def test_the_step_across_zero_counts_once():
    # +0 and -0 are the same place; the smallest bf16 subnormal is one step from either
    expected = np.array([0.0, -0.0], dtype=np.float32)
    actual = step(np.array([0.0, 0.0], dtype=np.float32), 1)
    s = one_step(actual, expected, 0.0, 0.0)
    assert s is not None and s.count == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4, width=32, allow_subnormal=False), min_size=1, max_size=40),
       st.sets(st.integers(0, 39), max_size=5), st.sampled_from([1, -1, 2]))
def test_moved_elements_are_counted(values, moved, k):
    expected = bf16(values)
    moved = sorted(i for i in moved if i < len(expected) and expected[i] != 0)
    actual = expected.copy()
    for i in moved:
        actual[i] = step(expected[i:i + 1], k)[0]
    s = one_step(actual, expected, 0.0, 0.0)
    if not moved:
        assert s is None
    elif k == 2:
        assert s is None
    else:
        assert s is not None and s.count == len(moved) and s.index == (moved[0],)


def _failing(assertion):
    try:
        assertion()
    except AssertionError as exc:
        return exc
    raise AssertionError("the comparison passed")


def test_explain_locates_numpy_assert_allclose():
    from numpy.testing import assert_allclose

    expected = bf16([1.5, 2.75, 3.0859375])
    actual = expected.copy()
    actual[2] = step(expected[2:3], 1)[0]
    line = sys._getframe().f_lineno + 1
    exc = _failing(lambda: assert_allclose(actual, expected, rtol=3e-3, atol=3e-3))
    diag = explain(exc)
    assert diag is not None and diag.code == "PTO113"
    assert diag.span.line == line and Path(diag.span.path).name == Path(__file__).name
    assert "1 of 3" in diag.message and "[2]" in diag.message
    assert "warning[PTO113]" in render(diag) and "assert_allclose(actual" in render(diag)
    # a real error is not explained
    actual[2] = 4.0
    assert explain(_failing(lambda: assert_allclose(actual, expected, rtol=3e-3, atol=3e-3))) is None


def test_explain_reads_torch_assert_close_dtype():
    torch = pytest.importorskip("torch")
    expected = torch.tensor([1.0, 2.0, 3.078125], dtype=torch.bfloat16)
    actual = expected.clone()
    actual[2] = 3.09375
    diag = explain(_failing(lambda: torch.testing.assert_close(actual, expected, rtol=3e-3, atol=3e-3)))
    assert diag is not None and "bf16" in diag.message
    assert explain(_failing(lambda: torch.testing.assert_close(actual, expected * 2))) is None


def test_the_plugin_adds_the_warning_to_the_failure(tmp_path):
    pytest.importorskip("torch")
    test = tmp_path / "test_bf16_output.py"
    test.write_text(textwrap.dedent("""\
        import torch
        from numpy.testing import assert_allclose

        def test_output():
            golden = torch.tensor([[1.0, -3.078125]], dtype=torch.bfloat16)
            out = torch.tensor([[1.0, -3.09375]], dtype=torch.bfloat16)
            assert_allclose(out.float(), golden.float(), rtol=3e-3, atol=3e-3)
        """))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYPTO_AST_BACKEND", None)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "pypto_ast.pytest_plugin", "-p", "no:cacheprovider",
                          str(test)], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "warning[PTO113]" in run.stdout and "test_bf16_output.py:7:5" in run.stdout, run.stdout


def test_the_script_runner_prints_it(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "check_fp16.py"
    script.write_text(textwrap.dedent("""\
        import numpy as np
        from numpy.testing import assert_allclose

        golden = np.array([0.5, 1.0009765625], dtype=np.float16)
        out = np.array([0.5, 1.0], dtype=np.float16)
        assert_allclose(out, golden, rtol=1e-4, atol=1e-4)
        """))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "pypto_ast.dropin", str(script)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert run.returncode != 0
    assert "warning[PTO113]" in run.stderr and "check_fp16.py:6:1" in run.stderr and "fp16" in run.stderr, run.stderr
