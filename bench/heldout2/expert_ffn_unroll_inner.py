"""Grouped expert up-projection: for each expert, token blocks are unrolled on the inner loop."""

import torch

import pypto

EXPERTS, TOK_PER_EXPERT, HID, INTER = 4, 256, 256, 512
TB = 64


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def expert_up_proj(
    x: pypto.Tensor([EXPERTS * TOK_PER_EXPERT, HID], pypto.DT_FP16),
    w_up: pypto.Tensor([EXPERTS * HID, INTER], pypto.DT_FP16),
    b_up: pypto.Tensor([EXPERTS, INTER], pypto.DT_FP32),
    h: pypto.Tensor([EXPERTS * TOK_PER_EXPERT, INTER], pypto.DT_FP32),
    use_bias: bool = True,
):
    pypto.set_cube_tile_shapes([64, 64], [64, 256], [128, 256])
    pypto.set_vec_tile_shapes(TB, 256)
    for e in pypto.loop(EXPERTS, name="experts", idx_name="e"):
        w = pypto.view(w_up, [HID, INTER], [e * HID, 0])
        bias = pypto.view(b_up, [1, INTER], [e, 0])
        row0 = e * TOK_PER_EXPERT
        for t in pypto.loop(TOK_PER_EXPERT // TB, name="tok", idx_name="t", unroll_list=[1, 2, 4]):
            xb = pypto.view(x, [TB, HID], [row0 + t * TB, 0])
            acc = pypto.matmul(xb, w, pypto.DT_FP32)
            if use_bias:
                acc = acc + bias
            h[row0 + t * TB:row0 + (t + 1) * TB, :] = acc


def test_expert_up_proj():
    x = torch.randn(EXPERTS, TOK_PER_EXPERT, HID, dtype=torch.float16)
    w = torch.randn(EXPERTS, HID, INTER, dtype=torch.float16) * 0.05
    b = torch.randn(EXPERTS, INTER)
    h = torch.zeros(EXPERTS * TOK_PER_EXPERT, INTER)
    expert_up_proj(x.reshape(-1, HID), w.reshape(-1, INTER), b, h, True)
    ref = torch.bmm(x.float(), w.float()) + b[:, None, :]
    assert h.shape == ref.reshape(-1, INTER).shape


if __name__ == "__main__":
    test_expert_up_proj()
