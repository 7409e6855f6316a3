"""The op table (pypto_ast/emit/optable.py) held to the code: every op the front end lowers is in
it exactly once; each emitted op and dtype has a numeric kernel (an edge-value case of
test_edge_semantics.py, or a probe here checked against torch on both backends); every Ascend C
call the table lists appears in those kernels; the README's coverage table is the table's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest
import torch

import test_edge_semantics as edge
from pypto_ast import live, pipeline
from pypto_ast.emit import optable
from pypto_ast.emit.index import OPS as INDEX_OPS
from pypto_ast.emit.quant import QUANT_OPS
from pypto_ast.emit.vector import VECTOR_OPS
from pypto_ast.frontend import ops as frontend_ops
from support import needs_cxx

ROOT = Path(__file__).resolve().parents[2]
DT = {"fp32": ("pypto.DT_FP32", torch.float32), "fp16": ("pypto.DT_FP16", torch.float16),
      "int32": ("pypto.DT_INT32", torch.int32), "bf16": ("pypto.DT_BF16", torch.bfloat16),
      "int16": ("pypto.DT_INT16", torch.int16)}


def _random(kind: str, dtype: torch.dtype) -> torch.Tensor:
    """The probe's draw as ir/random.py defines it (checked against Philox itself in test_misc_ops.py)."""
    from pypto_ast.ir import random as rng

    name = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    return rng.generate(kind, (8, 32), name, 42, 9)

# op -> (kernel body with {dt}, {param: shape}, output shape, torch of the inputs); dtypes: the table's
PROBES = {
    "view": ("out[:] = pypto.view(x, [8, 32], [4, 16])", {"x": (16, 64)}, (8, 32), lambda x: x[4:12, 16:48]),
    "assemble": ("pypto.assemble(x, [4, 16], out)", {"x": (8, 32)}, (16, 64), None),
    "reshape": ("out[:] = pypto.reshape(x, [16, 16])", {"x": (8, 32)}, (16, 16), lambda x: x.reshape(16, 16)),
    "unsqueeze": ("out[:] = pypto.unsqueeze(x, 0)", {"x": (8, 32)}, (1, 8, 32), lambda x: x.unsqueeze(0)),
    "transpose": ("out[:] = pypto.transpose(x, 0, 2)", {"x": (4, 8, 16)}, (16, 8, 4), lambda x: x.transpose(0, 2)),
    "concat": ("out[:] = pypto.concat([x, y], 0)", {"x": (8, 32), "y": (8, 32)}, (16, 32),
               lambda x, y: torch.cat([x, y], 0)),
    "expand_clone": ("out[:] = pypto.expand_clone(x, [8, 32])", {"x": (1, 32)}, (8, 32), lambda x: x.expand(8, 32)),
    "full": ("out[:] = pypto.full([8, 32], 3, {dt})", {}, (8, 32), lambda dtype: torch.full((8, 32), 3, dtype=dtype)),
    "zeros": ("out[:] = pypto.zeros([8, 32], dtype={dt})", {}, (8, 32), lambda dtype: torch.zeros(8, 32, dtype=dtype)),
    "ones": ("out[:] = pypto.ones([8, 32], dtype={dt})", {}, (8, 32), lambda dtype: torch.ones(8, 32, dtype=dtype)),
    "uniform": ("out[:] = pypto.uniform([8, 32], [42], [0, 9], [1], {dt})", {}, (8, 32),
                lambda dtype: _random("uniform", dtype)),
    "normal": ("out[:] = pypto.normal([8, 32], [42], [0, 9], [1], {dt})", {}, (8, 32),
               lambda dtype: _random("normal", dtype)),
    "arange": ("out[:] = pypto.reshape(pypto.arange(2, 66, 2, dtype={dt}), [1, 32])", {}, (1, 32),
               lambda dtype: torch.arange(2, 66, 2, dtype=dtype).reshape(1, 32)),
    "conv": ("out[:] = pypto.conv(x, w, {dt}, [2], [1, 2], [2], groups=2)", {"x": (2, 4, 20), "w": (6, 2, 3)}, (2, 6, 10),
             lambda x, w: torch.nn.functional.conv1d(torch.nn.functional.pad(x.double(), [1, 2]), w.double(), stride=2,
                                                     dilation=2, groups=2).to(x.dtype)),
}
# probes whose sums run in another order on each side: within a few ulps of torch (docs/semantics.md)
PROBE_RTOL = {"conv": {torch.float32: 1e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}}


def _probe_source(op: str, dt: str) -> str:
    body, params, out_shape, _ = PROBES[op]
    pdt = DT[dt][0]
    args = [f"{n}: pypto.Tensor({list(s)}, {pdt})" for n, s in params.items()]
    args.append(f"out: pypto.Tensor({list(out_shape)}, {pdt})")
    tile = ", ".join(str(min(d, 16)) for d in out_shape)
    return (f"import pypto\n\n\n@pypto.frontend.jit\ndef probe_{op}({', '.join(args)}):\n"
            f"    pypto.set_vec_tile_shapes({tile})\n    {body.format(dt=pdt)}\n")


def _lowered(source: str, name: str):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        return pipeline.lower_file(path)


@lru_cache(maxsize=None)
def _edge_cases() -> dict:
    return {case.name: case for case in edge._cases()}


def _kernels_of(entry) -> list:
    """(label, kernel source) of every numeric kernel the table names for ``entry``."""
    if entry.cases:
        return [(name, case.source()) for name, case in _edge_cases().items()
                if name.split("/")[0] in entry.cases]
    return [(f"{entry.op}/{dt}", _probe_source(entry.op, dt)) for dt in entry.dtypes]


def _front_end_ops() -> set:
    f = frontend_ops
    return set(f._HANDLERS) | f.BINARY | f.COMPARE | f.UNARY | f.UNARY_BOOL | f.REDUCE


def test_every_op_the_front_end_lowers_is_in_the_table_once():
    emitted = [e.op for e in optable.EMITTED]
    assert len(emitted) == len(set(emitted)), "an op listed twice in EMITTED"
    parts = [set(emitted), set(optable.LOWERED_INTO), set(optable.GAPS)]
    for i, a in enumerate(parts):
        for b in parts[i + 1:]:
            assert not a & b, f"in two parts of the table: {sorted(a & b)}"
    listed = set().union(*parts)
    front = _front_end_ops()
    assert not front - listed, f"lowered by the front end, missing from pypto_ast/emit/optable.py: {sorted(front - listed)}"
    assert not listed - front, f"in the op table, unknown to the front end: {sorted(listed - front)}"
    for op, into in optable.LOWERED_INTO.items():
        assert all(t in set(emitted) | set(optable.GAPS) for t in into), (op, into)


def test_gaps_are_not_emitted_and_emitted_ops_are_the_emitters():
    emitter = VECTOR_OPS | set(INDEX_OPS) | set(QUANT_OPS)
    assert not set(optable.GAPS) & emitter, "the emitter has these now: move them to EMITTED"
    layout = {"view", "assemble", "reshape", "unsqueeze", "transpose", "concat", "matmul", "uniform", "normal", "conv"}
    stray = {optable.OPCODE.get(e.op, e.op) for e in optable.EMITTED} - emitter - layout
    assert not stray, f"EMITTED ops the emitter has no path for: {sorted(stray)}"


@pytest.mark.parametrize("entry", optable.EMITTED, ids=lambda e: e.op)
def test_each_dtype_has_a_numeric_kernel(entry):
    labels = {label for label, _ in _kernels_of(entry)}
    if entry.cases:
        unknown = [c for c in entry.cases if not any(label.startswith(c + "/") for label in labels)]
        assert not unknown, f"{entry.op}: no edge-value case named {unknown}"
    else:
        assert entry.op in PROBES, f"{entry.op}: neither edge-value cases nor a probe"
    covered = {label.split("/")[1] for label in labels}  # "<case>/<dtype>[/<index dtype>]"
    assert set(entry.dtypes) <= covered, f"{entry.op}: dtypes without a numeric kernel: {set(entry.dtypes) - covered}"


@pytest.mark.parametrize("entry", optable.EMITTED, ids=lambda e: e.op)
def test_the_listed_calls_are_what_its_kernels_make(entry):
    text = ""
    for label, source in _kernels_of(entry):
        files = pipeline.emit(_lowered(source, "k"), "ascendc")
        text += "".join(t for n, t in files.items() if n.endswith(".cpp") and n != "control.cpp")
    missing = [api for api in entry.ascendc if not re.search(rf"\b{api}\s*[<(]", text)]
    assert not missing, f"{entry.op}: the table lists {missing}, its kernels do not call them"


PROBE_CASES = [(e.op, dt) for e in optable.EMITTED if not e.cases for dt in e.dtypes]


@needs_cxx
@pytest.mark.parametrize("op,dt", PROBE_CASES, ids=[f"{op}/{dt}" for op, dt in PROBE_CASES])
def test_probe_matches_torch_on_both_backends(tmp_path, op, dt):
    _, params, out_shape, expected = PROBES[op]
    dtype = DT[dt][1]
    g = torch.Generator().manual_seed(3)
    scale = 1.0 if op in PROBE_RTOL else 100.0  # sums of products: keep fp16 finite
    inputs = {n: (torch.randn(s, generator=g) * scale).to(dtype) for n, s in params.items()}
    if op == "assemble":
        want = torch.zeros(out_shape, dtype=dtype)
        want[4:12, 16:48] = inputs["x"]
    else:
        want = expected(*inputs.values()) if params else expected(dtype)
    path = tmp_path / f"probe_{op}.py"
    path.write_text(_probe_source(op, dt), encoding="utf-8")
    kernel = getattr(live.load_module(str(path)), f"probe_{op}")
    for backend in ("interp", "host"):
        out = torch.zeros(out_shape, dtype=dtype)
        args = dict(inputs, out=out)
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        if op in PROBE_RTOL:
            rtol = PROBE_RTOL[op][dtype]
            torch.testing.assert_close(out.double(), want.double(), rtol=rtol, atol=rtol * float(want.abs().max()),
                                       msg=f"{op}/{dt} on {backend}")
        else:
            assert torch.equal(out, want), f"{op}/{dt} on {backend}"


def test_the_readme_table_is_the_op_table():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "document_ops.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
