"""Row softmax over classifier logits for a variable number of rows.

logits / probs are [N, num_classes] fp32 with N dynamic; rows are processed
in blocks and the tail block carries its real row count as valid_shape.
"""
import os
import sys

import torch

import pypto


class HeadConfig:
    """Shape of the classification head."""

    def __init__(self, num_classes=100, row_block=16):
        self.num_classes = num_classes
        self.row_block = row_block


CFG = HeadConfig()
FP32 = pypto.DT_FP32


def _run_mode():
    if "--sim" in sys.argv or not os.environ.get("ASCEND_HOME_PATH"):
        return pypto.RunMode.SIM
    return pypto.RunMode.NPU


@pypto.frontend.jit(runtime_options={"run_mode": _run_mode()})
def classifier_softmax(
    logits: pypto.Tensor([pypto.DYNAMIC, CFG.num_classes], FP32),
    probs: pypto.Tensor([pypto.DYNAMIC, CFG.num_classes], FP32),
):
    n_rows = logits.shape[0]
    blk = CFG.row_block
    classes = CFG.num_classes
    # one tile holds a full row of classes, so max and sum stay in one tile
    pypto.set_vec_tile_shapes(blk, classes)
    for i in pypto.loop((n_rows + blk - 1) // blk, name="row_blocks", idx_name="i"):
        valid_rows = pypto.min(blk, n_rows - i * blk)
        x = pypto.view(logits, [blk, classes], [i * blk, 0], valid_shape=[valid_rows, classes])
        row_max = pypto.amax(x, -1, keepdim=True)
        e = pypto.exp(x - row_max)
        denom = pypto.sum(e, -1, keepdim=True)
        pypto.assemble(e / denom, [i * blk, 0], probs)


def test_classifier_softmax_tail():
    for n in (16, 40, 129):
        logits = torch.randn(n, CFG.num_classes)
        probs = torch.zeros(n, CFG.num_classes)
        classifier_softmax(logits, probs)
        if _run_mode() == pypto.RunMode.NPU:
            torch.testing.assert_close(probs, torch.softmax(logits, -1), rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    test_classifier_softmax_tail()
