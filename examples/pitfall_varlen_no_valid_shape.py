"""Per-sequence scale-and-shift over a padded batch -- forgetting the real sequence lengths.

Two pitfalls, both inside the batch loop of `varlen_affine`:

* PTO006 (view extent depends on a tensor value but has no valid_shape), line 33: `cur_len =
  seq_lens[b]` is read from a tensor, yet the view of batch `b` has no `valid_shape=`, so the
  padded rows past `cur_len` are processed and written as if they were data.  Fix:
  `pypto.view(..., valid_shape=[1, cur_len, HIDDEN])` (see clean_varlen_valid_shape.py).
* PTO007 (print inside pypto.loop), line 32: the debug `print` runs once per traced path at
  graph-build time and prints the symbol, never the per-batch values the author expects.

pypto 0.2.0 accepts both silently (the print shows up once, with symbolic text).

Expected diagnostics:
    PTO007 line 32
    PTO006 line 33
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
        print("batch", b, "cur_len", cur_len)  # PTO007
        seq = pypto.view(inp, [1, MAX_SEQ, HIDDEN], [b, 0, 0])  # PTO006
        out[b:b + 1, :, :] = seq * 2.0 + 1.0


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(26)
    return {
        "inp": torch.randn(BATCH, MAX_SEQ, HIDDEN, generator=g),
        "seq_lens": torch.tensor([64, 10, 33, 1], dtype=torch.int32),
        "out": torch.zeros(BATCH, MAX_SEQ, HIDDEN),
    }


def reference(inp, seq_lens, out):
    """What the author meant: only the first seq_lens[b] rows of each sequence are written."""
    expected = out.clone()
    for b, n in enumerate(seq_lens.tolist()):
        expected[b, :n] = inp[b, :n] * 2.0 + 1.0
    return {"out": expected}
