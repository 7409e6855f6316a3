"""Matmul with b_trans (weights stored [N, K]) plus a bias row, and with a_trans."""
import pypto

M, K, N = 32, 64, 48
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def matmul_trans(
    a: pypto.Tensor((M, K), F16),
    w: pypto.Tensor((N, K), F16),
    bias: pypto.Tensor((1, N), F32),
    at: pypto.Tensor((K, M), F16),
    b: pypto.Tensor((K, N), F16),
    lin: pypto.Tensor((M, N), F32),
    tt: pypto.Tensor((M, N), F32),
):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [16, 48])
    pypto.set_vec_tile_shapes(32, 48)
    lin[:] = pypto.relu(pypto.matmul(a, w, F32, b_trans=True, extend_params={"bias_tensor": bias}))
    tt[:] = pypto.matmul(at, b, F32, a_trans=True)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(13)
    return {"a": torch.randn(M, K, generator=g).half(), "w": torch.randn(N, K, generator=g).half(),
            "bias": torch.randn(1, N, generator=g), "at": torch.randn(K, M, generator=g).half(),
            "b": torch.randn(K, N, generator=g).half(), "lin": torch.zeros(M, N), "tt": torch.zeros(M, N)}


def reference(a, w, bias, at, b, lin, tt):
    import torch

    return {"lin": torch.relu(a.float() @ w.float().T + bias), "tt": at.float().T @ b.float()}


TOLERANCE = (1e-4, 1e-4)
