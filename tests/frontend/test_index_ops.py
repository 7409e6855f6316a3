"""The front end's indexing and sorting ops: the IR they lower to (dtypes and attributes from the
pypto op pages) and the located PTO106 for what those pages exclude."""

from __future__ import annotations

import pytest

from pypto_ast import frontend, ir
from pypto_ast.frontend.errors import FrontendError
from pypto_ast.source import SourceFile


def kernel(params: str, body: str) -> str:
    return ("import pypto\n\n\n@pypto.frontend.jit\n"
            f"def k({params}):\n    pypto.set_vec_tile_shapes(4, 32)\n{body}")


def lower(text: str) -> ir.Program:
    return frontend.lower(frontend.read(SourceFile.parse(text, "k.py")))[0]


def first(program: ir.Program, opcode: str) -> ir.Op:
    return next(op for b in ir.blocks(program) for op in b.ops if op.opcode == opcode)


def test_one_hot_is_int64_as_its_page_says():
    p = lower(kernel("x: pypto.Tensor([4], pypto.DT_INT32), out: pypto.Tensor([4, 5], pypto.DT_INT64)",
                     "    out[:] = pypto.one_hot(x, 5)\n"))
    assert first(p, "one_hot").types[0].dtype == "int64"


def test_scatter_keeps_reduce_and_a_scalar_src():
    p = lower(kernel("x: pypto.Tensor([4, 8], pypto.DT_FP32), i: pypto.Tensor([2, 8], pypto.DT_INT64), "
                     "out: pypto.Tensor([4, 8], pypto.DT_FP32)",
                     "    out[:] = pypto.scatter(x, 0, i, 2.0, reduce='add')\n"))
    op = first(p, "scatter")
    assert op.attr("reduce") == "add" and op.attr("dim") == 0 and op.operands[2] == ir.Const(2.0)


def test_dims_are_normalised_at_lowering():
    p = lower(kernel("x: pypto.Tensor([4, 32], pypto.DT_FP32), i: pypto.Tensor([4, 32], pypto.DT_INT32), "
                     "out: pypto.Tensor([4, 32], pypto.DT_INT32), o2: pypto.Tensor([4, 32], pypto.DT_FP32)",
                     "    out[:] = pypto.argsort(x, -1, True)\n    o2[:] = pypto.gather(x, -1, i)\n"))
    assert first(p, "argsort").attr("dim") == 1 and first(p, "gather").attr("dim") == 1


@pytest.mark.parametrize("params, expr, page, line", [
    ("x: pypto.Tensor([4, 32], pypto.DT_INT32), out: pypto.Tensor([4], pypto.DT_INT32)",
     "pypto.argmax(x, -1)", "pypto-argmax.md", "takes fp16/bf16/fp32, not int32"),
    ("x: pypto.Tensor([4, 32], pypto.DT_FP16), out: pypto.Tensor([4, 2], pypto.DT_FP16)",
     "pypto.topk(x, 2)[0]", "pypto-topk.md", "takes fp32, not fp16"),
    ("x: pypto.Tensor([4, 32], pypto.DT_FP32), out: pypto.Tensor([2, 32], pypto.DT_FP32)",
     "pypto.topk(x, 2, 0)[0]", "pypto-topk.md", "last dim only"),
    ("x: pypto.Tensor([4, 32], pypto.DT_FP32), i: pypto.Tensor([4, 32], pypto.DT_FP32), "
     "out: pypto.Tensor([4, 32], pypto.DT_FP32)", "pypto.gather(x, 0, i)", "pypto-gather.md", "index takes int32/int64"),
    ("x: pypto.Tensor([4, 32], pypto.DT_INT64), i: pypto.Tensor([4, 32], pypto.DT_INT32), "
     "out: pypto.Tensor([4, 32], pypto.DT_INT64)", "pypto.gather(x, 0, i)", "pypto-gather.md", "not int64"),
    ("x: pypto.Tensor([4, 32], pypto.DT_FP32), i: pypto.Tensor([4, 32], pypto.DT_INT32), "
     "out: pypto.Tensor([4, 32], pypto.DT_FP32)", "pypto.scatter(x, 0, i, 1.0, reduce='max')",
     "pypto-scatter_.md", "reduce must be None, 'add' or 'multiply'"),
    ("x: pypto.Tensor([4, 32], pypto.DT_FP32), i: pypto.Tensor([4, 32], pypto.DT_INT32), "
     "out: pypto.Tensor([4, 32], pypto.DT_FP32)", "pypto.scatter(x, 0, i, float('inf'))",
     "pypto-scatter_.md", "must be finite"),
    ("x: pypto.Tensor([4, 32], pypto.DT_FP32), i: pypto.Tensor([4, 40], pypto.DT_INT32), "
     "out: pypto.Tensor([4, 40], pypto.DT_FP32)", "pypto.gather(x, 0, i)", "pypto-gather.md",
     "the index's dim 1 (40) exceeds the input's (32)"),
    ("x: pypto.Tensor([4, 32], pypto.DT_FP32), i: pypto.Tensor([2, 32], pypto.DT_INT32), "
     "s: pypto.Tensor([1, 32], pypto.DT_FP32), out: pypto.Tensor([4, 32], pypto.DT_FP32)",
     "pypto.scatter(x, 0, i, s)", "pypto-scatter_.md", "the index's dim 0 (2) exceeds src's (1)"),
    ("x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4, 5], pypto.DT_INT64)",
     "pypto.one_hot(x, 5)", "pypto-one_hot.md", "takes int8/int16/int32/int64, not fp32"),
    ("x: pypto.Tensor([4, 32], pypto.DT_INT32), out: pypto.Tensor([4, 32], pypto.DT_INT32)",
     "pypto.cumprod(x, 0)", "pypto-cumprod.md", "takes fp16/bf16/fp32, not int32"),
])
def test_what_an_op_page_excludes_is_a_located_pto106(params, expr, page, line):
    with pytest.raises(FrontendError) as err:
        lower(kernel(params, f"    out[:] = {expr}\n"))
    assert err.value.code == "PTO106" and page in err.value.message and line in err.value.message, err.value.message
    assert err.value.node is not None and err.value.node.lineno == 7
