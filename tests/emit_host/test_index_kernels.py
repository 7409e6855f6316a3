"""Indexing, sorting and scans in whole kernels, written as the official tests write them (a
``pypto.loop`` of views with a ``valid_shape``, the result assembled into the output), on the
host backend (pypto_ast/emit/index.py) against the interpreter and torch; the faults an index
outside its axis gives on both backends; what the emitter leaves to PTO109."""

from __future__ import annotations

import json

import pytest
import torch

from pypto_ast import pipeline
from pypto_ast.emit.ascendc import EmitError, emit_program
from pypto_ast.errors import KernelErrors
from support import BACKENDS, needs_cxx, write

HEAD = "import pypto\n\n\n"


def lower(tmp_path, name: str, text: str):
    return pipeline.lower_file(str(write(tmp_path / f"{name}.py", HEAD + text)))


def on_both(program, inputs: dict) -> dict:
    """The outputs on the interpreter and on the host, checked equal; returns the host's."""
    got = {}
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(program, args, backend)
        got[backend] = args
    for name, value in got["host"].items():
        assert torch.equal(value, got["interp"][name]) or torch.allclose(value, got["interp"][name], equal_nan=True,
                                                                          rtol=0, atol=0), name
    return got["host"]


def kernels(program) -> list:
    return json.loads(emit_program(program)["manifest.json"])["kernels"]


ARGMAX_BLOCKS = '''
@pypto.frontend.jit
def argmax_blocks(x: pypto.Tensor((10, 40), pypto.DT_FP32), out: pypto.Tensor((10,), pypto.DT_INT32),
                  col: pypto.Tensor((1, 40), pypto.DT_INT32)):
    for b in pypto.loop(3):
        v = pypto.view(x, [4, 40], [b * 4, 0], valid_shape=[pypto.min(10 - b * 4, 4), 40])
        pypto.set_vec_tile_shapes(4, 40)
        pypto.assemble(pypto.argmax(v, 1, False), [b * 4], out)
    for s in pypto.loop(3):
        w = pypto.view(x, [10, 16], [0, s * 16], valid_shape=[10, pypto.min(40 - s * 16, 16)])
        pypto.set_vec_tile_shapes(10, 8)
        pypto.assemble(pypto.argmin(w, 0, True), [0, s * 16], col)
'''


@needs_cxx
def test_argmax_and_argmin_of_partial_blocks(tmp_path):
    """The shapes of the official argmax/argmin tests: a row block with its last block short, the
    result a 1-D slice of the output; a column block of a partial width along the rows."""
    program = lower(tmp_path, "argmax_blocks", ARGMAX_BLOCKS)
    x = torch.randn(10, 40, generator=torch.Generator().manual_seed(1))
    x[3, 7] = x[3, 9] = 50.0  # a tie: the first
    x[6, 30], x[2, 33] = float("nan"), -50.0
    got = on_both(program, {"x": x, "out": torch.zeros(10, dtype=torch.int32), "col": torch.zeros(1, 40, dtype=torch.int32)})
    assert torch.equal(got["out"], torch.argmax(x, 1).int())
    assert torch.equal(got["col"], torch.argmin(x, 0, keepdim=True).int())
    assert got["out"][3] == 7 and got["col"][0, 30] == 6


SORTS = '''
@pypto.frontend.jit
def sorts(x: pypto.Tensor((6, 100), pypto.DT_FP32), idx: pypto.Tensor((6, 100), pypto.DT_INT32),
          tv: pypto.Tensor((6, 7), pypto.DT_FP32), ti: pypto.Tensor((6, 7), pypto.DT_INT32)):
    for b in pypto.loop(2):
        v = pypto.view(x, [4, 100], [b * 4, 0], valid_shape=[pypto.min(6 - b * 4, 4), 100])
        pypto.set_vec_tile_shapes(2, 32)
        pypto.assemble(pypto.argsort(v, 1, True), [b * 4, 0], idx)
    pypto.set_vec_tile_shapes(6, 128)
    values, indices = pypto.topk(x, 7, -1, False)
    tv[:] = values
    ti[:] = indices
'''


@needs_cxx
def test_argsort_and_topk_are_stable_sorts_with_nan_above_inf(tmp_path):
    program = lower(tmp_path, "sorts", SORTS)
    x = (torch.rand(6, 100, generator=torch.Generator().manual_seed(2)) * 10).round()  # many ties
    x[0, 5], x[0, 50], x[1, 3], x[1, 4] = float("nan"), float("inf"), -0.0, 0.0
    x[5, 9] = float("-inf")
    got = on_both(program, {"x": x, "idx": torch.zeros(6, 100, dtype=torch.int32), "tv": torch.zeros(6, 7),
                            "ti": torch.zeros(6, 7, dtype=torch.int32)})
    assert torch.equal(got["idx"], torch.argsort(x, dim=1, descending=True, stable=True).int())
    values, indices = torch.sort(x, dim=1, stable=True)
    assert torch.equal(got["ti"], indices[:, :7].int()) and torch.equal(got["tv"], values[:, :7])
    assert got["idx"][0, 0] == 5 and got["idx"][0, 1] == 50


CUMSUM = '''
@pypto.frontend.jit
def scans(x: pypto.Tensor((10, 10), pypto.DT_INT32), out: pypto.Tensor((10, 10), pypto.DT_INT64),
          y: pypto.Tensor((10, 10), pypto.DT_FP16), prod: pypto.Tensor((10, 10), pypto.DT_FP16),
          rows: pypto.Tensor((10, 10), pypto.DT_FP16)):
    for b in pypto.loop(3):
        v = pypto.view(x, [10, 4], [0, b * 4], valid_shape=[10, pypto.min(10 - b * 4, 4)])
        pypto.set_vec_tile_shapes(10, 4)
        pypto.assemble(pypto.cumsum(v, 0), [0, b * 4], out)
    pypto.set_vec_tile_shapes(10, 16)
    prod[:] = pypto.cumprod(y, 0)
    rows[:] = pypto.cumsum(y, 1)
'''


@needs_cxx
def test_scans_of_the_official_shapes(tmp_path):
    """int32 cumsum along the rows into an int64 output through column views of a partial width;
    fp16 scans in fp32, rounded once."""
    program = lower(tmp_path, "scans", CUMSUM)
    g = torch.Generator().manual_seed(3)
    x = torch.randint(-2 ** 31, 2 ** 31 - 1, (10, 10), generator=g, dtype=torch.int64).int()
    y = (torch.rand(10, 10, generator=g) + 0.5).half()
    got = on_both(program, {"x": x, "out": torch.zeros(10, 10, dtype=torch.int64), "y": y,
                            "prod": torch.zeros(10, 10, dtype=torch.float16), "rows": torch.zeros(10, 10, dtype=torch.float16)})
    assert torch.equal(got["out"], torch.cumsum(x.long(), 0))
    torch.testing.assert_close(got["prod"], torch.cumprod(y.float(), 0).half(), rtol=1e-3, atol=0)
    torch.testing.assert_close(got["rows"], torch.cumsum(y.float(), 1).half(), rtol=1e-3, atol=0)


GATHER_SCATTER = '''
@pypto.frontend.jit
def gs(x: pypto.Tensor((23, 29), pypto.DT_INT32), i: pypto.Tensor((4, 4), pypto.DT_INT32),
       g: pypto.Tensor((4, 4), pypto.DT_INT32), y: pypto.Tensor((4, 5), pypto.DT_FP32),
       j: pypto.Tensor((2, 5), pypto.DT_INT64), s: pypto.Tensor((4, 5), pypto.DT_FP32),
       add: pypto.Tensor((4, 5), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(23, 4)
    v = pypto.view(x, [23, 4], [0, 0], valid_shape=[23, 4])
    g[:] = pypto.gather(v, 0, i)
    pypto.set_vec_tile_shapes(4, 16)
    k = pypto.view(j, [4, 5], [0, 0], valid_shape=[2, 5])
    add[:] = pypto.scatter(y, 0, k, s, reduce='add')
'''


@needs_cxx
def test_gather_and_scatter_add_of_the_official_shapes(tmp_path):
    """gather along the rows of a column block; scatter add through an index view that is valid for
    its first two rows only, with repeated positions (summed in order)."""
    program = lower(tmp_path, "gs", GATHER_SCATTER)
    gen = torch.Generator().manual_seed(4)
    x = torch.randint(1, 100, (23, 29), generator=gen, dtype=torch.int32)
    i = torch.randint(0, 23, (4, 4), generator=gen, dtype=torch.int32)
    y, s = torch.rand(4, 5, generator=gen), torch.rand(4, 5, generator=gen) * 10 - 1
    j = torch.randint(0, 4, (2, 5), generator=gen)
    j[1] = j[0]  # every position twice
    got = on_both(program, {"x": x, "i": i, "g": torch.zeros(4, 4, dtype=torch.int32), "y": y, "j": j, "s": s,
                            "add": torch.zeros(4, 5)})
    assert torch.equal(got["g"], torch.gather(x[:, :4], 0, i.long()))
    want = y.clone()
    for r in range(2):
        for c in range(5):
            want[j[r, c], c] += s[r, c]
    assert torch.equal(got["add"], want)


UPDATE = '''
@pypto.frontend.jit
def update(cache: pypto.Tensor((2, 6, 1, 8), pypto.DT_FP16), index: pypto.Tensor((2, 2), pypto.DT_INT32),
           new: pypto.Tensor((2, 2, 1, 8), pypto.DT_FP16), out: pypto.Tensor((2, 6, 1, 8), pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(1, 2, 1, 8)
    out[:] = pypto.scatter_update(cache, -2, index, new)
'''


@needs_cxx
def test_scatter_update_of_a_paged_cache(tmp_path):
    """The 4-D form of the op page: cache[index // 6][index % 6][0] = new[i][j][0], a repeated
    slot keeping the last entry."""
    program = lower(tmp_path, "update", UPDATE)
    cache = torch.randn(2, 6, 1, 8, generator=torch.Generator().manual_seed(5)).half()
    new = torch.arange(32, dtype=torch.float16).reshape(2, 2, 1, 8)
    index = torch.tensor([[1, 8], [4, 8]], dtype=torch.int32)
    got = on_both(program, {"cache": cache, "index": index, "new": new, "out": torch.zeros(2, 6, 1, 8).half()})
    want = cache.clone().reshape(12, 8)
    for e, slot in enumerate(index.flatten().tolist()):
        want[slot] = new.reshape(4, 8)[e]
    assert torch.equal(got["out"], want.reshape(2, 6, 1, 8))


ONE_HOT = '''
@pypto.frontend.jit
def onehot(x: pypto.Tensor((3, 4), pypto.DT_INT32), out: pypto.Tensor((3, 4, 6), pypto.DT_INT64)):
    pypto.set_vec_tile_shapes(3, 4, 6)
    out[:] = pypto.one_hot(x, 6)
'''


@needs_cxx
def test_one_hot_is_int64_on_both_backends(tmp_path):
    program = lower(tmp_path, "onehot", ONE_HOT)
    x = torch.tensor([[0, 5, 2, 2], [1, 0, 3, 4], [5, 5, 0, 1]], dtype=torch.int32)
    got = on_both(program, {"x": x, "out": torch.full((3, 4, 6), 7, dtype=torch.int64)})
    assert torch.equal(got["out"], torch.nn.functional.one_hot(x.long(), 6))


@needs_cxx
def test_a_result_assembled_once_is_written_in_place(tmp_path):
    """argsort, topk then assemble: one kernel each (the loop's, topk's values and indices),
    writing the outputs' regions (no workspace, no copy kernel)."""
    program = lower(tmp_path, "sorts", SORTS)
    ks = kernels(program)
    assert [k["kind"] for k in ks] == ["index"] * 3, ks
    assert all(k["tiling"][-1]["buffer_kind"] == "param" for k in ks)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op, bad, message", [
    ("gather", -1, r"gather: an index along dim 0 is outside \[0, 3\)"),
    ("gather", 3, r"gather: an index along dim 0 is outside \[0, 3\)"),
    ("scatter", 3, r"scatter: an index along dim 0 is outside \[0, 3\)"),
    ("one_hot", 8, r"one_hot: a class value is outside \[0, 8\)"),
])
def test_an_index_outside_its_axis_is_refused_on_both_backends(tmp_path, backend, op, bad, message):
    expr = {"gather": "pypto.gather(x, 0, i)", "scatter": "pypto.scatter(x, 0, i, 1.0)",
            "one_hot": "pypto.one_hot(i, 8)"}[op]
    out = "pypto.Tensor((2, 5, 8), pypto.DT_INT64)" if op == "one_hot" else \
        f"pypto.Tensor(({2 if op == 'gather' else 3}, 5), pypto.DT_FP32)"
    program = lower(tmp_path, op, f'''
@pypto.frontend.jit
def k(x: pypto.Tensor((3, 5), pypto.DT_FP32), i: pypto.Tensor((2, 5), pypto.DT_INT32), out: {out}):
    pypto.set_vec_tile_shapes(4, 8)
    out[:] = {expr}
''')
    i = torch.zeros(2, 5, dtype=torch.int32)
    i[1, 3] = bad
    outs = torch.zeros((2, 5, 8) if op == "one_hot" else ((2, 5) if op == "gather" else (3, 5)),
                       dtype=torch.int64 if op == "one_hot" else torch.float32)
    with pytest.raises((KernelErrors, Exception), match=message):
        pipeline.run(program, {"x": torch.zeros(3, 5), "i": i, "out": outs}, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_topk_of_fewer_valid_elements_than_k_is_refused_on_both_backends(tmp_path, backend):
    program = lower(tmp_path, "topk", '''
@pypto.frontend.jit
def k(x: pypto.Tensor((2, 16), pypto.DT_FP32), out: pypto.Tensor((2, 4), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 16)
    v = pypto.view(x, [2, 16], [0, 0], valid_shape=[2, 3])
    out[:] = pypto.topk(v, 4)[0]
''')
    with pytest.raises(Exception, match=r"topk: k = 4 is outside \[1, 3\], the valid extent of dim 1"):
        pipeline.run(program, {"x": torch.zeros(2, 16), "out": torch.zeros(2, 4)}, backend)


@pytest.mark.parametrize("body, message", [
    ("out[:] = pypto.argsort(x, 0, False)", "'argsort' along dim 0, not the last"),
    ("out[:] = pypto.argsort(pypto.view(big, [4, 9000], [0, 0]), -1, False)", "'argsort' of rows of 9000 elements"),
])
def test_what_the_emitter_leaves_out_is_pto109(tmp_path, body, message):
    program = lower(tmp_path, "gap", f'''
@pypto.frontend.jit
def k(x: pypto.Tensor((4, 9000), pypto.DT_FP32), big: pypto.Tensor((4, 9000), pypto.DT_FP32),
      out: pypto.Tensor((4, 9000), pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(4, 32)
    {body}
''')
    with pytest.raises(EmitError, match=message) as err:
        emit_program(program)
    assert "does not support it yet" in str(err.value) and err.value.span is not None and err.value.span.line == 9
