"""RWKV-style token shift: every token is mixed with the previous one.

    out[t] = mix * x[t] + (1 - mix) * x[t - 1],   x[-1] = 0
x / out are [seq, hidden] bf16, mix is a learned [1, hidden] row. The token loop is
unrolled so that several rows are issued per control-flow step.
"""
import torch

import pypto

SEQ, HIDDEN = 512, 512
BF16 = pypto.DT_BF16
TOKEN_UNROLL = [8, 4, 2, 1]


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def token_shift(
    x: pypto.Tensor[[SEQ, HIDDEN], BF16],
    mix: pypto.Tensor[[1, HIDDEN], BF16],
    out: pypto.Tensor[[SEQ, HIDDEN], BF16],
):
    pypto.set_vec_tile_shapes(1, HIDDEN)
    keep = 1.0 - mix
    for t in pypto.loop(SEQ, name="tokens", idx_name="t", unroll_list=TOKEN_UNROLL):
        cur = pypto.view(x, [1, HIDDEN], [t, 0])
        if t == 0:
            out[0:1, :] = cur * mix
        else:
            prev = pypto.view(x, [1, HIDDEN], [t - 1, 0])
            out[t:t + 1, :] = cur * mix + prev * keep


def token_shift_golden(x, mix):
    prev = torch.cat([torch.zeros_like(x[:1]), x[:-1]], dim=0)
    return x * mix + prev * (1 - mix)


@pypto.options(name="token_shift", runtime_options={"stitch_function_max_num": 128})
def test_token_shift():
    x = torch.randn(SEQ, HIDDEN, dtype=torch.bfloat16)
    mix = torch.rand(1, HIDDEN, dtype=torch.bfloat16)
    out = torch.zeros_like(x)
    token_shift(x, mix, out)
    assert token_shift_golden(x, mix).shape == out.shape
