# caught: PTO003
"""Attention softmax that also stores the per-row max: the 1-D tile set for the row-max store
is still in effect when the 2-D probabilities are computed."""
import pypto

Q, KV = 64, 256


@pypto.frontend.jit
def softmax_with_max(
    scores: pypto.Tensor([Q, KV], pypto.DT_FP32),
    probs: pypto.Tensor([Q, KV], pypto.DT_FP32),
    row_max: pypto.Tensor([Q], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(16, KV)
    peak = pypto.amax(scores, -1)
    pypto.set_vec_tile_shapes(Q)
    row_max[:] = pypto.mul(peak, 1.0)
    shifted = pypto.exp(pypto.sub(scores, pypto.reshape(peak, [Q, 1])))
    probs[:] = pypto.div(shifted, pypto.sum(shifted, -1, keepdim=True))
