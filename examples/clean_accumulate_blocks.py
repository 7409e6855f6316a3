"""Sum of micro-batch gradients: acc = sum over k of x[16k:16k+16, :].

Loop-carried accumulation into an output: the first iteration initialises the accumulator
with `pypto.clone`, later iterations add to it.  The branch uses `pypto.is_loop_begin(k)`,
so unrolling by 4 yields only 2 compiled paths instead of 2^4 for `if k == 0`.
`submit_before_loop=True` submits earlier work before the loop starts.

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto

MICRO_BATCHES = 8
ROWS, COLS = 16, 64


@pypto.frontend.jit
def accumulate_grads(
    grads: pypto.Tensor((MICRO_BATCHES * ROWS, COLS), pypto.DT_FP32),
    acc: pypto.Tensor((ROWS, COLS), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(ROWS, COLS)
    for k in pypto.loop(MICRO_BATCHES, name="micro", idx_name="k", unroll_list=[1, 4],
                        submit_before_loop=True):
        part = pypto.view(grads, [ROWS, COLS], [k * ROWS, 0])
        if pypto.is_loop_begin(k):
            acc[:] = pypto.clone(part)
        else:
            acc[:] = acc + part


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(7)
    return {
        "grads": torch.randn(MICRO_BATCHES * ROWS, COLS, generator=g),
        "acc": torch.zeros(ROWS, COLS),
    }


def reference(grads, acc):
    return {"acc": grads.reshape(MICRO_BATCHES, ROWS, COLS).sum(dim=0)}
