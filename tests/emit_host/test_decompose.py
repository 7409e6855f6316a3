"""var, pad, tril and triu on the host: composed from ops the kernels have (emit/decompose.py),
with the interpreter's numbers (pad, tril, triu bit for bit; var within fp32 rounding of the
two-pass sum) and torch's."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pypto_ast import live, pipeline
from support import needs_cxx

PDT = {"fp32": ("pypto.DT_FP32", torch.float32), "fp16": ("pypto.DT_FP16", torch.float16),
       "bf16": ("pypto.DT_BF16", torch.bfloat16)}


def _kernel(tmp_path, body: str, x_shape, out_shape, dt: str, name: str):
    pdt = PDT[dt][0]
    tile = ", ".join(str(min(d, 64)) for d in out_shape)
    src = (f"import pypto\n\n\n@pypto.frontend.jit\n"
           f"def {name}(x: pypto.Tensor({list(x_shape)}, {pdt}), out: pypto.Tensor({list(out_shape)}, {pdt})):\n"
           f"    pypto.set_vec_tile_shapes({tile})\n    out[:] = {body}\n")
    path = tmp_path / f"{name}.py"
    path.write_text(src, encoding="utf-8")
    return getattr(live.load_module(str(path)), name)


def _both(kernel, x: torch.Tensor, out_shape) -> dict:
    got = {}
    for backend in ("interp", "host"):
        out = torch.zeros(out_shape, dtype=x.dtype)
        args = {"x": x.clone(), "out": out}
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        got[backend] = out
    return got


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(((a == b) & (torch.signbit(a) == torch.signbit(b)) | (a.isnan() & b.isnan())).all())


def test_the_emitter_composes_them_from_its_own_ops(tmp_path):
    kernel = _kernel(tmp_path, "pypto.var(x, -1, keepdim=True)", (8, 64), (8, 1), "fp32", "kv")
    files = pipeline.emit(pipeline.lower(kernel), "ascendc")
    text = "".join(t for n, t in files.items() if n.endswith(".cpp"))
    assert "AscendC::ReduceSum" in text or "ReduceSum" in text
    kernel = _kernel(tmp_path, "pypto.tril(x)", (8, 64), (8, 64), "fp32", "kt")
    text = "".join(t for n, t in pipeline.emit(pipeline.lower(kernel), "ascendc").items() if n.endswith(".cpp"))
    assert "AscendC::Select" in text and "CMPMODE::LE" in text


@needs_cxx
@pytest.mark.parametrize("dt", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("dim,keepdim,correction", [(-1, True, 1), (0, True, 1), (-1, False, 0), (None, False, 1)])
def test_var_is_torchs_on_both_backends(tmp_path, dt, dim, keepdim, correction):
    shape = (6, 40)
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(5)) * 3 + 10).to(PDT[dt][1])
    want = torch.var(x.float(), dim=dim, correction=correction, keepdim=keepdim).to(x.dtype)
    out_shape = tuple(want.shape) or (1,)
    body = f"pypto.var(x, {dim}, correction={correction}, keepdim={keepdim})"
    if not want.shape:
        body = f"pypto.reshape({body}, [1])"
    got = _both(_kernel(tmp_path, body, shape, out_shape, dt, "kvar"), x, out_shape)
    rtol = {"fp32": 1e-5, "fp16": 1e-3, "bf16": 8e-3}[dt]
    for backend, value in got.items():
        torch.testing.assert_close(value.float().reshape(want.shape), want.float(), rtol=rtol, atol=0,
                                   msg=f"var on {backend}")


@needs_cxx
def test_var_of_a_constant_row_is_exactly_zero_and_of_one_element_with_correction_nan(tmp_path):
    x = torch.full((4, 32), 7.25)
    got = _both(_kernel(tmp_path, "pypto.var(x, -1, keepdim=True)", (4, 32), (4, 1), "fp32", "kc"), x, (4, 1))
    assert all(bool((v == 0).all()) for v in got.values())
    x = torch.randn(4, 1)
    got = _both(_kernel(tmp_path, "pypto.var(x, -1, keepdim=True)", (4, 1), (4, 1), "fp32", "k1"), x, (4, 1))
    assert _same_bits(got["host"], got["interp"]) and bool(got["host"].isnan().all())


@needs_cxx
@settings(max_examples=12)
@given(rows=st.integers(1, 20), cols=st.integers(1, 70), right=st.integers(0, 9), bottom=st.integers(0, 5),
       value=st.sampled_from([0.0, 1.5, float("inf"), float("-inf")]), dt=st.sampled_from(["fp32", "fp16"]))
def test_pad_is_torchs_bit_for_bit(tmp_path_factory, rows, cols, right, bottom, value, dt):
    tmp = tmp_path_factory.mktemp("pad")
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(rows * 71 + cols)).to(PDT[dt][1])
    want = torch.nn.functional.pad(x, (0, right, 0, bottom), value=value)
    body = f"pypto.pad(x, [0, {right}, 0, {bottom}], value={value!r})".replace("inf", "float('inf')")
    got = _both(_kernel(tmp, body, (rows, cols), tuple(want.shape), dt, "kp"), x, tuple(want.shape))
    for backend, v in got.items():
        assert _same_bits(v, want), backend


@needs_cxx
@settings(max_examples=12)
@given(lead=st.sampled_from([(), (3,), (2, 2)]), rows=st.integers(1, 24), cols=st.integers(1, 70),
       diagonal=st.integers(-30, 30), op=st.sampled_from(["tril", "triu"]), dt=st.sampled_from(["fp32", "fp16", "bf16"]))
def test_tril_and_triu_are_torchs_bit_for_bit(tmp_path_factory, lead, rows, cols, diagonal, op, dt):
    tmp = tmp_path_factory.mktemp("tri")
    shape = lead + (rows, cols)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(math.prod(shape))).to(PDT[dt][1])
    x.view(-1)[::7] = float("nan")  # a NaN above or below the diagonal must not leak into the zeros
    want = getattr(torch, op)(x, diagonal)
    got = _both(_kernel(tmp, f"pypto.{op}(x, {diagonal})", shape, shape, dt, "kt"), x, shape)
    for backend, v in got.items():
        assert _same_bits(v, want), (backend, op, diagonal)


def test_var_takes_correction_third_and_refuses_a_partially_valid_input(tmp_path):
    """``pypto.var(x, 0, 1.0, True)`` is (dim, correction, keepdim), as the repository calls it; the
    count of a partially valid view is known only at run time, so that var is PTO109, never a
    variance divided by the tile's size."""
    path = tmp_path / "pv.py"
    path.write_text("import pypto\n\n\n@pypto.frontend.jit\n"
                    "def pv(x: pypto.Tensor([100], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):\n"
                    "    pypto.set_vec_tile_shapes(32)\n"
                    "    for i in pypto.loop(4):\n"
                    "        t = pypto.view(x, [32], [i * 32], valid_shape=[(100 - i * 32).min(32)])\n"
                    "        pypto.assemble(pypto.var(t, 0, 1.0, True), [i], out)\n", encoding="utf-8")
    program = pipeline.lower_file(str(path))
    assert "correction = 1, dim = 0, keepdim = true" in pipeline.emit(program, "ir", spans=False)
    with pytest.raises(pipeline.KernelErrors) as caught:
        pipeline.emit(program, "ascendc")
    assert caught.value.code == "PTO109" and "op 'var'" in caught.value.findings[0][0]
