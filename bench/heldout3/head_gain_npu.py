"""Per-head learned gain on small 16-wide heads: out[h] = x[h] * exp(log_gain) (fp16).

x / out are [heads, seq, 16]; log_gain is [1, 1, 16]. The gain row is computed once into
a local buffer before the head loop. Shapes and dtypes come from the call arguments.
"""
import os

import torch

import pypto

HEAD_DIM = 16
SEQ_TILE = 64
FP16 = pypto.DT_FP16


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def head_gain(x: pypto.Tensor(), log_gain: pypto.Tensor(), out: pypto.Tensor()):
    heads, seq = x.shape[0], x.shape[1]
    # 16 fp16 values are exactly one 32-byte block
    pypto.set_vec_tile_shapes(1, SEQ_TILE, HEAD_DIM)
    gain = pypto.tensor([1, 1, HEAD_DIM], FP16, "gain")
    gain.move(pypto.exp(log_gain))
    for h in pypto.loop(heads, name="heads", idx_name="h"):
        xh = pypto.view(x, [1, seq, HEAD_DIM], [h, 0, 0])
        out[h:h + 1, :, :] = xh * gain


def head_gain_golden(x, log_gain):
    return x * torch.exp(log_gain.float()).half()


def test_head_gain_on_npu():
    import torch_npu  # noqa: F401

    device = f"npu:{int(os.environ.get('TILE_FWK_DEVICE_ID', 0))}"
    heads, seq = 8, 256
    for trial in range(3):
        print(f"head_gain: trial {trial}, heads={heads} seq={seq}")
        torch.manual_seed(trial)
        x = torch.randn(heads, seq, HEAD_DIM, dtype=torch.float16, device=device)
        log_gain = (torch.randn(1, 1, HEAD_DIM) * 0.1).half().to(device)
        out = torch.empty_like(x)
        head_gain(x, log_gain, out)
        torch.testing.assert_close(out.cpu(), head_gain_golden(x, log_gain).cpu(), rtol=1e-2, atol=1e-2)
