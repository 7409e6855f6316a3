"""Column-wise running maximum over row blocks (max-pool over the token axis).

Pitfall PTO008 (local tensor read before any write), line 26 in `running_max`: `run_max` is
declared with `pypto.tensor(...)`, which creates a tensor with no producer and no memory, and
the first loop iteration already reads it in `pypto.maximum(run_max[:, :], blk)`.  There is no
"initial value": initialise it first, e.g. `run_max[:] = pypto.full([BLOCK, COLS], float("-inf"),
pypto.DT_FP32)`, or branch on `pypto.is_loop_begin(k)` and clone the first block.

Expected diagnostics:
    PTO008 line 26
"""
import pypto

N_BLOCKS, BLOCK, COLS = 8, 16, 64


@pypto.frontend.jit
def running_max(
    x: pypto.Tensor((N_BLOCKS * BLOCK, COLS), pypto.DT_FP32),
    out: pypto.Tensor((BLOCK, COLS), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, COLS)
    run_max = pypto.tensor([BLOCK, COLS], pypto.DT_FP32, "run_max")
    for k in pypto.loop(N_BLOCKS, name="blocks", idx_name="k"):
        blk = pypto.view(x, [BLOCK, COLS], [k * BLOCK, 0])
        run_max[:] = pypto.maximum(run_max[:, :], blk)  # PTO008
    out[:] = pypto.clone(run_max)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(27)
    return {"x": torch.randn(N_BLOCKS * BLOCK, COLS, generator=g), "out": torch.zeros(BLOCK, COLS)}


def reference(x, out):
    return {"out": x.reshape(N_BLOCKS, BLOCK, COLS).amax(dim=0)}
