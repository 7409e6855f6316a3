"""Row reductions, [rows, 1] broadcasts and ragged tiles in the host backend slice
(emit/ascendc.py -> g++ against kernel_operator.h), compared with the torch interpreter and torch."""

import shutil
import json
import textwrap

import pytest
import torch

from pypto_ast import knobs, live, pipeline
from pypto_ast.ir import interp as torch_interp
from pypto_ast.emit.ascendc import EmitError, emit_program
from pypto_ast.emit.host_backend import run_host

pytestmark = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None,
    reason=f"C++ compiler {knobs.cxx!r} not on PATH (set PYPTO_AST_CXX): the host build needs one",
)

HEADER = '''
import pypto
F32 = pypto.DT_FP32
'''

REDUCTIONS = HEADER + '''
@pypto.frontend.jit
def row_reduce(x: pypto.Tensor((32, 64), F32), s: pypto.Tensor((32, 1), F32),
               mx: pypto.Tensor((32, 1), F32), mn: pypto.Tensor((32, 1), F32)):
    pypto.set_vec_tile_shapes(8, 64)
    s[:] = pypto.sum(x, dim=-1, keepdim=True)
    mx[:] = pypto.amax(x, dim=-1, keepdim=True)
    mn[:] = pypto.amin(x * 2.0, dim=1, keepdim=True) + 1.0
'''


def softmax_src(rows, cols, tile_rows):
    return HEADER + f'''
@pypto.frontend.jit
def softmax(x: pypto.Tensor(({rows}, {cols}), F32), out: pypto.Tensor(({rows}, {cols}), F32)):
    pypto.set_vec_tile_shapes({tile_rows}, {cols})
    m = pypto.amax(x, dim=-1, keepdim=True)
    e = pypto.exp(x - m)
    out[:] = e / pypto.sum(e, dim=-1, keepdim=True)
'''


BROADCASTS = HEADER + '''
@pypto.frontend.jit
def bcast(x: pypto.Tensor((24, 128), F32), y: pypto.Tensor((24, 128), F32),
          o1: pypto.Tensor((24, 128), F32), o2: pypto.Tensor((24, 128), F32), o3: pypto.Tensor((24, 1), F32)):
    pypto.set_vec_tile_shapes(8, 128)
    m = pypto.amin(x, dim=-1, keepdim=True)
    s = pypto.sum(y, dim=-1, keepdim=True)
    a = m - x
    b = pypto.maximum(a, s) * m
    c = (s / (pypto.abs(b) + 1.0)) + s
    o1[:] = c
    o2[:] = pypto.minimum(x + s, m) / s
    o3[:] = pypto.exp(m * 0.5) - s
'''

NARROW = HEADER + '''
@pypto.frontend.jit
def narrow(x: pypto.Tensor((16, 4), F32), out: pypto.Tensor((16, 4), F32)):
    pypto.set_vec_tile_shapes(16, 4)
    out[:] = x + 1.0
'''

STRIDED_RAGGED = HEADER + '''
@pypto.frontend.jit
def strided(x: pypto.Tensor((37, 30), F32), out: pypto.Tensor((37, 12), F32), mx: pypto.Tensor((37, 1), F32)):
    pypto.set_vec_tile_shapes(16, 12)
    a = pypto.view(x, [37, 12], [0, 5])
    m = pypto.amax(a, dim=-1, keepdim=True)
    mx[:] = m
    pypto.assemble(a - m, [0, 0], out)
'''

WIDE_TILE = HEADER + '''
@pypto.frontend.jit
def split_row(x: pypto.Tensor((16, 256), F32), out: pypto.Tensor((16, 1), F32)):
    pypto.set_vec_tile_shapes(16, 128)
    out[:] = pypto.sum(x, dim=-1, keepdim=True)
'''

NO_KEEPDIM = HEADER + '''
@pypto.frontend.jit
def col_sum(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((1, 64), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.sum(x, dim=0, keepdim=True)
'''


def _lower(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return pipeline.lower(live.find_kernel(live.load_module(str(path))))


def _both(program, inputs, tmp_path):
    oracle = {k: v.clone() for k, v in inputs.items()}
    torch_interp.run_program(program, oracle)
    traffic = run_host(program, inputs)
    return inputs, oracle, traffic


def _kernel_text(files: dict) -> str:
    """The block's (single, fused) vector kernel."""
    [name] = [n for n in files if n.endswith("_k1.cpp")]
    return files[name]


def _bytes(*shapes):
    n = 0
    for r, c in shapes:
        n += r * c * 4
    return n


def test_row_sum_amax_amin(tmp_path):
    program = _lower(tmp_path, "red", REDUCTIONS)
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(0))
    inputs = {"x": x, "s": torch.zeros(32, 1), "mx": torch.zeros(32, 1), "mn": torch.zeros(32, 1)}
    host, oracle, traffic = _both(program, inputs, tmp_path)
    for k in ("s", "mx", "mn"):
        torch.testing.assert_close(host[k], oracle[k], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(host["s"], x.sum(-1, keepdim=True), rtol=1e-5, atol=1e-5)
    assert torch.equal(host["mx"], x.amax(-1, keepdim=True))
    assert torch.equal(host["mn"], (x * 2.0).amin(-1, keepdim=True) + 1.0)
    assert traffic["gm_to_ub_bytes"] == _bytes((32, 64))
    assert traffic["ub_to_gm_bytes"] == 3 * _bytes((32, 1))
    k = _kernel_text(emit_program(program))
    for api in ("ReduceSum", "ReduceMax", "ReduceMin", "DataCopyPad"):
        assert f"AscendC::{api}(" in k, api


def test_row_softmax_64x256(tmp_path):
    program = _lower(tmp_path, "softmax", softmax_src(64, 256, 16))
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(1)) * 4
    host, oracle, traffic = _both(program, {"x": x, "out": torch.zeros(64, 256)}, tmp_path)
    torch.testing.assert_close(host["out"], oracle["out"], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(host["out"], torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)
    assert (traffic["gm_to_ub_bytes"], traffic["ub_to_gm_bytes"]) == (65536, 65536)
    files = emit_program(program)
    k = _kernel_text(files)
    assert k.count("AscendC::DataCopyPad(") == 2  # one CopyIn, one CopyOut
    for api in ("ReduceMax", "ReduceSum", "GetValue", "Adds", "Exp", "Div"):  # x / s: Duplicate s, Div
        assert f"{api}(" in k, api
    assert "HardEvent::V_S" in k


def test_row_broadcast_forms(tmp_path):
    program = _lower(tmp_path, "bcast", BROADCASTS)
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(24, 128, generator=g), torch.rand(24, 128, generator=g) + 0.1
    inputs = {"x": x, "y": y, "o1": torch.zeros(24, 128), "o2": torch.zeros(24, 128), "o3": torch.zeros(24, 1)}
    host, oracle, traffic = _both(program, inputs, tmp_path)
    for k in ("o1", "o2", "o3"):
        torch.testing.assert_close(host[k], oracle[k], rtol=1e-5, atol=1e-5)
    m, s = x.amin(-1, keepdim=True), y.sum(-1, keepdim=True)
    b = torch.maximum(m - x, s) * m
    torch.testing.assert_close(host["o1"], s / (b.abs() + 1.0) + s, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(host["o2"], torch.minimum(x + s, m) / s, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(host["o3"], torch.exp(m * 0.5) - s, rtol=1e-5, atol=1e-5)
    assert traffic["gm_to_ub_bytes"] == 2 * _bytes((24, 128))
    assert traffic["ub_to_gm_bytes"] == 2 * _bytes((24, 128)) + _bytes((24, 1))


@pytest.mark.parametrize("rows,cols,tile", [(50, 256, 16), (40, 20, 16), (7, 3, 4)])
def test_ragged_softmax(tmp_path, rows, cols, tile):
    program = _lower(tmp_path, "softmax", softmax_src(rows, cols, tile))
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(rows)) * 3
    host, oracle, traffic = _both(program, {"x": x, "out": torch.zeros(rows, cols)}, tmp_path)
    torch.testing.assert_close(host["out"], oracle["out"], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(host["out"], torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)
    assert (traffic["gm_to_ub_bytes"], traffic["ub_to_gm_bytes"]) == (_bytes((rows, cols)),) * 2
    k = _kernel_text(emit_program(program))
    if rows % tile:  # a short last tile
        assert f"{rows}u - r0" in k
    assert k.count("AscendC::DataCopyPad(") == 2


def test_narrow_rows_use_datacopypad(tmp_path):
    program = _lower(tmp_path, "narrow", NARROW)
    x = torch.randn(16, 4, generator=torch.Generator().manual_seed(3))
    host, oracle, traffic = _both(program, {"x": x, "out": torch.zeros(16, 4)}, tmp_path)
    assert torch.equal(host["out"], x + 1.0) and torch.equal(host["out"], oracle["out"])
    assert (traffic["gm_to_ub_bytes"], traffic["ub_to_gm_bytes"]) == (256, 256)


def test_strided_ragged_view_with_short_last_tile(tmp_path):
    program = _lower(tmp_path, "strided", STRIDED_RAGGED)
    x = torch.randn(37, 30, generator=torch.Generator().manual_seed(4))
    inputs = {"x": x, "out": torch.zeros(37, 12), "mx": torch.zeros(37, 1)}
    host, oracle, traffic = _both(program, inputs, tmp_path)
    a = x[:, 5:17]
    assert torch.equal(host["mx"], a.amax(-1, keepdim=True)) and torch.equal(host["mx"], oracle["mx"])
    torch.testing.assert_close(host["out"], a - a.amax(-1, keepdim=True), rtol=0, atol=0)
    assert traffic["gm_to_ub_bytes"] == _bytes((37, 12))  # only the viewed columns
    assert traffic["ub_to_gm_bytes"] == _bytes((37, 12)) + _bytes((37, 1))


def test_reduction_with_a_narrower_tile_keeps_rows_whole(tmp_path):
    # The tile's last dim (128) is half the row: the reduction still sees whole rows in UB.
    program = _lower(tmp_path, "split", WIDE_TILE)
    x = torch.randn(16, 256, generator=torch.Generator().manual_seed(5))
    host, oracle, traffic = _both(program, {"x": x, "out": torch.zeros(16, 1)}, tmp_path)
    torch.testing.assert_close(host["out"], x.sum(-1, keepdim=True), rtol=1e-5, atol=1e-5)
    assert traffic["gm_to_ub_bytes"] == _bytes((16, 256))


def test_column_reduction_accumulates_on_one_core(tmp_path):
    program = _lower(tmp_path, "colsum", NO_KEEPDIM)
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(6))
    host, oracle, _ = _both(program, {"x": x, "out": torch.zeros(1, 64)}, tmp_path)
    torch.testing.assert_close(host["out"], x.sum(0, keepdim=True), rtol=1e-5, atol=1e-5)
    manifest = json.loads(emit_program(program)["manifest.json"])
    assert manifest["kernels"][0]["num_blocks"] == 1


def test_column_reduction_without_keepdim_is_the_same_row(tmp_path):
    """[1, C] and [C] hold the same data: a reduction over the rows without keepdim is the
    keepdim one reshaped (emit/axes.py)."""
    program = _lower(tmp_path, "colsum2", NO_KEEPDIM.replace("keepdim=True", "keepdim=False").replace("(1, 64)", "(64,)"))
    x = torch.randn(16, 64)
    out = torch.full((64,), float("nan"))
    pipeline.run(program, {"x": x, "out": out}, "host")
    torch.testing.assert_close(out, x.sum(0), rtol=1e-5, atol=1e-5)
