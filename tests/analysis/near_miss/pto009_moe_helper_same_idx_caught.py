# caught: PTO009
"""MoE combine: the loop over experts and the token-block loop inside the helper it calls both
name their index `i`; pypto 0.2.0 logs F21007 and the process segfaults."""
import pypto

EXPERTS, CAP, HIDDEN, BLOCK = 8, 128, 256, 32


def weigh_expert_rows(expert_out, weights, combined, e):
    for t in pypto.loop(CAP // BLOCK, name="token_blocks", idx_name="i"):
        rows = pypto.view(expert_out, [BLOCK, HIDDEN], [e * CAP + t * BLOCK, 0])
        w = pypto.view(weights, [BLOCK, 1], [e * CAP + t * BLOCK, 0])
        pypto.assemble(pypto.mul(rows, w), [e * CAP + t * BLOCK, 0], combined)


@pypto.frontend.jit
def moe_weigh(
    expert_out: pypto.Tensor([EXPERTS * CAP, HIDDEN], pypto.DT_FP32),
    weights: pypto.Tensor([EXPERTS * CAP, 1], pypto.DT_FP32),
    combined: pypto.Tensor([EXPERTS * CAP, HIDDEN], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, HIDDEN)
    for e in pypto.loop(EXPERTS, name="experts", idx_name="i"):
        weigh_expert_rows(expert_out, weights, combined, e)
