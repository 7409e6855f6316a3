"""Symbolic scalars read from INT32 tensors: `lens[b]` drives valid_shape, `starts[b]` drives
a view offset."""
import pypto

B, S, H = 4, 32, 64
W = 8
F32, I32 = pypto.DT_FP32, pypto.DT_INT32


@pypto.frontend.jit
def varlen(
    x: pypto.Tensor((B, S, H), F32),
    lens: pypto.Tensor((B,), I32),
    starts: pypto.Tensor((B,), I32),
    out: pypto.Tensor((B, S, H), F32),
    win: pypto.Tensor((B * W, H), F32),
):
    pypto.set_vec_tile_shapes(1, 16, H)
    for b in pypto.loop(B, name="batch", idx_name="b"):
        n = lens[b]
        seq = pypto.view(x, [1, S, H], [b, 0, 0], valid_shape=[1, n, H])
        pypto.assemble(pypto.exp(seq) * 0.5, [b, 0, 0], out)
        part = pypto.view(x, [1, W, H], [b, starts[b], 0])
        win[b * W:(b + 1) * W, :] = pypto.reshape(part, [W, H]) - 1.0


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(25)
    return {"x": torch.randn(B, S, H, generator=g), "lens": torch.tensor([32, 5, 17, 0], dtype=torch.int32),
            "starts": torch.tensor([0, 3, 24, 11], dtype=torch.int32), "out": torch.full((B, S, H), -7.0),
            "win": torch.zeros(B * W, H)}


def reference(x, lens, starts, out, win):
    import torch

    out = out.clone()
    win = win.clone()
    for b in range(B):
        n, s = int(lens[b]), int(starts[b])
        out[b, :n] = torch.exp(x[b, :n]) * 0.5
        win[b * W:(b + 1) * W] = x[b, s:s + W] - 1.0
    return {"out": out, "win": win}
