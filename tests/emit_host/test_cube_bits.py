"""The host cube's arithmetic, bit for bit (runtime/cube_dot.cpp, docs/design.md §17).

* Random matmuls (odd m/n/k tails, transposes, a bias, fp16/bf16/int8, several K steps): the
  interpreter and the host give the same bits. The operands spread over 2^-4..2^4, so each K
  step's double sum is exact whatever its order (the interpreter's torch.matmul has its own) and
  the fp32 rounding per step is where the two could part.
* fp32 operands over 2^-20..2^20, where a double sum does depend on its order: every register
  block the CPU has (knobs.host_cube) gives the bits of the plain loop, k increasing.
"""

from __future__ import annotations

import contextlib
import io
import shutil

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings, strategies as st  # noqa: E402

from pypto_ast import knobs, live, pipeline  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which(knobs.cxx) is None, reason=f"C++ compiler {knobs.cxx!r} not on PATH")

DT = {"fp16": "pypto.DT_FP16", "bf16": "pypto.DT_BF16", "fp32": "pypto.DT_FP32", "int8": "pypto.DT_INT8",
      "int32": "pypto.DT_INT32"}
TORCH = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "int8": torch.int8}


def _source(m, n, k, dt, *, trans_a=False, trans_b=False, bias=False, tiles=(16, 32, 16)) -> str:
    out = "int32" if dt == "int8" else "fp32"
    a = (k, m) if trans_a else (m, k)
    b = (n, k) if trans_b else (k, n)
    params = [f"a: pypto.Tensor({list(a)}, {DT[dt]})", f"b: pypto.Tensor({list(b)}, {DT[dt]})"]
    extra = ""
    if bias:
        params.append(f"z: pypto.Tensor([1, {n}], {DT[out]})")
        extra = ', extend_params={"bias_tensor": z}'
    params.append(f"c: pypto.Tensor([{m}, {n}], {DT[out]})")
    bm, bk, bn = tiles
    return ("import pypto\n\n\n@pypto.frontend.jit\n"
            f"def mm({', '.join(params)}):\n"
            f"    pypto.set_cube_tile_shapes([{bm}, {bm}], [{bk}, {bk}], [{bn}, {bn}])\n"
            f"    c[:] = pypto.matmul(a, b, {DT[out]}, a_trans={trans_a}, b_trans={trans_b}{extra})\n")


def _program(tmp_path, name: str, text: str, inputs: dict):
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        kernel = live.find_kernel(live.load_module(str(path)))
    return pipeline.lower(kernel, {k: v.clone() for k, v in inputs.items()})


def _run(program, inputs: dict, backend: str):
    args = {k: v.clone() for k, v in inputs.items()}
    pipeline.run(program, args, backend)
    return args["c"]


def _operand(g, shape, dt, lo: int, hi: int):
    """Values of mixed magnitude 2^lo..2^hi (int8: any)."""
    if dt == "int8":
        return torch.randint(-128, 128, shape, generator=g, dtype=torch.int8)
    scale = torch.exp2(torch.randint(lo, hi + 1, shape, generator=g).double())
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(TORCH[dt])


def _inputs(seed, m, n, k, dt, trans_a, trans_b, bias, lo=-4, hi=4):
    g = torch.Generator().manual_seed(seed)
    out = torch.int32 if dt == "int8" else torch.float32
    inputs = {"a": _operand(g, (k, m) if trans_a else (m, k), dt, lo, hi),
              "b": _operand(g, (n, k) if trans_b else (k, n), dt, lo, hi),
              "c": torch.full((m, n), 7, dtype=out)}
    if bias:
        inputs["z"] = (torch.randint(-50, 50, (1, n), generator=g) if dt == "int8"
                       else torch.randn(1, n, generator=g)).to(out)
    return inputs


@settings(max_examples=12, deadline=None, derandomize=True)  # fixed examples: reruns hit the build cache
@given(m=st.integers(1, 40), n=st.integers(1, 40), k=st.integers(1, 80), dt=st.sampled_from(["fp16", "bf16", "int8"]),
       trans_a=st.booleans(), trans_b=st.booleans(), bias=st.booleans(), seed=st.integers(0, 2**16))
def test_random_matmuls_are_bit_identical_on_interp_and_host(tmp_path_factory, m, n, k, dt, trans_a, trans_b,
                                                             bias, seed):
    tmp = tmp_path_factory.mktemp("mm")
    inputs = _inputs(seed, m, n, k, dt, trans_a, trans_b, bias)
    program = _program(tmp, "mm", _source(m, n, k, dt, trans_a=trans_a, trans_b=trans_b, bias=bias), inputs)
    interp, host = _run(program, inputs, "interp"), _run(program, inputs, "host")
    assert torch.equal(interp, host)
    assert not torch.equal(host, inputs["c"])  # the kernel wrote c


def _sequential(a, b, bias, bk: int):
    """The host cube's rule written out: per K step of bk, a double sum in increasing k (from +0),
    then the fp32 accumulator (bias or the last step's) added and rounded once."""
    a, b = a.double(), b.double()
    acc = None if bias is None else bias.double().reshape(1, -1)
    for k0 in range(0, a.shape[1], bk):
        part = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float64)
        for kk in range(k0, min(k0 + bk, a.shape[1])):
            part = part + a[:, kk:kk + 1] * b[kk:kk + 1, :]
        acc = (part if acc is None else acc.double() + part).float()
    return acc


def _isas():
    """The knob's ISAs; those this CPU lacks fail with a message naming them."""
    return [isa for isa in knobs.HOST_CUBE_ISAS if isa != "auto"]


@pytest.mark.parametrize("trans_b,bias", [(False, False), (True, True)])
def test_every_register_block_gives_the_bits_of_the_plain_loop(tmp_path, monkeypatch, trans_b, bias):
    m, n, k = 40, 48, 70  # two and a half row blocks of 16, three panels, K in three steps of 32 (8-wide C0)
    inputs = _inputs(11, m, n, k, "fp32", False, trans_b, bias, lo=-20, hi=20)
    program = _program(tmp_path, "mm32", _source(m, n, k, "fp32", trans_b=trans_b, bias=bias, tiles=(32, 32, 32)),
                       inputs)
    b = inputs["b"].t() if trans_b else inputs["b"]
    want = _sequential(inputs["a"], b, inputs.get("z"), 32)
    ran = 0
    for isa in _isas():
        monkeypatch.setattr(knobs, "host_cube", isa)
        try:
            got = _run(program, inputs, "host")
        except Exception as exc:  # an ISA this CPU does not have
            assert "this CPU has no" in str(exc), exc
            continue
        ran += 1
        assert torch.equal(got, want), isa
    monkeypatch.setattr(knobs, "host_cube", "auto")
    assert ran >= 1 and torch.equal(_run(program, inputs, "host"), want)
    # and the order matters for these operands: summing the other way round differs
    assert not torch.equal(want, _sequential(inputs["a"].flip(1), b.flip(0), inputs.get("z"), 32))
