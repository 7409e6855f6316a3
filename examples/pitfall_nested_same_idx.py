"""2-D blocked exp-scale over a 128x256 matrix, walking row blocks and column blocks.

Pitfall PTO009 (nested loops reusing idx_name), line 24 in `blocked_exp`: the inner column loop
was copy-pasted from the outer row loop and still says `idx_name="i"`.  Nested loops must use
distinct index names.  pypto 0.2.0 logs `F21007 Forbid duplicate name of loop idx` and then
the process dies with SIGSEGV -- no Python exception reaches the caller.

Expected diagnostics:
    PTO009 line 24
"""
import pypto

ROWS, COLS = 128, 256
RB, CB = 32, 64


@pypto.frontend.jit
def blocked_exp(
    x: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
    out: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(RB, CB)
    for i in pypto.loop(ROWS // RB, name="row_blk", idx_name="i"):
        for j in pypto.loop(COLS // CB, name="col_blk", idx_name="i"):  # PTO009
            tile = pypto.view(x, [RB, CB], [i * RB, j * CB])
            pypto.assemble(pypto.exp(tile * 0.5), [i * RB, j * CB], out)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(28)
    return {"x": torch.randn(ROWS, COLS, generator=g), "out": torch.zeros(ROWS, COLS)}


def reference(x, out):
    import torch

    return {"out": torch.exp(x * 0.5)}
