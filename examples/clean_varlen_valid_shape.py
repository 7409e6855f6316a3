"""Per-sequence scale-and-shift over a padded batch, honouring the real sequence lengths.

`seq_lens[b]` is read from an INT32 tensor inside the batch loop; the view of batch `b` declares
its real extent with `valid_shape=[1, cur_len, HIDDEN]`, so only the first `cur_len` rows of each
sequence are computed and written.  Rows past the length keep what the caller passed in `out`
(zeros in the example).

Pitfalls: none (compare pitfall_varlen_no_valid_shape.py).
Expected diagnostics: none.
"""
import pypto

BATCH, MAX_SEQ, HIDDEN = 4, 64, 64


@pypto.frontend.jit
def varlen_affine(
    inp: pypto.Tensor((BATCH, MAX_SEQ, HIDDEN), pypto.DT_FP32),
    seq_lens: pypto.Tensor((BATCH,), pypto.DT_INT32),
    out: pypto.Tensor((BATCH, MAX_SEQ, HIDDEN), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, 32, HIDDEN)
    for b in pypto.loop(BATCH, name="batch", idx_name="b"):
        cur_len = seq_lens[b]
        seq = pypto.view(inp, [1, MAX_SEQ, HIDDEN], [b, 0, 0], valid_shape=[1, cur_len, HIDDEN])
        out[b:b + 1, :, :] = seq * 2.0 + 1.0


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(10)
    return {
        "inp": torch.randn(BATCH, MAX_SEQ, HIDDEN, generator=g),
        "seq_lens": torch.tensor([64, 10, 33, 1], dtype=torch.int32),
        "out": torch.zeros(BATCH, MAX_SEQ, HIDDEN),
    }


def reference(inp, seq_lens, out):
    expected = out.clone()
    for b, n in enumerate(seq_lens.tolist()):
        expected[b, :n] = inp[b, :n] * 2.0 + 1.0
    return {"out": expected}
