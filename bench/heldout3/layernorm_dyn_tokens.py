"""LayerNorm for a variable number of bf16 tokens; statistics in fp32.

x / y are [tokens, 512] with a dynamic token count; gamma / beta are [1, 512] bf16.
"""
import torch

import pypto

HIDDEN = 512
ROW_BLK = 8
EPS = 1e-5
BF16 = pypto.DT_BF16
FP32 = pypto.DT_FP32


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def layernorm_tokens(
    x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], BF16),
    gamma: pypto.Tensor([1, HIDDEN], BF16),
    beta: pypto.Tensor([1, HIDDEN], BF16),
    y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], BF16),
    eps: float = EPS,
):
    n_tok = x.shape[0]
    print("layernorm_tokens: tracing for hidden", HIDDEN, "token count", n_tok)
    pypto.set_vec_tile_shapes(ROW_BLK, HIDDEN)
    gamma = pypto.cast(gamma, FP32)
    beta = pypto.cast(beta, FP32)
    for i in pypto.loop((n_tok + ROW_BLK - 1) // ROW_BLK, name="ln_rows", idx_name="i"):
        rows = pypto.min(ROW_BLK, n_tok - i * ROW_BLK)
        xb = pypto.view(x, [ROW_BLK, HIDDEN], [i * ROW_BLK, 0], valid_shape=[rows, HIDDEN])
        xb = pypto.cast(xb, FP32)
        mean = pypto.sum(xb, -1, keepdim=True) * (1.0 / HIDDEN)
        xb = xb - mean
        var = pypto.sum(xb * xb, -1, keepdim=True) * (1.0 / HIDDEN)
        xb = xb * pypto.rsqrt(var + eps) * gamma + beta
        pypto.assemble(pypto.cast(xb, BF16), [i * ROW_BLK, 0], y)


def layernorm_golden(x, gamma, beta, eps=EPS):
    return torch.nn.functional.layer_norm(
        x.float(), (HIDDEN,), gamma[0].float(), beta[0].float(), eps
    ).to(torch.bfloat16)


@pypto.options(name="layernorm_tokens", runtime_options={"valid_shape_optimize": 1})
def test_layernorm_token_counts():
    gamma = (torch.rand(1, HIDDEN) + 0.5).to(torch.bfloat16)
    beta = (torch.randn(1, HIDDEN) * 0.1).to(torch.bfloat16)
    for n_tok in (8, 13, 100):
        x = torch.randn(n_tok, HIDDEN, dtype=torch.bfloat16)
        y = torch.zeros_like(x)
        layernorm_tokens(x, gamma, beta, y)
        assert layernorm_golden(x, gamma, beta).shape == y.shape
