"""The host backend slice: Program -> Ascend C (emit/ascendc.py) -> g++ against our CPU
kernel_operator.h -> ctypes (emit/host_backend.py), compared with the torch interpreter."""

import json
import shutil
import textwrap

import pytest
import torch

from pypto_ast import knobs, live, pipeline
from pypto_ast.ir import interp as torch_interp
from pypto_ast.emit import ascendc
from pypto_ast.emit.ascendc import EmitError, emit_program
from pypto_ast.emit.host_backend import HostRunError, run_host

pytestmark = pytest.mark.skipif(
    shutil.which(knobs.cxx) is None,
    reason=f"C++ compiler {knobs.cxx!r} not on PATH (set PYPTO_AST_CXX): the host build needs one",
)

CHAIN8 = '''
import pypto
F32 = pypto.DT_FP32

@pypto.frontend.jit
def chain8(x: pypto.Tensor((64, 256), F32), y: pypto.Tensor((64, 256), F32),
           out: pypto.Tensor((64, 256), F32)):
    pypto.set_vec_tile_shapes(16, 256)
    a = x + y
    b = a * 0.5
    c = pypto.exp(b)
    d = c - y
    e = pypto.maximum(d, x)
    f = pypto.abs(e) + 1.0
    g = pypto.sqrt(f)
    out[:] = g / y
'''

ALL_OPS = '''
import pypto
F32 = pypto.DT_FP32
F16 = pypto.DT_FP16

@pypto.frontend.jit
def all_ops(x: pypto.Tensor((64, 256), F32), y: pypto.Tensor((64, 256), F32),
            out: pypto.Tensor((64, 256), F32), o2: pypto.Tensor((64, 256), F32)):
    pypto.set_vec_tile_shapes(16, 256)
    a = pypto.minimum(x, y) * 3.0
    b = pypto.rsqrt(pypto.relu(a) + 1.0)
    c = pypto.reciprocal(x * x + 2.0)
    d = -(b + c)
    e = pypto.sub(d, y, alpha=2.0)
    f = pypto.add(e, x, alpha=0.25)
    g = 1.0 - pypto.maximum(f, -4.0)
    h = pypto.minimum(g, 10.0) / 4.0
    k = 2.0 / (pypto.abs(h) + 1.0)
    out[:] = k
    o2[:] = h
'''

LOOP = '''
import pypto
F32 = pypto.DT_FP32

@pypto.frontend.jit
def row_blocks(x: pypto.Tensor((64, 512), F32), y: pypto.Tensor((64, 256), F32),
               out: pypto.Tensor((64, 256), F32)):
    pypto.set_vec_tile_shapes(8, 256)
    for i in pypto.loop(4, name="rows", idx_name="i"):
        a = pypto.view(x, [16, 256], [i * 16, 256])
        b = pypto.view(y, [16, 256], [i * 16, 0])
        pypto.assemble(pypto.exp(a) * b + 1.0, [i * 16, 0], out)
'''

FP16 = '''
import pypto
F32 = pypto.DT_FP32
F16 = pypto.DT_FP16

@pypto.frontend.jit
def half_chain(x: pypto.Tensor((32, 128), F16), y: pypto.Tensor((32, 128), F16),
               out: pypto.Tensor((32, 128), F16), wide: pypto.Tensor((32, 128), F32)):
    pypto.set_vec_tile_shapes(8, 128)
    xf = pypto.cast(x, F32)
    yf = pypto.cast(y, F32)
    s = pypto.exp(xf * 0.5) + yf
    wide[:] = s
    h = pypto.cast(s, F16)
    out[:] = h * y - 1.0
'''

UNSUPPORTED = '''
import pypto
F32 = pypto.DT_FP32

@pypto.frontend.jit
def uses_var(x: pypto.Tensor((16, 64), F32), out: pypto.Tensor((16, 1), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.var(pypto.view(x, [16, 64], [0, 0], valid_shape=[16, 60]), dim=-1, keepdim=True) + 1.0
'''

def _lower(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return pipeline.lower(live.find_kernel(live.load_module(str(path))))


def _both(program, inputs, tmp_path):
    """Run the oracle on clones and the host backend in place; return (host, oracle, traffic)."""
    oracle = {k: v.clone() for k, v in inputs.items()}
    torch_interp.run_program(program, oracle)
    traffic = run_host(program, inputs)
    return inputs, oracle, traffic


def _io_bytes(program):
    ins = outs = 0
    for p in program.params:
        if p.kind != "tensor":
            continue
        n = 1
        for d in p.type.shape:
            n *= d.value
        n *= {"fp32": 4, "fp16": 2}[p.type.dtype]
        if p.is_output:
            outs += n
        else:
            ins += n
    return ins, outs


def test_eight_op_chain_matches_oracle_and_torch(tmp_path):
    program = _lower(tmp_path, "chain8", CHAIN8)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(64, 256, generator=g), torch.rand(64, 256, generator=g) + 0.5
    host, oracle, traffic = _both(program, {"x": x, "y": y, "out": torch.zeros(64, 256)}, tmp_path)
    torch.testing.assert_close(host["out"], oracle["out"], rtol=1e-5, atol=1e-5)
    want = torch.sqrt(torch.abs(torch.maximum(torch.exp((x + y) * 0.5) - y, x)) + 1.0) / y
    torch.testing.assert_close(host["out"], want, rtol=1e-5, atol=1e-5)
    ins, outs = _io_bytes(program)
    assert (traffic["gm_to_ub_bytes"], traffic["ub_to_gm_bytes"]) == (ins, outs) == (2 * 65536, 65536)


def test_eight_op_chain_kernel_text(tmp_path):
    files = emit_program(_lower(tmp_path, "chain8", CHAIN8))
    assert set(files) == {"chain8_b0_k1.cpp", "control.cpp", "manifest.json"}  # the whole block fused
    k = files["chain8_b0_k1.cpp"]
    assert 'extern "C" __global__ __aicore__ void chain8_b0_k1(GM_ADDR t0, GM_ADDR t1, GM_ADDR t2, GM_ADDR tiling)' in k
    assert "from b0 kernel 1" in k
    assert k.count("AscendC::TQue<AscendC::TPosition::VECIN, 1>") == 2
    assert k.count("AscendC::TQue<AscendC::TPosition::VECOUT, 1>") == 1
    assert "pipe->InitBuffer(q0, 2, 16384);" in k  # double buffered 16 x 256 fp32 row tiles
    assert "AscendC::GetBlockIdx()" in k and "AscendC::GetBlockNum()" in k
    for api in ("Add", "Muls", "Exp", "Sub", "Max", "Abs", "Adds", "Sqrt", "Div"):
        assert f"AscendC::{api}(" in k, api
    assert k.count("AscendC::DataCopyPad(") == 3  # 2 CopyIn + 1 CopyOut: no GM round trip in Compute
    assert '#line 10 "chain8.py"' in k
    plain = emit_program(_lower(tmp_path, "chain8", CHAIN8), line_directives=False)["chain8_b0_k1.cpp"]
    assert "#line" not in plain
    manifest = json.loads(files["manifest.json"])
    assert manifest["entry"] == "pypto_run"
    assert manifest["kernels"][0]["tile_rows"] == 16 and manifest["kernels"][0]["num_blocks"] == 4
    assert "pypto_host::Launch(4, chain8_b0_k1" in files["control.cpp"]


def test_all_supported_elementwise_forms(tmp_path):
    program = _lower(tmp_path, "all_ops", ALL_OPS)
    g = torch.Generator().manual_seed(1)
    inputs = {"x": torch.randn(64, 256, generator=g), "y": torch.randn(64, 256, generator=g),
              "out": torch.zeros(64, 256), "o2": torch.zeros(64, 256)}
    host, oracle, traffic = _both(program, inputs, tmp_path)
    for name in ("out", "o2"):
        torch.testing.assert_close(host[name], oracle[name], rtol=1e-5, atol=1e-5)
    assert (traffic["gm_to_ub_bytes"], traffic["ub_to_gm_bytes"]) == _io_bytes(program)


def test_loop_over_row_blocks_with_view_and_assemble(tmp_path):
    program = _lower(tmp_path, "loop", LOOP)
    g = torch.Generator().manual_seed(2)
    x, y = torch.randn(64, 512, generator=g), torch.randn(64, 256, generator=g)
    host, oracle, traffic = _both(program, {"x": x, "y": y, "out": torch.zeros(64, 256)}, tmp_path)
    torch.testing.assert_close(host["out"], oracle["out"], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(host["out"], torch.exp(x[:, 256:]) * y + 1.0, rtol=1e-5, atol=1e-5)
    # only the viewed half of x is read, each element once; out written once
    assert traffic["gm_to_ub_bytes"] == (64 * 256 + 64 * 256) * 4
    assert traffic["ub_to_gm_bytes"] == 64 * 256 * 4
    control = emit_program(program)["control.cpp"]
    assert "for (int64_t v_i = " in control and control.count("pypto_host::Launch(") == 1


def test_fp16_cast_chain(tmp_path):
    program = _lower(tmp_path, "half", FP16)
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(32, 128, generator=g).half(), torch.randn(32, 128, generator=g).half()
    inputs = {"x": x, "y": y, "out": torch.zeros(32, 128).half(), "wide": torch.zeros(32, 128)}
    host, oracle, traffic = _both(program, inputs, tmp_path)
    torch.testing.assert_close(host["wide"], oracle["wide"], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(host["out"].float(), oracle["out"].float(), rtol=2e-3, atol=2e-3)
    want = (torch.exp(x.float() * 0.5) + y.float()).half().float() * y.float() - 1.0
    torch.testing.assert_close(host["out"].float(), want, rtol=4e-3, atol=4e-3)
    assert (traffic["gm_to_ub_bytes"], traffic["ub_to_gm_bytes"]) == _io_bytes(program)
    assert "AscendC::Cast(" in emit_program(program)["half_chain_b0_k1.cpp"]


def test_unsupported_op_raises_emit_error(tmp_path):
    program = _lower(tmp_path, "sig", UNSUPPORTED)
    with pytest.raises(EmitError) as info:
        emit_program(program)
    assert "'var'" in str(info.value) and "Ascend C emitter does not support" in str(info.value)
    assert info.value.span is not None and info.value.span.line == 8


def test_wrong_input_is_rejected_before_running(tmp_path):
    program = _lower(tmp_path, "chain8", CHAIN8)
    with pytest.raises(ValueError, match="shape"):
        run_host(program, {"x": torch.zeros(64, 128), "y": torch.zeros(64, 256), "out": torch.zeros(64, 256)})


def test_hardware_fault_is_reported_through_pypto_last_error(tmp_path):
    program = _lower(tmp_path, "chain8", CHAIN8)
    files = emit_program(program)
    # Sabotage the kernel: drop one EnQue, so the DeQue in Compute faults on the host model.
    assert "q1.EnQue(x1);" in files["chain8_b0_k1.cpp"]
    files["chain8_b0_k1.cpp"] = files["chain8_b0_k1.cpp"].replace("q1.EnQue(x1);", "")
    inputs = {"x": torch.zeros(64, 256), "y": torch.ones(64, 256), "out": torch.zeros(64, 256)}
    with pytest.raises(HostRunError, match="HardwareFault"):
        run_host(program, inputs, files=files)
