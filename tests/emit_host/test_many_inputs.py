"""A fused kernel reads at most 8 GM values (one VECIN queue buffer each, ascendc.md §5.1): an
expression over more inputs is split into kernels that each read at most 8, with the
interpreter's numbers (it used to stop at PTO109)."""

from __future__ import annotations

import re

import torch

from pypto_ast import live, pipeline
from support import needs_cxx

N = 13


def _kernel(tmp_path):
    params = ", ".join(f"x{i}: pypto.Tensor([16, 64], pypto.DT_FP32)" for i in range(N))
    body = " + ".join(f"pypto.abs(x{i}) * {i + 1}.0" for i in range(N))
    path = tmp_path / "many.py"
    path.write_text(f"import pypto\n\n\n@pypto.frontend.jit\ndef many({params}, out: pypto.Tensor([16, 64], pypto.DT_FP32)):\n"
                    f"    pypto.set_vec_tile_shapes(8, 64)\n    out[:] = {body}\n", encoding="utf-8")
    return live.load_module(str(path)).many


def test_each_kernel_reads_at_most_eight_inputs(tmp_path):
    files = pipeline.emit(pipeline.lower(_kernel(tmp_path)), "ascendc")
    kernels = {n: t for n, t in files.items() if n.endswith(".cpp") and n != "control.cpp"}
    assert len(kernels) >= 2
    for name, text in kernels.items():
        assert len(set(re.findall(r"AscendC::GlobalTensor<\w+> (\w+);", text))) <= 9, name  # inputs + the output


@needs_cxx
def test_an_expression_over_thirteen_inputs_matches_the_interpreter(tmp_path):
    kernel = _kernel(tmp_path)
    gen = torch.Generator().manual_seed(4)
    inputs = {f"x{i}": torch.randn(16, 64, generator=gen) for i in range(N)}
    got = {}
    for backend in ("interp", "host"):
        args = dict(inputs, out=torch.zeros(16, 64))
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        got[backend] = args["out"]
    want = sum(inputs[f"x{i}"].abs() * (i + 1.0) for i in range(N))
    assert torch.equal(got["host"], got["interp"])
    torch.testing.assert_close(got["host"], want, rtol=1e-5, atol=1e-5)
