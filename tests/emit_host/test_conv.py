"""pypto.conv end to end: kernels in the corpus' style (1-D/2-D/3-D, strides, asymmetric paddings,
dilations, groups, bias, relu, a view of a taller tensor assembled row block by row block) run on
the interpreter and on the host build of the emitted Ascend C (emit/conv.py: im2col kernel +
cube matmul per group), both checked against torch.nn.functional.conv*d.

The sums run in other orders on each side (torch's, Mmad's fractals), so results agree within a
few ulps of the output dtype relative to the sum of |terms| (conv of |x| and |w|, + |bias|).
"""

from __future__ import annotations

import hashlib
import os
import tempfile

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pypto_ast import live, pipeline
from pypto_ast.emit.errors import UNSUPPORTED, EmitError
from pypto_ast.pipeline import KernelErrors

from support import needs_cxx

pytestmark = needs_cxx

PDT = {"fp32": "pypto.DT_FP32", "fp16": "pypto.DT_FP16", "bf16": "pypto.DT_BF16"}
TDT = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
RTOL = {"fp32": 2e-6, "fp16": 1e-3, "bf16": 8e-3}  # about one ulp of the result, relative to the sum of |terms|
TILES = "    pypto.set_conv_tile_shapes(pypto.pypto_impl.TileL1Info(1, 1, 16, 16, 16, 16, 16, 1), pypto.pypto_impl.TileL0Info(1, 16, 16, 16))\n"


_DIR = os.path.join(tempfile.gettempdir(), "pypto-conv-tests")  # stable paths: the host build cache keys on them


def _kernel(source: str, name: str):
    text = "import pypto\n\n\n" + source
    os.makedirs(_DIR, exist_ok=True)
    path = os.path.join(_DIR, f"{name}_{hashlib.sha256(text.encode()).hexdigest()[:12]}.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return getattr(live.load_module(path), name)


def conv_source(name, xs, ws, os_, dt, strides, pads, dils, groups=1, bias=None, relu=False) -> str:
    """A jit kernel ``out.move(pypto.conv(fmap, weight, ...))`` (test_conv.py's create_conv_kernel form)."""
    params = [f"fmap: pypto.Tensor({list(xs)}, {PDT[dt]})", f"weight: pypto.Tensor({list(ws)}, {PDT[dt]})"]
    extend = {}
    if bias is not None:
        params.append(f"bias: pypto.Tensor([{ws[0]}], {PDT[bias]})")
        extend["'bias_tensor'"] = "bias"
    if relu:
        extend["'relu_type'"] = "pypto.pypto_impl.ConvReLuType.RELU"
    params.append(f"out: pypto.Tensor({list(os_)}, {PDT[dt]})")
    ext = "{" + ", ".join(f"{k}: {v}" for k, v in extend.items()) + "}"
    return (f"@pypto.frontend.jit\ndef {name}({', '.join(params)}):\n{TILES}"
            f"    output = pypto.conv(fmap, weight, {PDT[dt]}, {list(strides)}, {list(pads)}, {list(dils)}, "
            f"extend_params={ext}, groups={groups})\n    out.move(output)\n")


def out_shape(xs, ws, strides, pads, dils):
    nd = len(xs) - 2
    return (xs[0], ws[0]) + tuple((xs[2 + i] + pads[2 * i] + pads[2 * i + 1] - dils[i] * (ws[2 + i] - 1) - 1)
                                  // strides[i] + 1 for i in range(nd))


def torch_conv(x, w, b, strides, pads, dils, groups, relu=False, absolute=False):
    nd = x.dim() - 2
    pad = []
    for i in reversed(range(nd)):
        pad += [pads[2 * i], pads[2 * i + 1]]
    x, w = x.double(), w.double()
    b = None if b is None else b.double()
    if absolute:
        x, w, b = x.abs(), w.abs(), None if b is None else b.abs()
    y = (F.conv1d, F.conv2d, F.conv3d)[nd - 1](F.pad(x, pad), w, b, stride=strides, dilation=dils, groups=groups)
    return torch.relu(y) if relu else y


def run_both(kernel, inputs: dict, oshape, dt):
    """{backend: out} for the interpreter and the host build."""
    outs = {}
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        args["out"] = torch.full(oshape, 7.0, dtype=TDT[dt])
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        outs[backend] = args["out"]
    return outs


def check(outs: dict, inputs: dict, dt, strides, pads, dils, groups, relu=False):
    x, w, b = inputs["fmap"], inputs["weight"], inputs.get("bias")
    want = torch_conv(x, w, b, strides, pads, dils, groups, relu)
    scale = torch_conv(x, w, b, strides, pads, dils, groups, absolute=True)
    tol = RTOL[dt] * scale + 1e-30
    for backend, got in outs.items():
        assert got.shape == want.shape, backend
        err = (got.double() - want).abs()
        assert bool((err <= tol).all()), f"{backend}: max error {float(err.max())} (scale {float(scale.max())})"
    # host and interp: the same numbers but for the order of the sums
    assert bool(((outs["host"].double() - outs["interp"].double()).abs() <= 2 * tol).all())


def _inputs(xs, ws, dt, bias=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    d = {"fmap": (torch.rand(xs, generator=g) * 2 - 1).to(TDT[dt]),
         "weight": (torch.rand(ws, generator=g) * 2 - 1).to(TDT[dt])}
    if bias is not None:
        d["bias"] = (torch.rand(ws[0], generator=g) * 2 - 1).to(TDT[bias])
    return d


CASES = [  # (id, x shape, w shape, dtype, strides, paddings, dilations, groups, bias dtype, relu)
    ("conv1d_stride_dil_groups_bias", (1, 6, 23), (9, 2, 3), "fp16", [2], [1, 1], [2], 3, "fp16", False),
    ("conv1d_fp32_pad", (2, 5, 17), (4, 5, 4), "fp32", [1], [2, 1], [1], 1, None, False),
    ("conv2d_bias_asym", (2, 3, 9, 13), (5, 3, 3, 2), "fp16", [1, 2], [1, 0, 2, 1], [1, 1], 1, "fp16", False),
    ("conv2d_fp32_relu", (1, 4, 7, 11), (6, 4, 3, 3), "fp32", [2, 1], [1, 1, 0, 2], [1, 2], 1, "fp32", True),
    ("conv3d_groups", (1, 4, 4, 6, 7), (6, 2, 2, 3, 2), "fp16", [1, 2, 1], [0, 1, 1, 0, 1, 1], [1, 1, 2], 2, None,
     False),
    ("conv3d_bf16_bias", (1, 4, 3, 5, 9), (4, 2, 3, 3, 3), "bf16", [2, 2, 2], [1, 1, 1, 1, 1, 1], [1, 1, 2], 2, "bf16",
     False),
    ("conv2d_bf16_fp32_bias", (1, 3, 6, 6), (5, 3, 2, 2), "bf16", [1, 1], [0, 0, 0, 0], [1, 1], 1, "fp32", False),
    ("conv2d_k_over_tile", (1, 16, 5, 6), (20, 16, 3, 3), "fp16", [1, 1], [1, 1, 1, 1], [1, 1], 1, "fp16", False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conv_matches_torch_on_both_backends(case):
    name, xs, ws, dt, strides, pads, dils, groups, bias, relu = case
    os_ = out_shape(xs, ws, strides, pads, dils)
    kernel = _kernel(conv_source(name, xs, ws, os_, dt, strides, pads, dils, groups, bias, relu), name)
    inputs = _inputs(xs, ws, dt, bias)
    check(run_both(kernel, inputs, os_, dt), inputs, dt, strides, pads, dils, groups, relu)


def test_fp32_bias_of_a_bf16_conv_is_added_exactly():
    """The fp32 bias rides the GEMM as three bf16 parts: with a zero weight the output is the bias
    rounded once to bf16, not a bf16 rounding of each part."""
    xs, ws = (1, 2, 4, 4), (3, 2, 1, 1)
    kernel = _kernel(conv_source("bias_only", xs, ws, (1, 3, 4, 4), "bf16", [1, 1], [0] * 4, [1, 1], 1, "fp32"),
                     "bias_only")
    inputs = _inputs(xs, ws, "bf16", "fp32")
    inputs["weight"].zero_()
    inputs["bias"] = torch.tensor([1 + 2 ** -9 + 2 ** -20, -3.0e-3 * (1 + 2 ** -12), 12345.678], dtype=torch.float32)
    outs = run_both(kernel, inputs, (1, 3, 4, 4), "bf16")
    want = inputs["bias"].to(torch.bfloat16).reshape(1, 3, 1, 1).expand(1, 3, 4, 4)
    for backend, got in outs.items():
        assert torch.equal(got, want), backend


DYN_SOURCE = '''@pypto.frontend.jit
def rows_kernel(x: pypto.Tensor([1, 4, pypto.DYNAMIC, 12], pypto.DT_FP32), w: pypto.Tensor([6, 4, 3, 3], pypto.DT_FP32),
                out: pypto.Tensor([1, 6, pypto.DYNAMIC, 10], pypto.DT_FP32)):
    tile = 4
    pypto.set_vec_tile_shapes(1, 6, 4, 10)
    for i in pypto.loop(0, (out.shape[2] + tile - 1) // tile, 1, name="LOOP_h"):
        left = (x.shape[2] - i * tile).min(tile + 2)
        xv = pypto.view(x, [1, 4, tile + 2, 12], [0, 0, i * tile, 0], valid_shape=[1, 4, left, 12])
        y = pypto.conv(xv, w, pypto.DT_FP32, [1, 1], [0, 0, 0, 0], [1, 1],
                       extend_params={"relu_type": pypto.pypto_impl.ConvReLuType.RELU})
        pypto.assemble(y, [0, 0, i * tile, 0], out)
'''


def _rows_run(h_in, h_out, backend):
    kernel = _kernel(DYN_SOURCE, "rows_kernel")
    g = torch.Generator().manual_seed(1)
    x, w = torch.rand((1, 4, h_in, 12), generator=g) - 0.5, torch.rand((6, 4, 3, 3), generator=g) - 0.5
    out = torch.full((1, 6, h_out, 10), 7.0)
    args = {"x": x, "w": w, "out": out}
    pipeline.run(pipeline.lower(kernel, args), args, backend)
    return x, w, out


def test_view_of_a_taller_tensor_row_blocks_assembled():
    """The corpus' dynamic-Hout form: the views' rows are not evenly spaced (channels of a taller
    tensor), read through N-D strides; each result block assembled into the taller output."""
    for backend in ("interp", "host"):
        x, w, out = _rows_run(18, 16, backend)
        want = torch.relu(F.conv2d(x.double(), w.double()))
        assert torch.allclose(out.double(), want, rtol=1e-5, atol=1e-5), backend


@pytest.mark.parametrize("h_in,h_out", [(12, 10), (13, 11)])
def test_partially_valid_view_input_convolves_its_valid_rows(h_in, h_out):
    """With 12 input rows the last view holds 4 of its 6: both backends convolve those (2 output
    rows, the padding's zeros past them) and assemble only the valid rows of the result; the host
    never reads the rows the view does not hold.  Bit for bit (fp32, the same sums)."""
    outs = {backend: _rows_run(h_in, h_out, backend) for backend in ("interp", "host")}
    x, w, _ = outs["host"]
    want = torch.relu(F.conv2d(x.double(), w.double()))
    assert torch.equal(outs["host"][2], outs["interp"][2])
    assert torch.allclose(outs["host"][2].double(), want, rtol=1e-5, atol=1e-5)


def test_a_partially_valid_result_read_other_than_by_assemble_is_pto109(tmp_path):
    source = DYN_SOURCE.replace("        pypto.assemble(y, [0, 0, i * tile, 0], out)",
                                "        pypto.assemble(y * 2.0, [0, 0, i * tile, 0], out)")
    kernel = _kernel(source, "rows_kernel")
    args = {"x": torch.rand(1, 4, 12, 12), "w": torch.rand(6, 4, 3, 3), "out": torch.zeros(1, 6, 10, 10)}
    with pytest.raises((EmitError, KernelErrors)) as info:
        pipeline.emit(pipeline.lower(kernel, args), "ascendc")
    assert "reading the partially valid conv result %" in str(info.value) and UNSUPPORTED in str(info.value)


@pytest.mark.parametrize("call,message", [
    ("pypto.conv(fmap, weight, pypto.DT_FP16, [1], [0, 0], [1], transposed=True)", "transposed conv"),
    ("pypto.conv(fmap, weight, pypto.DT_FP32, [1], [0, 0], [1])", "output data type"),
    ("pypto.conv(fmap, weight, pypto.DT_FP16, [1, 1], [0, 0], [1])", "strides of a 1-D conv"),
    ("pypto.conv(fmap, weight, pypto.DT_FP16, [1], [0, 0], [1], groups=3)", "groups=3"),
    ("pypto.conv(fmap, weight, pypto.DT_FP16, [1], [0, 0], [1], extend_params={'bias_tensor': b32})", "fp16 bias"),
])
def test_what_pypto_refuses_is_pto106(tmp_path, call, message):
    path = tmp_path / "bad.py"
    path.write_text("import pypto\n\n\n@pypto.frontend.jit\n"
                    "def bad(fmap: pypto.Tensor([1, 4, 8], pypto.DT_FP16), weight: pypto.Tensor([4, 4, 3], pypto.DT_FP16),\n"
                    "        b32: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([1, 4, 6], pypto.DT_FP16)):\n"
                    f"    out.move({call})\n", encoding="utf-8")
    with pytest.raises(KernelErrors) as info:
        pipeline.lower_file(str(path))
    assert info.value.code == "PTO106" and message in str(info.value), (info.value.code, str(info.value))


def test_quantized_conv_is_pto109_naming_op_dtype_and_form(tmp_path):
    path = tmp_path / "quant.py"
    path.write_text("import pypto\n\n\n@pypto.frontend.jit\n"
                    "def quant(fmap: pypto.Tensor([1, 4, 8], pypto.DT_FP16), weight: pypto.Tensor([4, 4, 3], pypto.DT_FP16),\n"
                    "          out: pypto.Tensor([1, 4, 6], pypto.DT_FP16)):\n"
                    "    out.move(pypto.conv(fmap, weight, pypto.DT_FP16, [1], [0, 0], [1], extend_params={'scale': 0.5}))\n",
                    encoding="utf-8")
    with pytest.raises((EmitError, KernelErrors)) as info:
        pipeline.emit(pipeline.lower_file(str(path)), "ascendc")
    assert getattr(info.value, "code", "PTO109") == "PTO109", info.value.code
    assert f"op 'conv' on fp16 with a scale (a quantized 1-D conv): {UNSUPPORTED}" in str(info.value)


@st.composite
def conv_problems(draw):
    nd = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([1, 2]))
    cin_g, cout_g = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    strides = [draw(st.integers(1, 2)) for _ in range(nd)]
    dils = [draw(st.integers(1, 2)) for _ in range(nd)]
    pads = []
    for k in ks:
        pads += [draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))]
    spatial = [draw(st.integers(d * (k - 1) + 1, d * (k - 1) + (6 if nd < 3 else 3))) for k, d in zip(ks, dils)]
    xs = (draw(st.integers(1, 2)), cin_g * groups) + tuple(spatial)
    ws = (cout_g * groups, cin_g) + tuple(ks)
    dt = draw(st.sampled_from(["fp16", "fp32"]))
    bias = draw(st.sampled_from([None, dt]))
    return xs, ws, dt, strides, pads, dils, groups, bias, draw(st.booleans())


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_problems(), st.integers(0, 2 ** 16))
def test_random_small_convs_host_interp_torch(problem, seed):
    xs, ws, dt, strides, pads, dils, groups, bias, relu = problem
    os_ = out_shape(xs, ws, strides, pads, dils)
    kernel = _kernel(conv_source("rnd", xs, ws, os_, dt, strides, pads, dils, groups, bias, relu), "rnd")
    inputs = _inputs(xs, ws, dt, bias, seed)
    check(run_both(kernel, inputs, os_, dt), inputs, dt, strides, pads, dils, groups, relu)


STRIDED_STORE_SOURCE = '''@pypto.frontend.jit
def blocks_kernel(x: pypto.Tensor([1, 3, 2, 8], pypto.DT_FP16), out: pypto.Tensor([1, 3, pypto.DYNAMIC, 8], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(1, 3, 2, 8)
    for i in pypto.loop(0, out.shape[2] // 2, 1, name="LOOP_h"):
        y = x * 2.0
        pypto.assemble(y, [0, 0, i * 2, 0], out)
'''


def test_assemble_into_rows_that_are_not_evenly_spaced():
    """A computed [1, C, 2, W] block into a [1, C, H, W] tensor: each channel's two rows land H rows
    apart (emit/strided.py), for any computed value, not only a conv's."""
    kernel = _kernel(STRIDED_STORE_SOURCE, "blocks_kernel")
    x = (torch.rand(1, 3, 2, 8) * 4 - 2).to(torch.float16)
    for backend in ("interp", "host"):
        out = torch.zeros(1, 3, 6, 8, dtype=torch.float16)
        args = {"x": x, "out": out}
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        assert torch.equal(out, (x * 2).repeat(1, 1, 3, 1)), backend
