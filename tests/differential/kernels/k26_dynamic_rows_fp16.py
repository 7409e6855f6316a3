"""pypto.DYNAMIC rows in fp16, walked in 16-row blocks; the last block is ragged
(`pypto.min(16, n - i*16)` valid rows)."""
import pypto

H = 64
BLOCK = 16
F16 = pypto.DT_FP16


@pypto.frontend.jit
def dynamic_rows(
    x: pypto.Tensor([pypto.DYNAMIC, H], F16),
    g: pypto.Tensor((1, H), F16),
    y: pypto.Tensor([pypto.DYNAMIC, H], F16),
):
    pypto.set_vec_tile_shapes(BLOCK, H)
    n = x.shape[0]
    for i in pypto.loop((n + BLOCK - 1) // BLOCK, name="rows", idx_name="i"):
        valid = pypto.min(BLOCK, n - i * BLOCK)
        blk = pypto.view(x, [BLOCK, H], [i * BLOCK, 0], valid_shape=[valid, H])
        pypto.assemble(pypto.relu(blk) * g + 0.5, [i * BLOCK, 0], y)


def example_inputs():
    import torch

    gen = torch.Generator().manual_seed(26)
    rows = 50
    return {"x": torch.randn(rows, H, generator=gen).half(), "g": torch.randn(1, H, generator=gen).half(),
            "y": torch.zeros(rows, H, dtype=torch.float16)}


def reference(x, g, y):
    import torch

    return {"y": torch.relu(x) * g + 0.5}
