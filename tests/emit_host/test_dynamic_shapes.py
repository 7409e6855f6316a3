"""Dynamic dims: what pypto refuses (ir/shape_rules.py) is refused alike by the emitter and the
interpreter with PTO106 and pypto's message, at the op, while the kernel still lowers; what
pypto accepts (an inplace reshape to a dynamic shape, views of it in a loop) is emitted, its
extents run-time values of the control program, and agrees with the interpreter bit for bit."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from pypto_ast import live, pipeline
from pypto_ast.ir.interp import InterpError
from support import line_of, needs_cxx, write

REFUSED = '''
import pypto

F32 = pypto.DT_FP32
D = pypto.DYNAMIC


@pypto.frontend.jit
def whole_dynamic(a: pypto.Tensor([D, 16], F32), out: pypto.Tensor([D, 16], F32)):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = pypto.sqrt(a)  # REFUSED-COMPUTE


@pypto.frontend.jit
def assemble_dynamic(a: pypto.Tensor([D, 16], F32), out: pypto.Tensor([D, 16], F32)):
    pypto.assemble(a, [0, 0], out)  # REFUSED-ASSEMBLE


@pypto.frontend.jit
def reshape_dynamic(q: pypto.Tensor([D, 4, 16], F32), out: pypto.Tensor([D, 16], F32)):
    n = q.shape[0]
    flat = pypto.reshape(q, [n * 4, 16])  # REFUSED-RESHAPE
    pypto.set_vec_tile_shapes(4, 16)
    for i in pypto.loop(n, name="I", idx_name="i"):
        block = pypto.view(flat, [4, 16], [i * 4, 0])
        pypto.assemble(block + 1.0, [i * 4, 0], out)


@pypto.frontend.jit
def matmul_dynamic(a: pypto.Tensor([D, 32], pypto.DT_FP16), b: pypto.Tensor([32, 32], pypto.DT_FP16),
                   out: pypto.Tensor([D, 32], F32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    out[:] = pypto.matmul(a, b, pypto.DT_FP32)  # REFUSED-MATMUL
'''

CASES = {
    "whole_dynamic": ("REFUSED-COMPUTE", "Dynamic shape tensors are not allowed as operation operands", "pypto-sqrt.md",
                      {"a": (5, 16), "out": (5, 16)}),
    "assemble_dynamic": ("REFUSED-ASSEMBLE", "Assemble: shape of src tensor requires integer", "pypto-assemble.md",
                         {"a": (5, 16), "out": (5, 16)}),
    "reshape_dynamic": ("REFUSED-RESHAPE", "reshape() requires integer shape when using non-inplace reshape",
                        "pypto-reshape.md", {"q": (3, 4, 16), "out": (12, 16)}),
    "matmul_dynamic": ("REFUSED-MATMUL", "Dynamic shape tensors are not allowed as operation operands",
                       "pypto-matmul.md", {"a": (16, 32), "b": (32, 32), "out": (16, 32)}),
}


def _inputs(shapes: dict) -> dict:
    return {k: torch.ones(s, dtype=torch.float16 if k in ("a", "b") and len(s) == 2 and s[1] == 32 else torch.float32)
            for k, s in shapes.items()}


@pytest.mark.parametrize("kernel", sorted(CASES))
def test_what_pypto_refuses_lowers_and_both_backends_refuse_with_pto106(tmp_path, kernel):
    path = write(tmp_path / "refused.py", REFUSED)
    module = live.load_module(str(path))
    marker, rule, page, shapes = CASES[kernel]
    inputs = _inputs(shapes)
    program = pipeline.lower(getattr(module, kernel), inputs)  # the IR keeps lowering
    with pytest.raises(pipeline.KernelErrors) as emitted:
        pipeline.emit(program, "ascendc", source_path=str(path))
    assert emitted.value.code == "PTO106"
    message, span = emitted.value.findings[0]
    assert rule in message and page in message and "does not support" not in message
    assert span is not None and span.line == line_of(path, marker)
    with pytest.raises(InterpError) as ran:
        pipeline.run(program, inputs, "interp")
    assert ran.value.code == "PTO106" and rule in ran.value.message and ran.value.span.line == span.line


ACCEPTED = '''
import pypto

F32 = pypto.DT_FP32
D = pypto.DYNAMIC


@pypto.frontend.jit
def rows_of_pairs(x: pypto.Tensor([D, 4, 4], F32), out: pypto.Tensor([D, 4, 4], F32)):
    # the rows of [t, 4, 4] as [t, 16] (inplace: pypto allows a dynamic shape), in blocks of 8
    t = x.shape[0]
    flat = pypto.reshape(x, [t, 16], inplace=True)
    pypto.set_vec_tile_shapes(8, 16)
    for i in pypto.loop((t + 7) // 8, name="T", idx_name="i"):
        rows = pypto.min(8, t - i * 8)
        block = pypto.view(flat, [8, 16], [i * 8, 0], valid_shape=[rows, 16])
        scaled = pypto.reshape(block * 0.5 - 2.0, [8, 4, 4], valid_shape=[rows, 4, 4])
        pypto.assemble(scaled, [i * 8, 0, 0], out)


@pypto.frontend.jit
def dynamic_columns(x: pypto.Tensor([16, D], F32), out: pypto.Tensor([16, D], F32)):
    # a dynamic last dim: the row stride of every view is a run-time value
    pypto.set_vec_tile_shapes(4, 32)
    n = x.shape[1]
    for j in pypto.loop((n + 31) // 32, name="J", idx_name="j"):
        cols = pypto.min(32, n - j * 32)
        for i in pypto.loop(4, name="I", idx_name="i"):
            part = pypto.view(x, [4, 32], [i * 4, j * 32], valid_shape=[4, cols])
            pypto.assemble(part + part, [i * 4, j * 32], out)


@pypto.frontend.jit
def moved(a: pypto.Tensor([D, 32], F32), out: pypto.Tensor([D, 32], F32)):
    # pypto's move: after `a[:] = v` the name `a` holds v, a static [24, 32] tensor
    pypto.set_vec_tile_shapes(8, 32)
    a[:] = pypto.view(a, [24, 32], [0, 0])
    pypto.assemble(a * 2.0, [0, 0], out)
'''

FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def accepted(tmp_path_factory):
    return live.load_module(str(write(tmp_path_factory.mktemp("dyn") / "accepted.py", ACCEPTED)))


def both(fn, inputs: dict, output: str):
    got = []
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(pipeline.lower(fn, args), args, backend)
        got.append(args[output])
    return got


@needs_cxx
@FAST
@given(t=st.integers(1, 37))
def test_inplace_dynamic_reshape_runs_for_any_row_count(accepted, t):
    x = torch.randn(t, 4, 4)
    interp, host = both(accepted.rows_of_pairs, {"x": x, "out": torch.full((t, 4, 4), 3.0)}, "out")
    assert torch.equal(interp, host)
    assert torch.equal(host, x * 0.5 - 2.0)


@needs_cxx
@FAST
@given(n=st.integers(1, 100))
def test_views_of_a_dynamic_last_dim(accepted, n):
    x = torch.randn(16, n)
    interp, host = both(accepted.dynamic_columns, {"x": x, "out": torch.zeros(16, n)}, "out")
    assert torch.equal(interp, host) and torch.equal(host, x + x)


def test_one_emitted_program_serves_every_row_count(accepted):
    """The dynamic extents are the control program's: the same text for different shapes."""
    texts = []
    for t in (3, 29):
        args = {"x": torch.zeros(t, 4, 4), "out": torch.zeros(t, 4, 4)}
        files = pipeline.emit(pipeline.lower(accepted.rows_of_pairs, args), "ascendc")
        texts.append(files["control.cpp"])
        assert "dims[" in files["control.cpp"]
    assert texts[0] == texts[1]


@needs_cxx
def test_a_moved_name_takes_the_static_shape_of_what_it_holds(accepted):
    """Not a dynamic operand (pypto accepts the kernel): ``a`` is the [24, 32] view after the move."""
    x = torch.randn(30, 32)
    interp, host = both(accepted.moved, {"a": x, "out": torch.full((30, 32), 5.0)}, "out")
    assert torch.equal(interp, host)
    assert torch.equal(host[:24], x[:24] * 2.0) and torch.equal(host[24:], torch.full((6, 32), 5.0))
