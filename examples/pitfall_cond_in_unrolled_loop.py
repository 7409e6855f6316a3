"""Sum of micro-batch gradients, first iteration detected with `if k == 0`.

Pitfall PTO011 (symbolic branch inside an unrolled loop: too many compiled paths), line 27 in
`accumulate_grads`: the loop (line 25) is unrolled with `unroll_list=[1, 2, 4]` and its body
branches on `k == 0`.  Every unrolled copy gets its own condition, so the body is compiled for
2 + 4 + 16 = 22 paths, each a separate graph (compile time grows accordingly).  Writing the
branch as `if pypto.is_loop_begin(k):` keeps it at 2 paths per unroll factor (see
clean_accumulate_blocks.py).  pypto 0.2.0 accepts it silently.

Expected diagnostics:
    PTO011 line 27
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
    for k in pypto.loop(MICRO_BATCHES, name="micro", idx_name="k", unroll_list=[1, 2, 4]):
        part = pypto.view(grads, [ROWS, COLS], [k * ROWS, 0])
        if k == 0:  # PTO011
            acc[:] = pypto.clone(part)
        else:
            acc[:] = acc + part


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(30)
    return {
        "grads": torch.randn(MICRO_BATCHES * ROWS, COLS, generator=g),
        "acc": torch.zeros(ROWS, COLS),
    }


def reference(grads, acc):
    return {"acc": grads.reshape(MICRO_BATCHES, ROWS, COLS).sum(dim=0)}
