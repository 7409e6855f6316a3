"""Time-mixing input of an RWKV-style block, split into small helpers (bf16).

    xx[t] = x[t] * mix + x[t - 1] * (1 - mix),  x[-1] = 0
`mix` is either a learned [1, HIDDEN] row or a fixed constant row, chosen by the config.
"""
from dataclasses import dataclass

import torch

import pypto

SEQ, HIDDEN = 256, 256
BF16 = pypto.DT_BF16


@dataclass
class TimeMixCfg:
    learned_mix: bool = True
    fixed_mix: float = 0.5


CFG = TimeMixCfg()


def mix_rows(mix_param, cfg):
    """Plain helper, run while tracing: returns the (mix, 1 - mix) rows as tensors."""
    if cfg.learned_mix:
        mix = mix_param * 1.0
    else:
        mix = pypto.full([1, HIDDEN], cfg.fixed_mix, BF16)
    return mix, 1.0 - mix


@pypto.frontend.function
def shift_one_token(x, mix, keep, out, t):
    cur = x[t:t + 1, :]
    if t == 0:
        out[0:1, :] = cur * mix
    else:
        prev = x[t - 1:t, :]
        out[t:t + 1, :] = cur * mix + prev * keep


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def time_mix(
    x: pypto.Tensor[[SEQ, HIDDEN], BF16],
    mix_param: pypto.Tensor[[1, HIDDEN], BF16],
    out: pypto.Tensor[[SEQ, HIDDEN], BF16],
):
    pypto.set_vec_tile_shapes(1, HIDDEN)
    mix, keep = mix_rows(mix_param, CFG)
    for t in pypto.loop(SEQ, name="time_mix_tokens", idx_name="t"):
        shift_one_token(x, mix, keep, out, t)


def time_mix_golden(x, mix):
    prev = torch.cat([torch.zeros_like(x[:1]), x[:-1]])
    return x * mix + prev * (1 - mix)


def test_time_mix():
    x = torch.randn(SEQ, HIDDEN, dtype=torch.bfloat16)
    mix_param = torch.rand(1, HIDDEN, dtype=torch.bfloat16)
    out = torch.zeros_like(x)
    time_mix(x, mix_param, out)
    assert time_mix_golden(x, mix_param).shape == out.shape
