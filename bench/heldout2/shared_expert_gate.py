"""Shared-expert gating: sigmoid(x @ w_gate) scales the shared expert's output."""

import torch

import pypto

T, H, N = 128, 256, 256


class GateTiles:
    m = [128, 64]
    k = [64, 128]
    n = [128, 128]
    vec = (64, 128)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def shared_gate(
    x: pypto.Tensor([T, H], pypto.DT_FP16),
    w_gate: pypto.Tensor([H, N], pypto.DT_FP16),
    shared_out: pypto.Tensor([T, N], pypto.DT_FP32),
    out: pypto.Tensor([T, N], pypto.DT_FP32),
):
    for _ in pypto.loop(1, name="gate_proj", idx_name="p"):
        pypto.set_cube_tile_shapes(GateTiles.m, GateTiles.k, GateTiles.n)
        logits = pypto.matmul(x, w_gate, pypto.DT_FP32)
    for _ in pypto.loop(1, name="gate_apply", idx_name="a"):
        pypto.set_vec_tile_shapes(*GateTiles.vec)
        gate = pypto.sigmoid(logits)
        out[:] = gate * shared_out


def test_shared_gate():
    x = torch.randn(T, H, dtype=torch.float16)
    w = torch.randn(H, N, dtype=torch.float16) * 0.05
    shared = torch.randn(T, N, dtype=torch.float32)
    out = torch.zeros(T, N, dtype=torch.float32)
    shared_gate(x, w, shared, out)
    ref = torch.sigmoid(x.float() @ w.float()) * shared
    assert out.shape == ref.shape


if __name__ == "__main__":
    test_shared_gate()
