"""One rule for tensor arguments on both backends (pypto_ast/arguments.py, docs/design.md §9):
a kernel reads its inputs as they were at the call, even when an output shares their memory
(the host computed from inputs its own kernels had overwritten), and an output that is a leaf
tensor requiring grad is refused (the host wrote it behind autograd's back, the interpreter
failed inside its write). Through ``@pypto_ast.jit`` on first and warm calls, and through
``pipeline.run`` on both backends."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from jit_support import BACKENDS  # noqa: E402

from pypto_ast import knobs, pipeline  # noqa: E402

KERNELS = '''
import pypto
import pypto_ast

F32 = pypto.DT_FP32


@pypto_ast.jit
def affine(x: pypto.Tensor((64, 64), F32), out: pypto.Tensor((64, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x * 2.0 + 1.0


@pypto_ast.jit
def two_outputs(x: pypto.Tensor((64, 64), F32), a: pypto.Tensor((64, 64), F32), b: pypto.Tensor((64, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    a[:] = x + 1.0
    b[:] = x * 2.0


@pypto_ast.jit
def bump(x: pypto.Tensor((64, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    x[:] = x + 1.0
'''


@pytest.fixture
def kernels(module):
    return module(KERNELS)


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    monkeypatch.setattr(knobs, "backend", request.param)
    return request.param


def _buffer():
    return torch.arange(128 * 64, dtype=torch.float32).reshape(128, 64) / 1000.0


@pytest.mark.parametrize("warm", [False, True], ids=["first-call", "warm"])
@pytest.mark.parametrize("shift", [16, -16, 0], ids=["output-after-input", "output-before-input", "same-rows"])
def test_an_output_overlapping_an_input_reads_the_input_as_it_was(kernels, backend, warm, shift):
    if warm:
        kernels.affine(torch.randn(64, 64), torch.zeros(64, 64))
    buf = _buffer()
    start = 32
    x, out = buf[start:start + 64], buf[start + shift:start + shift + 64]
    want = x * 2.0 + 1.0
    kernels.affine(x, out)
    torch.testing.assert_close(out, want, rtol=0, atol=0)


def test_an_input_that_is_also_an_output_argument(kernels, backend):
    # two_outputs(x, x, b): torch's semantics, b is computed from x as it was at the call
    x = torch.randn(64, 64)
    b = torch.zeros(64, 64)
    want_a, want_b = x + 1.0, x * 2.0
    kernels.two_outputs(x, x, b)
    torch.testing.assert_close(x, want_a, rtol=0, atol=0)
    torch.testing.assert_close(b, want_b, rtol=0, atol=0)


def test_an_output_passed_twice_is_written_in_program_order(kernels, backend):
    x, out = torch.randn(64, 64), torch.zeros(64, 64)
    kernels.two_outputs(x, out, out)
    torch.testing.assert_close(out, x * 2.0, rtol=0, atol=0)


def test_in_place_update_of_one_parameter_keeps_working(kernels, backend):
    x = torch.randn(64, 64)
    want = x + 1.0
    kernels.bump(x)
    torch.testing.assert_close(x, want, rtol=0, atol=0)


@pytest.mark.parametrize("warm", [False, True], ids=["first-call", "warm"])
def test_an_output_that_requires_grad_is_refused_untouched(kernels, backend, warm):
    if warm:
        kernels.affine(torch.randn(64, 64), torch.zeros(64, 64))
    x, out = torch.randn(64, 64), torch.zeros(64, 64, requires_grad=True)
    with pytest.raises(ValueError, match=r"^affine\(\): argument `out` is an output but a leaf tensor that requires "
                                         r"grad: the kernel writes it in place, which autograd forbids"):
        kernels.affine(x, out)
    assert (out == 0).all()
    with torch.no_grad():  # as torch allows: writing a leaf that requires grad under no_grad
        kernels.affine(x, out)
    torch.testing.assert_close(out.detach(), x * 2.0 + 1.0)
    y = torch.zeros(64, 64)
    kernels.affine(torch.randn(64, 64, requires_grad=True), y)  # an input that requires grad is fine


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipeline_run_applies_the_same_rules(kernels, backend):
    program = pipeline.lower(kernels.affine, {"x": torch.zeros(64, 64), "out": torch.zeros(64, 64)})
    buf = _buffer()
    x, out = buf[32:96], buf[48:112]
    want = x * 2.0 + 1.0
    pipeline.run(program, {"x": x, "out": out}, backend)
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    out = torch.zeros(64, 64, requires_grad=True)
    with pytest.raises(ValueError, match=r"affine\(\): argument `out` is an output but a leaf tensor that requires grad"):
        pipeline.run(program, {"x": torch.randn(64, 64), "out": out}, backend)
    assert (out == 0).all()
