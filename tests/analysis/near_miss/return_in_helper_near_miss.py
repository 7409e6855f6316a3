# near-miss: PTO020
"""Returns that pypto accepts: a plain helper the kernel calls, a closure defined in the kernel
body, and the test function that launches the kernel."""
import pypto
import torch


def softplus(t):
    return pypto.log(pypto.add(pypto.exp(t), 1.0))


def test_softplus():
    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([64, 128], pypto.DT_FP32),
        y: pypto.Tensor([64, 128], pypto.DT_FP32),
    ):
        pypto.set_vec_tile_shapes(16, 128)

        def doubled(t):
            return pypto.mul(t, 2.0)

        y[:] = softplus(doubled(x))

    out = torch.zeros(64, 128)
    kernel(torch.randn(64, 128), out)
    return out
