"""SiLU over a token dimension whose length is only known at call time.

The row count is `pypto.DYNAMIC`, so whole-tensor vector ops are not allowed (0.2.0): the kernel
walks the rows in static 16-row blocks with `pypto.loop`, reads each block through `pypto.view`
and declares the real extent of the last (partial) block with `valid_shape=`.  The example
inputs use 40 rows, i.e. two full blocks and an 8-row tail.

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto

HIDDEN = 128
BLOCK = 16


@pypto.frontend.jit
def silu_rows(
    x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, HIDDEN)
    n = x.shape[0]
    for i in pypto.loop((n + BLOCK - 1) // BLOCK, name="row_blocks", idx_name="i"):
        valid = pypto.min(BLOCK, n - i * BLOCK)
        blk = pypto.view(x, [BLOCK, HIDDEN], [i * BLOCK, 0], valid_shape=[valid, HIDDEN])
        pypto.assemble(blk * pypto.sigmoid(blk), [i * BLOCK, 0], y)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(5)
    rows = 40
    return {"x": torch.randn(rows, HIDDEN, generator=g), "y": torch.zeros(rows, HIDDEN)}


def reference(x, y):
    import torch

    return {"y": torch.nn.functional.silu(x)}
