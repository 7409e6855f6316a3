"""Per-token, per-group (128 channels) dynamic int8 activation quantisation."""

import torch

import pypto

B, S, H = 2, 256, 512
GROUP = 128
ROWS = 64


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def group_quant(
    x: pypto.Tensor[[B, S, H], pypto.DT_FP32],
    xq: pypto.Tensor[[B, S, H], pypto.DT_INT8],
    scales: pypto.Tensor[[B, S, H // GROUP], pypto.DT_FP32],
):
    pypto.set_vec_tile_shapes(1, ROWS, GROUP)
    for b in pypto.loop(B, name="batch", idx_name="b"):
        for s in pypto.loop(S // ROWS, name="rows", idx_name="s"):
            for g in pypto.loop(H // GROUP, name="groups", idx_name="s"):
                r0 = s * ROWS
                c0 = g * GROUP
                xv = pypto.view(x, [1, ROWS, GROUP], [b, r0, c0])
                amax = pypto.amax(pypto.abs(xv), -1, keepdim=True)
                sc = pypto.maximum(amax, 1e-5) / 127.0
                q16 = pypto.cast(xv / sc, pypto.DT_FP16)
                q8 = pypto.cast(q16, pypto.DT_INT8, pypto.CastMode.CAST_RINT)
                pypto.assemble(q8, [b, r0, c0], xq)
                pypto.assemble(sc, [b, r0, g], scales)


def golden(x):
    xg = x.view(B, S, H // GROUP, GROUP)
    sc = xg.abs().amax(-1, keepdim=True).clamp(min=1e-5) / 127.0
    q = torch.round(xg / sc).clamp(-128, 127).to(torch.int8)
    return q.view(B, S, H), sc.squeeze(-1)


def test_group_quant():
    x = torch.randn(B, S, H, dtype=torch.float32)
    xq = torch.zeros(B, S, H, dtype=torch.int8)
    scales = torch.zeros(B, S, H // GROUP, dtype=torch.float32)
    group_quant(x, xq, scales)
    q_ref, s_ref = golden(x)
    assert xq.shape == q_ref.shape and scales.shape == s_ref.shape


if __name__ == "__main__":
    test_group_quant()
