"""Views whose rows are not evenly spaced in their tensor (GM regions in several levels of row
stride, gm.GVal.outer), and reshapes of views that are strided or partially valid: the host
backend against the interpreter, bit for bit (elementwise) or within the cube's rounding.

One build serves every hypothesis example: the tensors' dims are DYNAMIC, so their strides are
run-time values of the control program, and the views move with the loops."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from pypto_ast import live, pipeline
from support import needs_cxx, write

KERNELS = '''
import pypto

F32 = pypto.DT_FP32
D = pypto.DYNAMIC


@pypto.frontend.jit
def blocks3(x: pypto.Tensor([D, D, D], F32), out: pypto.Tensor([D, D, D], F32)):
    # [2, 3, 16] blocks of a [B, M, N] tensor: rows 3 apart by N, in groups M * N apart
    pypto.set_vec_tile_shapes(2, 3, 16)
    for b in pypto.loop(x.shape[0] // 2, name="B", idx_name="b"):
        for r in pypto.loop(x.shape[1] // 3, name="R", idx_name="r"):
            for c in pypto.loop(x.shape[2] // 16, name="C", idx_name="c"):
                part = pypto.view(x, [2, 3, 16], [b * 2, r * 3, c * 16])
                pypto.assemble(part * 2.0 + 1.0, [b * 2, r * 3, c * 16], out)


@pypto.frontend.jit
def flatten_block(x: pypto.Tensor([D, D, D], F32), out: pypto.Tensor([D, 48], F32)):
    # a reshape of a [2, 3, 8] block (not contiguous in x): copied compact through UB first
    pypto.set_vec_tile_shapes(1, 48)
    for b in pypto.loop(x.shape[0] // 2, name="B", idx_name="b"):
        part = pypto.view(x, [2, 3, 8], [b * 2, 1, 2])
        flat = pypto.reshape(part, [1, 48])
        pypto.assemble(flat * 3.0 - 1.0, [b, 0], out)


@pypto.frontend.jit
def rows_of_view(x: pypto.Tensor([D, 32], F32), out: pypto.Tensor([D, 16], F32)):
    # a reshape of a partially valid view: its valid rows are a prefix (all columns valid)
    pypto.set_vec_tile_shapes(8, 16)
    for i in pypto.loop((x.shape[0] + 7) // 8, name="I", idx_name="i"):
        rows = pypto.min(8, x.shape[0] - i * 8)
        part = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[rows, 32])
        halves = pypto.reshape(part, [16, 16])
        pypto.assemble(halves - 0.5, [i * 16, 0], out)
'''

SCATTER = '''
import pypto

F32 = pypto.DT_FP32


@pypto.frontend.jit
def scatter5(x: pypto.Tensor((3, 8, 3), F32), res: pypto.Tensor((4, 8, 8, 8, 8), F32)):
    # an assemble into a region in three levels of row stride (the corpus' res[-2, -3:8, :, 1:4, 2] = x)
    pypto.set_vec_tile_shapes(4, 4, 4, 4, 8)
    res[-2, -3:8, :, 1:4, 2] = x


@pypto.frontend.jit
def batched(a: pypto.Tensor((4, 48, 32), pypto.DT_FP16), b: pypto.Tensor((4, 32, 40), pypto.DT_FP16),
            out: pypto.Tensor((4, 48, 40), F32)):
    # a batch of [16, 32] matrices out of [48, 32] ones: the cube reads them with a batch stride
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    pypto.set_vec_tile_shapes(16, 40)
    for i in pypto.loop(2, name="I", idx_name="i"):
        for m in pypto.loop(3, name="M", idx_name="m"):
            av = pypto.view(a, [2, 16, 32], [i * 2, m * 16, 0])
            bv = pypto.view(b, [2, 32, 40], [i * 2, 0, 0])
            out[i * 2:i * 2 + 2, m * 16:m * 16 + 16, :] = pypto.matmul(av, bv, pypto.DT_FP32)
'''

FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    return live.load_module(str(write(tmp_path_factory.mktemp("strided") / "strided_views.py", KERNELS)))


def both(fn, inputs: dict, outputs: tuple) -> dict:
    """The outputs of ``fn`` on the interpreter and on the host backend, from the same inputs."""
    got = {}
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(pipeline.lower(fn, args), args, backend)
        got[backend] = tuple(args[k] for k in outputs)
    return got


@needs_cxx
@FAST
@given(b=st.integers(1, 3), r=st.integers(1, 3), c=st.integers(1, 3), pad=st.integers(0, 5))
def test_blocks_in_two_levels_of_stride(kernels, b, r, c, pad):
    x = torch.randn(2 * b, 3 * r + pad, 16 * c + pad)
    got = both(kernels.blocks3, {"x": x, "out": torch.full(x.shape, float("nan"))}, ("out",))
    interp, host = got["interp"][0], got["host"][0]
    assert torch.equal(interp.nan_to_num(7.0), host.nan_to_num(7.0))
    covered = interp[:, :3 * r, :16 * c]
    assert torch.equal(covered, x[:, :3 * r, :16 * c] * 2.0 + 1.0)


@needs_cxx
@FAST
@given(b=st.integers(1, 3), m=st.integers(4, 9), n=st.integers(10, 40))
def test_reshape_of_a_strided_block_copies_it_compact(kernels, b, m, n):
    x = torch.randn(2 * b, m, n)
    got = both(kernels.flatten_block, {"x": x, "out": torch.zeros(b, 48)}, ("out",))
    assert torch.equal(got["interp"][0], got["host"][0])
    assert torch.equal(got["host"][0], (x[:, 1:4, 2:10] * 3.0 - 1.0).reshape(b, 48))


@needs_cxx
@FAST
@given(rows=st.integers(1, 40))
def test_reshape_of_a_partially_valid_view(kernels, rows):
    x = torch.randn(rows, 32)
    blocks = (rows + 7) // 8
    got = both(kernels.rows_of_view, {"x": x, "out": torch.full((blocks * 16, 16), 9.0)}, ("out",))
    assert torch.equal(got["interp"][0], got["host"][0])
    assert torch.equal(got["host"][0][:2 * rows], (x - 0.5).reshape(2 * rows, 16))


@needs_cxx
def test_reshape_of_a_view_whose_valid_data_is_not_a_prefix_faults_alike(tmp_path):
    src = KERNELS.replace("valid_shape=[rows, 32]", "valid_shape=[rows, 20]")
    module = live.load_module(str(write(tmp_path / "not_prefix.py", src)))
    messages = []
    for backend in ("interp", "host"):
        args = {"x": torch.randn(16, 32), "out": torch.zeros(32, 16)}
        with pytest.raises(Exception) as caught:
            pipeline.run(pipeline.lower(module.rows_of_view, args), args, backend)
        messages.append(str(caught.value))
    for m in messages:
        assert "reshape: valid region [8, 20] of a [8, 32] block is not contiguous" in m, m


@needs_cxx
def test_assemble_into_three_levels_and_a_strided_batch_matmul(tmp_path):
    module = live.load_module(str(write(tmp_path / "scatter5.py", SCATTER)))
    x = torch.randn(3, 8, 3)
    got = both(module.scatter5, {"x": x, "res": torch.zeros(4, 8, 8, 8, 8)}, ("res",))
    expected = torch.zeros(4, 8, 8, 8, 8)
    expected[-2, -3:8, :, 1:4, 2] = x
    assert torch.equal(got["interp"][0], expected) and torch.equal(got["host"][0], expected)
    a, b = torch.randn(4, 48, 32).half(), torch.randn(4, 32, 40).half()
    got = both(module.batched, {"a": a, "b": b, "out": torch.zeros(4, 48, 40)}, ("out",))
    reference = a.float() @ b.float()
    for backend in ("interp", "host"):
        torch.testing.assert_close(got[backend][0], reference, rtol=1e-3, atol=1e-3)


def test_views_become_levels_of_row_stride():
    """The region descriptor itself: evenly spaced axes merge, others stay levels."""
    from pypto_ast import ir
    from pypto_ast.emit import gm

    buf = gm.Buffer("x", "param", "fp32", (ir.Const(4), ir.Const(256), ir.Const(256)), 0)
    whole = gm.whole(buf)
    C = ir.Const
    v = gm.view(whole, (C(2), C(128), C(0)), (2, 128, 256), None, None, True)
    assert (v.ld, v.outer, v.inner, gm.const(v.offset)) == (256, ((2, 65536),), 128, 2 * 65536 + 128 * 256)
    w = gm.view(whole, (C(0), C(0), C(0)), (4, 256, 16), None, None, True)  # columns cut: rows still ld apart
    assert (w.ld, w.outer, w.rows) == (256, (), 1024)
    one = gm.view(whole, (C(1), C(3), C(5)), (1, 1, 7), None, None, True)
    assert one.rows == 1 and not one.outer
