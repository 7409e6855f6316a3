"""Linear layer with the K axis walked in blocks and accumulated in fp32.

make_splitk_linear() builds one jit kernel per problem size, the way a model wrapper
would when it meets a new projection. Inputs are fp16, the result is written as fp16.
"""
import torch

import pypto

FP16 = pypto.DT_FP16
FP32 = pypto.DT_FP32


def make_splitk_linear(m, k, n, k_block=128):
    assert k % k_block == 0, "K must be a multiple of the K block"
    k_steps = k // k_block

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def splitk_linear(
        a: pypto.Tensor([m, k], FP16),
        w: pypto.Tensor([k, n], FP16),
        out: pypto.Tensor([m, n], FP16),
    ):
        pypto.set_cube_tile_shapes([64, 64], [64, k_block], [128, n])
        pypto.set_vec_tile_shapes(16, n)
        acc = pypto.tensor([m, n], FP32, "acc")
        for kb in pypto.loop(k_steps, name="k_steps", idx_name="kb"):
            a_blk = pypto.view(a, [m, k_block], [0, kb * k_block])
            w_blk = pypto.view(w, [k_block, n], [kb * k_block, 0])
            part = pypto.matmul(a_blk, w_blk, FP32)
            acc[:] = acc + part
        out[:] = pypto.cast(acc, FP16)

    return splitk_linear


_KERNELS = {}


def splitk_linear(a, w):
    """torch-facing wrapper with one compiled kernel per (m, k, n)."""
    m, k = a.shape
    n = w.shape[1]
    key = (m, k, n)
    if key not in _KERNELS:
        _KERNELS[key] = make_splitk_linear(m, k, n)
    out = torch.empty(m, n, dtype=torch.float16)
    _KERNELS[key](a, w, out)
    return out


def test_splitk_linear_shapes():
    torch.manual_seed(1)
    for m, k, n in ((64, 512, 256), (64, 1024, 256)):
        a = torch.randn(m, k, dtype=torch.float16) * 0.1
        w = torch.randn(k, n, dtype=torch.float16) * 0.1
        out = splitk_linear(a, w)
        assert out.shape == (m, n)
