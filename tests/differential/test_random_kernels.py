"""Random kernels, differential: hypothesis writes PyPTO kernel *source* (random tiles, shapes
that are multiples of them, fp32/fp16, a chain of elementwise/unary ops, an optional row
reduction, optionally a loop over row blocks with view/assemble, unrolled or not, with a
ragged or dynamic last block), the pipeline loads, lowers and interprets it, and the result
must equal the same chain computed directly with torch on the whole tensors.

Every op rounds once to the tensor's dtype in both worlds (torch fp16 arithmetic computes
in fp32 and rounds per op, like the interpreter), and the scalar constants are exact in
fp16, so the tolerances only absorb summation order.

    HYPOTHESIS_PROFILE=long python -m pytest tests/differential/test_random_kernels.py
"""

from __future__ import annotations

import os
import tempfile
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
from hypothesis import given, note
from hypothesis import strategies as st

from pypto_ast import live, pipeline

# Constants exactly representable in fp16 (and divisors that are powers of two), so the
# Element rule (scalars rounded to the tensor dtype first) cannot make the worlds differ.
CONSTS = [0.5, 1.25, -0.75, 2.0, 0.375, -3.0]
DIVISORS = [0.5, 2.0, 4.0]


@dataclass(frozen=True)
class Step:
    """One link of the chain: kernel source (``{v}`` = the running value, ``{y}`` = the second
    input) and the torch function computing the same thing."""

    source: str
    torch_fn: Callable
    fp32_only: bool = False


def _steps() -> list:
    t = torch
    steps = [
        Step("{v} + {y}", lambda v, y: v + y),
        Step("{v} - {y}", lambda v, y: v - y),
        Step("{v} * {y}", lambda v, y: v * y),
        Step("pypto.maximum({v}, {y})", lambda v, y: t.maximum(v, y)),
        Step("pypto.minimum({v}, {y})", lambda v, y: t.minimum(v, y)),
        Step("pypto.abs({v})", lambda v, y: v.abs()),
        Step("-{v}", lambda v, y: -v),
        Step("pypto.relu({v})", lambda v, y: t.relu(v)),
        Step("pypto.exp(-pypto.abs({v}))", lambda v, y: t.exp(-v.abs())),
        Step("pypto.sqrt(pypto.abs({v}) + 1.0)", lambda v, y: t.sqrt(v.abs() + 1.0)),
        Step("pypto.rsqrt(pypto.abs({v}) + 1.0)", lambda v, y: t.rsqrt(v.abs() + 1.0)),
        Step("pypto.reciprocal(pypto.abs({v}) + 0.5)", lambda v, y: t.reciprocal(v.abs() + 0.5)),
        Step("pypto.clip({v}, -1.5, 1.5)", lambda v, y: t.clamp(v, -1.5, 1.5)),
        Step("pypto.where({v} > {y}, {v}, {y} * 0.5)", lambda v, y: t.where(v > y, v, y * 0.5)),
        Step("pypto.sigmoid({v})", lambda v, y: t.sigmoid(v), fp32_only=True),
        Step("pypto.sin({v})", lambda v, y: t.sin(v), fp32_only=True),
        Step("pypto.cos({v})", lambda v, y: t.cos(v), fp32_only=True),
    ]
    for c in CONSTS:
        steps.append(Step(f"{{v}} + {c}", lambda v, y, c=c: v + c))
        steps.append(Step(f"{{v}} * {c}", lambda v, y, c=c: v * c))
        steps.append(Step(f"{c} - {{v}}", lambda v, y, c=c: c - v))
    for c in DIVISORS:
        steps.append(Step(f"{{v}} / {c}", lambda v, y, c=c: v / c))
    return steps


STEPS = _steps()


@dataclass
class Spec:
    dtype: str  # "fp32" | "fp16"
    tile: tuple
    rows: int  # rows of the example inputs
    cols: int
    chain: list
    reduction: Optional[str]  # None | "sum" | "amax" | "amin"
    layout: str  # "whole" | "loop" | "loop_unroll"
    block: int = 0  # rows per block (loop layouts)
    unroll: Optional[list] = None
    ragged: bool = False  # rows is not a multiple of block: valid_shape on the last block
    dynamic: bool = False  # rows annotated pypto.DYNAMIC
    source: str = field(default="", repr=False)


@st.composite
def specs(draw) -> Spec:
    dtype = draw(st.sampled_from(["fp32", "fp16"]))
    tile_r = draw(st.sampled_from([4, 8, 16]))
    tile_c = draw(st.sampled_from([16, 32, 64]))  # tile_c * bytes is 32-byte aligned for both dtypes
    cols = tile_c * draw(st.integers(1, 3))
    allowed = [s for s in STEPS if dtype == "fp32" or not s.fp32_only]
    chain = draw(st.lists(st.sampled_from(allowed), min_size=1, max_size=6))
    reduction = draw(st.sampled_from([None, "sum", "amax", "amin"]))
    layout = draw(st.sampled_from(["whole", "loop", "loop_unroll"]))
    if layout == "whole":
        rows = tile_r * draw(st.integers(1, 4))
        return Spec(dtype, (tile_r, tile_c), rows, cols, chain, reduction, layout)
    block = tile_r * draw(st.sampled_from([1, 2]))
    nblk = draw(st.integers(1, 12))
    unroll = draw(st.sampled_from([None, [2, 1], [4, 1], [8, 2, 1], [1, 4]]))
    if layout == "loop_unroll":
        unroll = draw(st.sampled_from([[4, 2], [2], [8, 4, 2]]))  # 1 is appended by loop_unroll
    ragged = draw(st.booleans())
    dynamic = draw(st.booleans())
    rows = block * nblk - (draw(st.integers(1, block - 1)) if ragged and block > 1 else 0)
    ragged = rows % block != 0
    return Spec(dtype, (tile_r, tile_c), rows, cols, chain, reduction, layout, block, unroll, ragged, dynamic)


# -- kernel source ------------------------------------------------------------------------
def _chain_source(spec: Spec, first: str, second: str) -> list:
    lines, v = [], first
    for n, step in enumerate(spec.chain):
        lines.append(f"v{n} = {step.source.format(v=v, y=second)}")
        v = f"v{n}"
    return lines


def _reduce_source(spec: Spec, v: str) -> Optional[str]:
    if spec.reduction is None:
        return None
    if spec.reduction == "sum" and spec.dtype == "fp16":  # sum is fp32-only in pypto
        return f"pypto.sum(pypto.cast({v}, pypto.DT_FP32), -1, keepdim=True)"
    return f"pypto.{spec.reduction}({v}, -1, keepdim=True)"


def reduce_dtype(spec: Spec) -> str:
    return "fp32" if spec.reduction == "sum" else spec.dtype


def kernel_source(spec: Spec) -> str:
    dt = {"fp32": "pypto.DT_FP32", "fp16": "pypto.DT_FP16"}
    rows = "pypto.DYNAMIC" if spec.dynamic else str(spec.rows)
    params = [f"x: pypto.Tensor([{rows}, {spec.cols}], {dt[spec.dtype]})",
              f"y: pypto.Tensor([{rows}, {spec.cols}], {dt[spec.dtype]})",
              f"out: pypto.Tensor([{rows}, {spec.cols}], {dt[spec.dtype]})"]
    if spec.reduction:
        params.append(f"red: pypto.Tensor([{rows}, 1], {dt[reduce_dtype(spec)]})")
    body = [f"pypto.set_vec_tile_shapes({spec.tile[0]}, {spec.tile[1]})"]
    if spec.layout == "whole":
        chain = _chain_source(spec, "x", "y")
        v = f"v{len(spec.chain) - 1}"
        body += chain + [f"out[:] = {v}"]
        if spec.reduction:
            body.append(f"red[:] = {_reduce_source(spec, v)}")
    else:
        br, c = spec.block, spec.cols
        body.append("n = x.shape[0]" if spec.dynamic else f"n = {spec.rows}")
        nblk = f"(n + {br - 1}) // {br}"
        if spec.layout == "loop":
            unroll = f", unroll_list={spec.unroll}" if spec.unroll else ""
            body.append(f"for i in pypto.loop({nblk}, name=\"blk\", idx_name=\"i\"{unroll}):")
            height = str(br)
        else:
            body.append(f"for i, f in pypto.loop_unroll(0, {nblk}, 1, name=\"blk\", idx_name=\"i\", "
                        f"unroll_list={spec.unroll}):")
            height = f"{br} * f"
        inner = []
        valid = ""
        if spec.ragged or spec.dynamic:
            inner.append(f"rows = pypto.min({height}, n - i * {br})")
            valid = f", valid_shape=[rows, {c}]"
        inner.append(f"xb = pypto.view(x, [{height}, {c}], [i * {br}, 0]{valid})")
        if any("{y}" in step.source for step in spec.chain):
            inner.append(f"yb = pypto.view(y, [{height}, {c}], [i * {br}, 0]{valid})")
        chain = _chain_source(spec, "xb", "yb")
        v = f"v{len(spec.chain) - 1}"
        inner += chain + [f"pypto.assemble({v}, [i * {br}, 0], out)"]
        if spec.reduction:
            inner.append(f"pypto.assemble({_reduce_source(spec, v)}, [i * {br}, 0], red)")
        body += ["    " + line for line in inner]
    text = "import pypto\n\n\n@pypto.frontend.jit\ndef random_kernel(\n"
    text += "".join(f"    {p},\n" for p in params) + "):\n"
    text += textwrap.indent("\n".join(body), "    ") + "\n"
    return text


# -- the torch twin ---------------------------------------------------------------------
def inputs_for(spec: Spec, seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    dtype = {"fp32": torch.float32, "fp16": torch.float16}[spec.dtype]
    shape = (spec.rows, spec.cols)
    inputs = {"x": (torch.rand(shape, generator=g) * 4 - 2).to(dtype),
              "y": (torch.rand(shape, generator=g) * 4 - 2).to(dtype),
              "out": torch.zeros(shape, dtype=dtype)}
    if spec.reduction:
        red_dtype = {"fp32": torch.float32, "fp16": torch.float16}[reduce_dtype(spec)]
        inputs["red"] = torch.zeros((spec.rows, 1), dtype=red_dtype)
    return inputs


def torch_chain(spec: Spec, x: torch.Tensor, y: torch.Tensor) -> dict:
    v = x
    for step in spec.chain:
        v = step.torch_fn(v, y)
    expected = {"out": v}
    if spec.reduction == "sum":
        expected["red"] = v.float().sum(-1, keepdim=True)
    elif spec.reduction:
        expected["red"] = getattr(v, spec.reduction)(-1, keepdim=True)
    return expected


TOL = {"fp32": (1e-5, 1e-5), "fp16": (2e-3, 2e-3)}


@given(spec=specs(), seed=st.integers(0, 2**16))
def test_random_kernel_matches_torch(spec, seed):
    source = kernel_source(spec)
    note(source)
    inputs = inputs_for(spec, seed)
    pristine = {k: v.clone() for k, v in inputs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random_kernel.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        kernel = live.find_kernel(live.load_module(path))
        program = pipeline.lower(kernel, inputs)
        pipeline.run(program, inputs)
    expected = torch_chain(spec, pristine["x"], pristine["y"])
    for name, want in expected.items():
        got = inputs[name]
        rtol, atol = TOL["fp16" if want.dtype == torch.float16 else "fp32"]
        if name == "red" and spec.dtype == "fp16":
            # the fp32 reduction of an fp16 chain: a 1-ulp fp16 difference in one element (torch's
            # fp16 rsqrt/sqrt are not always correctly rounded) reaches the result
            rtol, atol = TOL["fp16"]
            atol *= max(1.0, float(want.abs().max())) if want.numel() else 1.0
        if name == "red" and spec.reduction == "sum":
            atol *= spec.cols  # summation order
        torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=lambda m: f"{name}: {m}\n{source}")
