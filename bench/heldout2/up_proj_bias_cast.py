"""Dense up-projection with bias, accumulated in fp32 and emitted as fp16."""

import torch

import pypto

M, K, N = 128, 512, 512
N_BLK = 256


class ProjTiles:
    # fp16 operands: every value is a multiple of 16 elements (32 bytes), L1 = k(L0) multiples
    m = [128, 128]
    k = [64, 256]
    n = [128, 256]
    vec = (64, 256)


def proj_block(x, w, n_idx):
    wb = pypto.view(w, [K, N_BLK], [0, n_idx * N_BLK])
    return pypto.matmul(x, wb, pypto.DT_FP32)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def up_proj(
    x: pypto.Tensor[[M, K], pypto.DT_FP16],
    w: pypto.Tensor[[K, N], pypto.DT_FP16],
    bias: pypto.Tensor[[1, N], pypto.DT_FP32],
    out: pypto.Tensor[[M, N], pypto.DT_FP16],
):
    pypto.set_cube_tile_shapes(ProjTiles.m, ProjTiles.k, ProjTiles.n)
    pypto.set_vec_tile_shapes(*ProjTiles.vec)
    acc = pypto.tensor([M, N], pypto.DT_FP32, "acc")
    for n in pypto.loop(N // N_BLK, name="n_blocks", idx_name="n"):
        pypto.assemble(proj_block(x, w, n), [0, n * N_BLK], acc)
    out[:] = pypto.cast(acc + bias, pypto.DT_FP16)


def test_up_proj():
    x = torch.randn(M, K, dtype=torch.float16)
    w = torch.randn(K, N, dtype=torch.float16) * 0.05
    bias = torch.randn(1, N)
    out = torch.zeros(M, N, dtype=torch.float16)
    up_proj(x, w, bias, out)
    ref = (x.float() @ w.float() + bias).half()
    assert out.shape == ref.shape


if __name__ == "__main__":
    test_up_proj()
