# near-miss: PTO002
"""The same legacy SwiGLU test with the device picked first, from TILE_FWK_DEVICE_ID as the
samples do, before any tensor is placed or the graph is launched."""
import os

import torch
import torch_npu  # noqa: F401

import pypto

TOKENS, INTER = 64, 256


def test_swiglu_on_npu():
    torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", 0)))
    gate_up_t = torch.randn(TOKENS, 2 * INTER, dtype=torch.float32).npu()
    out_t = torch.empty(TOKENS, INTER, dtype=torch.float32).npu()
    gate_up = pypto.from_torch(gate_up_t, "gate_up")
    out = pypto.from_torch(out_t, "out")
    with pypto.function("SWIGLU", gate_up, out):
        for _ in pypto.loop(1, name="swiglu", idx_name="s"):
            pypto.set_vec_tile_shapes(16, INTER)
            gate = pypto.view(gate_up, [TOKENS, INTER], [0, 0])
            up = pypto.view(gate_up, [TOKENS, INTER], [0, INTER])
            out.move(pypto.mul(pypto.mul(gate, pypto.sigmoid(gate)), up))
    gate_t, up_t = gate_up_t.chunk(2, dim=-1)
    assert torch.allclose(out_t, torch.nn.functional.silu(gate_t) * up_t, atol=1e-3)
