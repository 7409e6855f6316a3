"""quantize / dequantize (emit/quant.py) and int8 matmul (emit/cube.py) in whole kernels written as
the official tests write them (a ``pypto.loop`` of views with a ``valid_shape``, the result assembled
into the output), on the host backend against the interpreter and torch: bit for bit, including
saturation, ties and NaN/inf (docs/semantics.md "Quantization"); the diagnostics of the op pages."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pypto_ast import pipeline
from pypto_ast.emit.ascendc import emit_program
from support import needs_cxx, write

HEAD = "import pypto\n\n\n"
RANGE = {torch.int8: (-128, 127), torch.uint8: (0, 255)}


def lower(tmp_path, name: str, text: str):
    return pipeline.lower_file(str(write(tmp_path / f"{name}.py", HEAD + text)))


def on_both(program, inputs: dict, out: str) -> torch.Tensor:
    """The output ``out`` on the interpreter and on the host, checked bit-equal; returns it."""
    got = {}
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(program, args, backend)
        got[backend] = args[out]
    h, i = got["host"], got["interp"]
    if h.is_floating_point():
        assert torch.equal(h.view(torch.int32), i.view(torch.int32)), (h, i)
    else:
        assert torch.equal(h, i), (h, i)
    return h


def quantize_ref(x, s, zp, axis, dtype):
    """The rule of docs/semantics.md, in torch: round(x * s [+ zp]) half to even, saturated, NaN -> 0."""
    s = s.unsqueeze(axis) if x.dim() > 1 else s
    t = x * s
    if zp is not None:
        t = t + (zp.unsqueeze(axis) if x.dim() > 1 else zp)
    lo, hi = RANGE[dtype]
    return torch.nan_to_num(torch.round(t), nan=0.0).clamp(lo, hi).to(dtype)


def dequantize_ref(x, s, zp, axis):
    f = x.float()
    if zp is not None:
        f = f - (zp.unsqueeze(axis) if x.dim() > 1 else zp)
    return f * (s.unsqueeze(axis) if x.dim() > 1 else s)


# A [10, 40] input in row blocks of 4 (the last holds 2 valid rows), scale per row.
QUANT_ROWS = '''
@pypto.frontend.jit
def quant_rows(x: pypto.Tensor((10, 40), pypto.DT_FP32), s: pypto.Tensor((10,), pypto.DT_FP32),
               zp: pypto.Tensor((10,), pypto.DT_FP32), q: pypto.Tensor((10, 40), pypto.DT_INT8),
               u: pypto.Tensor((10, 40), pypto.DT_UINT8)):
    for b in pypto.loop(3):
        pypto.set_vec_tile_shapes(4, 40)
        rows = pypto.min(10 - b * 4, 4)
        v = pypto.view(x, [4, 40], [b * 4, 0], valid_shape=[rows, 40])
        vs = pypto.view(s, [4], [b * 4], valid_shape=[rows])
        vz = pypto.view(zp, [4], [b * 4], valid_shape=[rows])
        pypto.assemble(pypto.quantize(v, vs, pypto.DT_INT8, -1), [b * 4, 0], q)
        pypto.assemble(pypto.quantize(v, vs, pypto.DT_UINT8, -1, vz), [b * 4, 0], u)
'''

# Per column (axis -2) of a [6, 40] input, in column blocks of 16 (the last holds 8).
QUANT_COLS = '''
@pypto.frontend.jit
def quant_cols(x: pypto.Tensor((6, 40), pypto.DT_FP32), s: pypto.Tensor((40,), pypto.DT_FP32),
               zp: pypto.Tensor((40,), pypto.DT_FP32), q: pypto.Tensor((6, 40), pypto.DT_INT8),
               u: pypto.Tensor((6, 40), pypto.DT_UINT8)):
    for c in pypto.loop(3):
        pypto.set_vec_tile_shapes(6, 16)
        cols = pypto.min(40 - c * 16, 16)
        v = pypto.view(x, [6, 16], [0, c * 16], valid_shape=[6, cols])
        vs = pypto.view(s, [16], [c * 16], valid_shape=[cols])
        vz = pypto.view(zp, [16], [c * 16], valid_shape=[cols])
        pypto.assemble(pypto.quantize(v, vs, pypto.DT_INT8, -2), [0, c * 16], q)
        pypto.assemble(pypto.quantize(v, vs, pypto.DT_UINT8, 0, vz), [0, c * 16], u)
'''

DEQUANT = '''
@pypto.frontend.jit
def dequant(x: pypto.Tensor((10, 40), pypto.DT_INT8), w: pypto.Tensor((6, 40), pypto.DT_INT16),
            s: pypto.Tensor((10,), pypto.DT_FP32), zp: pypto.Tensor((10,), pypto.DT_FP32),
            sc: pypto.Tensor((40,), pypto.DT_FP32), y: pypto.Tensor((10, 40), pypto.DT_FP32),
            ya: pypto.Tensor((10, 40), pypto.DT_FP32), yc: pypto.Tensor((6, 40), pypto.DT_FP32)):
    for b in pypto.loop(3):
        pypto.set_vec_tile_shapes(4, 40)
        rows = pypto.min(10 - b * 4, 4)
        v = pypto.view(x, [4, 40], [b * 4, 0], valid_shape=[rows, 40])
        vs = pypto.view(s, [4], [b * 4], valid_shape=[rows])
        vz = pypto.view(zp, [4], [b * 4], valid_shape=[rows])
        pypto.assemble(pypto.dequantize(v, vs, pypto.DT_FP32, -1), [b * 4, 0], y)
        pypto.assemble(pypto.dequantize(v, vs, pypto.DT_FP32, 1, vz), [b * 4, 0], ya)
    pypto.set_vec_tile_shapes(6, 40)
    yc[:] = pypto.dequantize(w, sc, pypto.DT_FP32, -2)
'''

# A 3-D input, per row of each matrix (scale [2, 5]).
QUANT_3D = '''
@pypto.frontend.jit
def quant_3d(x: pypto.Tensor((2, 5, 24), pypto.DT_FP32), s: pypto.Tensor((2, 5), pypto.DT_FP32),
             q: pypto.Tensor((2, 5, 24), pypto.DT_INT8), y: pypto.Tensor((2, 5, 24), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 5, 24)
    t = pypto.quantize(x, s, pypto.DT_INT8, -1)
    q[:] = t
    y[:] = pypto.dequantize(t, s, pypto.DT_FP32, 2)
'''


def _values(g, shape, scale=20.0):
    return torch.rand(shape, generator=g) * 2 * scale - scale


@needs_cxx
def test_quantize_per_row_of_ragged_blocks(tmp_path):
    p = lower(tmp_path, "quant_rows", QUANT_ROWS)
    g = torch.Generator().manual_seed(0)
    x, s, zp = _values(g, (10, 40), 300.0), torch.rand(10, generator=g) + 0.01, torch.rand(10, generator=g) * 100
    x[0, :4] = torch.tensor([0.5, 1.5, -2.5, 2.5])  # ties to even with s = 1
    s[0] = 1.0
    inputs = {"x": x, "s": s, "zp": zp, "q": torch.zeros(10, 40, dtype=torch.int8),
              "u": torch.zeros(10, 40, dtype=torch.uint8)}
    q = on_both(p, inputs, "q")
    u = on_both(p, inputs, "u")
    assert torch.equal(q, quantize_ref(x, s, None, -1, torch.int8))
    assert torch.equal(u, quantize_ref(x, s, zp, -1, torch.uint8))
    assert q[0, :4].tolist() == [0, 2, -2, 2]
    assert (q == 127).any() and (q == -128).any() and (u == 0).any() and (u == 255).any()  # saturation reached


@needs_cxx
def test_quantize_per_column_of_ragged_blocks(tmp_path):
    p = lower(tmp_path, "quant_cols", QUANT_COLS)
    g = torch.Generator().manual_seed(1)
    x, s, zp = _values(g, (6, 40), 200.0), torch.rand(40, generator=g) + 0.01, torch.rand(40, generator=g) * 50
    inputs = {"x": x, "s": s, "zp": zp, "q": torch.zeros(6, 40, dtype=torch.int8),
              "u": torch.zeros(6, 40, dtype=torch.uint8)}
    assert torch.equal(on_both(p, inputs, "q"), quantize_ref(x, s, None, -2, torch.int8))
    assert torch.equal(on_both(p, inputs, "u"), quantize_ref(x, s, zp, -2, torch.uint8))


@needs_cxx
def test_dequantize_int8_and_int16_per_row_and_column(tmp_path):
    p = lower(tmp_path, "dequant", DEQUANT)
    g = torch.Generator().manual_seed(2)
    x = torch.randint(-128, 128, (10, 40), generator=g, dtype=torch.int8)
    w = torch.randint(-32768, 32768, (6, 40), generator=g, dtype=torch.int16)
    s, zp, sc = torch.rand(10, generator=g) * 0.14 + 0.01, torch.rand(10, generator=g) * 10, torch.rand(40, generator=g)
    inputs = {"x": x, "w": w, "s": s, "zp": zp, "sc": sc, "y": torch.zeros(10, 40), "ya": torch.zeros(10, 40),
              "yc": torch.zeros(6, 40)}
    assert torch.equal(on_both(p, inputs, "y"), dequantize_ref(x, s, None, -1))
    assert torch.equal(on_both(p, inputs, "ya"), dequantize_ref(x, s, zp, -1))
    assert torch.equal(on_both(p, inputs, "yc"), dequantize_ref(w, sc, None, -2))


@needs_cxx
def test_quantize_then_dequantize_a_3d_value(tmp_path):
    p = lower(tmp_path, "quant_3d", QUANT_3D)
    g = torch.Generator().manual_seed(3)
    x, s = _values(g, (2, 5, 24), 50.0), torch.rand(2, 5, generator=g) * 4
    inputs = {"x": x, "s": s, "q": torch.zeros(2, 5, 24, dtype=torch.int8), "y": torch.zeros(2, 5, 24)}
    q = on_both(p, inputs, "q")
    assert torch.equal(q, quantize_ref(x, s, None, -1, torch.int8))
    assert torch.equal(on_both(p, inputs, "y"), dequantize_ref(q, s, None, -1))


SPECIAL = [0.5, -0.5, 1.5, 2.5, -2.5, 126.5, 127.5, -128.5, 254.5, 255.5, 1e30, -1e30, float("inf"),
           float("-inf"), float("nan"), -0.0, 0.0, 2.0 ** 31, 1e-45]


@pytest.fixture(scope="module")
def rows_program(tmp_path_factory):
    return lower(tmp_path_factory.mktemp("quant"), "quant_rows", QUANT_ROWS)


@needs_cxx
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_quantize_values_on_both_backends_and_torch(rows_program, data):
    """x and the parameters drawn over ties, values past the range, +-inf, NaN (x, scale and zero
    point), -0 and denormals; the program is built once."""
    floats = st.one_of(st.sampled_from(SPECIAL), st.floats(-400, 400, width=32),
                       st.integers(-300, 300).map(lambda k: k + 0.5))
    x = torch.tensor(data.draw(st.lists(floats, min_size=400, max_size=400)), dtype=torch.float32).reshape(10, 40)
    params = st.one_of(st.sampled_from([1.0, 0.5, 2.0, float("nan"), float("inf"), 0.0]), st.floats(2.0 ** -10, 4, width=32))
    s = torch.tensor(data.draw(st.lists(params, min_size=10, max_size=10)), dtype=torch.float32)
    zp = torch.tensor(data.draw(st.lists(st.one_of(st.floats(-200, 300, width=32), st.sampled_from([0.5, float("nan")])),
                                         min_size=10, max_size=10)), dtype=torch.float32)
    inputs = {"x": x, "s": s, "zp": zp, "q": torch.zeros(10, 40, dtype=torch.int8),
              "u": torch.zeros(10, 40, dtype=torch.uint8)}
    assert torch.equal(on_both(rows_program, inputs, "q"), quantize_ref(x, s, None, -1, torch.int8))
    assert torch.equal(on_both(rows_program, inputs, "u"), quantize_ref(x, s, zp, -1, torch.uint8))


def test_quantize_nan_is_zero_and_inf_saturates_on_the_interpreter(tmp_path):
    p = lower(tmp_path, "quant_rows", QUANT_ROWS)
    x = torch.zeros(10, 40)
    x[0, :3] = torch.tensor([float("nan"), float("inf"), float("-inf")])
    inputs = {"x": x, "s": torch.ones(10), "zp": torch.zeros(10), "q": torch.zeros(10, 40, dtype=torch.int8),
              "u": torch.zeros(10, 40, dtype=torch.uint8)}
    pipeline.run(p, inputs, "interp")
    assert inputs["q"][0, :3].tolist() == [0, 127, -128]
    assert inputs["u"][0, :3].tolist() == [0, 255, 0]


# ------------------------------------------------------------------------------------------
# int8 matmul, int32 accumulation (exact).
# ------------------------------------------------------------------------------------------
MATMUL_INT8 = '''
@pypto.frontend.jit
def mm8(a: pypto.Tensor((20, 40), pypto.DT_INT8), b: pypto.Tensor((40, 24), pypto.DT_INT8),
        bt: pypto.Tensor((24, 40), pypto.DT_INT8), at: pypto.Tensor((3, 40, 20), pypto.DT_INT8),
        bb: pypto.Tensor((3, 24, 40), pypto.DT_INT8), bias: pypto.Tensor((1, 24), pypto.DT_INT32),
        c: pypto.Tensor((20, 24), pypto.DT_INT32), d: pypto.Tensor((20, 24), pypto.DT_INT32),
        e: pypto.Tensor((3, 20, 24), pypto.DT_INT32), f: pypto.Tensor((20, 24), pypto.DT_INT32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    pypto.set_vec_tile_shapes(20, 24)
    c[:] = pypto.matmul(a, b, pypto.DT_INT32)
    d[:] = pypto.matmul(a, bt, pypto.DT_INT32, b_trans=True) + c
    e[:] = pypto.matmul(at, bb, pypto.DT_INT32, a_trans=True, b_trans=True)
    f[:] = pypto.matmul(a, bt, pypto.DT_INT32, b_trans=True, extend_params={"bias_tensor": bias})
'''


@needs_cxx
def test_int8_matmul_is_exact_in_int32(tmp_path):
    """Ragged m, n and k (20 x 40 x 24: K in two 32-wide fractals, the second 8 deep) in cube tiles
    of 16; every layout (the transposed ones through the transpose kernel), batched, with a bias,
    and a vector add of the int32 result; extreme operands (-128 * -128 summed 40 times)."""
    p = lower(tmp_path, "mm8", MATMUL_INT8)
    g = torch.Generator().manual_seed(4)

    def i8(*shape):
        return torch.randint(-128, 128, shape, generator=g, dtype=torch.int8)

    a, b, at, bb = i8(20, 40), i8(40, 24), i8(3, 40, 20), i8(3, 24, 40)
    a[0] = -128
    b[:, 0] = -128
    bt = b.t().contiguous()
    bias = torch.randint(-2 ** 30, 2 ** 30, (1, 24), generator=g, dtype=torch.int32)
    inputs = {"a": a, "b": b, "bt": bt, "at": at, "bb": bb, "bias": bias,
              **{k: torch.zeros(s, dtype=torch.int32) for k, s in (("c", (20, 24)), ("d", (20, 24)),
                                                                   ("e", (3, 20, 24)), ("f", (20, 24)))}}
    want = (a.long() @ b.long()).int()
    assert torch.equal(on_both(p, inputs, "c"), want)
    assert want[0, 0] == 40 * 128 * 128
    assert torch.equal(on_both(p, inputs, "d"), want * 2)
    assert torch.equal(on_both(p, inputs, "e"), (at.long().transpose(1, 2) @ bb.long().transpose(1, 2)).int())
    assert torch.equal(on_both(p, inputs, "f"), (a.long() @ b.long() + bias.long()).int())


def test_int8_matmul_kernel_uses_the_cube_api(tmp_path):
    files = emit_program(lower(tmp_path, "mm8", MATMUL_INT8))
    mm = "".join(t for n, t in files.items() if "_mm" in n)
    assert "LocalTensor<int32_t> cL0" in mm and "QuantMode_t::NoQuant" in mm and "GlobalTensor<int8_t> aGm" in mm
    assert "kC0 = 32" in mm  # 16 x 32 int8 fractals


# ------------------------------------------------------------------------------------------
# Diagnostics.
# ------------------------------------------------------------------------------------------
BAD = '''
@pypto.frontend.jit
def bad(x: pypto.Tensor((4, 16), pypto.DT_FP32), s: pypto.Tensor((4,), pypto.DT_FP32),
        q: pypto.Tensor((4, 16), pypto.DT_UINT8)):
    pypto.set_vec_tile_shapes(4, 16)
    q[:] = {expr}
'''


@pytest.mark.parametrize("expr,message", [
    ("pypto.quantize(x, s, pypto.DT_UINT8, -1)", "without zero_points gives INT8"),
    ("pypto.quantize(x, s, pypto.DT_INT8, 0, s)", "with zero_points gives UINT8"),
    ("pypto.quantize(x, s, pypto.DT_INT8, 3)", "along the last two axes only"),
    ("pypto.quantize(x, x, pypto.DT_INT8, -1)", "scale of shape [4, 16]"),
    ("pypto.dequantize(x, s, pypto.DT_FP32, -1)", "takes int8/int16, not fp32"),
])
def test_the_op_pages_rules_are_pto106(tmp_path, expr, message):
    path = write(tmp_path / "bad.py", HEAD + BAD.replace("{expr}", expr))
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(path))
    assert info.value.code == "PTO106", info.value.findings
    assert message in info.value.findings[0][0], info.value.findings[0][0]


AXIS2_3D = '''
@pypto.frontend.jit
def axis2(x: pypto.Tensor((2, 4, 16), pypto.DT_FP32), s: pypto.Tensor((2, 16), pypto.DT_FP32),
          q: pypto.Tensor((2, 4, 16), pypto.DT_INT8)):
    pypto.set_vec_tile_shapes(2, 4, 16)
    q[:] = pypto.quantize(x, s, pypto.DT_INT8, -2)
'''


def test_per_column_of_a_3d_value_is_pto109_and_runs_on_the_interpreter(tmp_path):
    p = lower(tmp_path, "axis2", AXIS2_3D)
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.emit(p, "ascendc")
    assert info.value.code == "PTO109" and "axis -2 of a rank-3 value" in info.value.findings[0][0]
    x, s = torch.randn(2, 4, 16) * 30, torch.rand(2, 16)
    inputs = {"x": x, "s": s, "q": torch.zeros(2, 4, 16, dtype=torch.int8)}
    pipeline.run(p, inputs, "interp")
    assert torch.equal(inputs["q"], quantize_ref(x, s, None, -2, torch.int8))


MM8_SHAPES = '''
@pypto.frontend.jit
def mm8_{m}_{n}_{k}_{ta}_{tb}(a: pypto.Tensor({sa}, pypto.DT_INT8), b: pypto.Tensor({sb}, pypto.DT_INT8),
        c: pypto.Tensor(({m}, {n}), pypto.DT_INT32)):
    pypto.set_cube_tile_shapes([16, 32], [{bk}, {bk}], [32, 32])
    c[:] = pypto.matmul(a, b, pypto.DT_INT32, a_trans={ta}, b_trans={tb})
'''


@needs_cxx
@settings(max_examples=6, deadline=None, derandomize=True)  # fixed examples: reruns hit the build cache
@given(m=st.integers(1, 40), n=st.integers(1, 70), k=st.integers(1, 100), ta=st.booleans(), tb=st.booleans(),
       bk=st.sampled_from([32, 64]))
def test_int8_matmul_of_random_shapes(tmp_path_factory, m, n, k, ta, tb, bk):
    sa, sb = ((k, m) if ta else (m, k)), ((n, k) if tb else (k, n))
    src = MM8_SHAPES.format(m=m, n=n, k=k, ta=ta, tb=tb, sa=sa, sb=sb, bk=bk)
    p = lower(tmp_path_factory.mktemp("mm8"), f"mm8_{m}_{n}_{k}", src)
    g = torch.Generator().manual_seed(m * 10000 + n * 100 + k)
    a = torch.randint(-128, 128, sa, generator=g, dtype=torch.int8)
    b = torch.randint(-128, 128, sb, generator=g, dtype=torch.int8)
    got = on_both(p, {"a": a, "b": b, "c": torch.zeros(m, n, dtype=torch.int32)}, "c")
    want = (a.long().t() if ta else a.long()) @ (b.long().t() if tb else b.long())
    assert torch.equal(got, want.int())


def test_explicit_pypto_spells_the_op_pages_signature(tmp_path):
    """--emit python writes quantize(input, scale, otype, axis, zero_points), which lowers back to the same op."""
    p = lower(tmp_path, "quant_rows", QUANT_ROWS)
    text = pipeline.emit(p, "python")
    assert "pypto.quantize(" in text and ", pypto.DT_UINT8, -1, " in text and ", pypto.DT_INT8, -1)" in text
    again = pipeline.lower_file(str(write(tmp_path / "again.py", text)))
    x, s, zp = torch.randn(10, 40) * 50, torch.rand(10), torch.rand(10) * 9
    for prog in (p, again):
        inputs = {"x": x, "s": s, "zp": zp, "q": torch.zeros(10, 40, dtype=torch.int8),
                  "u": torch.zeros(10, 40, dtype=torch.uint8)}
        pipeline.run(prog, inputs, "interp")
        assert torch.equal(inputs["q"], quantize_ref(x, s, None, -1, torch.int8))
        assert torch.equal(inputs["u"], quantize_ref(x, s, zp, -1, torch.uint8))
