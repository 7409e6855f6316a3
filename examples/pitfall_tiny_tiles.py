"""Fused scale / bias / gate over a 1024x1024 fp16 activation, with a tiny vector tile.

Two pitfalls, both in `scale_bias_gate`:

* PTO004 (last tile dim not 32-byte aligned), line 33: the tile (16, 24) has a last dim of
  24 fp16 = 48 bytes, not a multiple of 32 (use 16 or 32 elements for fp16).  Elementwise ops
  do not check this in 0.2.0 (reductions do), so it is silently accepted, with an extra tail
  leaf because 24 does not divide 1024.
* PTO013 (too many tile operations in one loop body), line 25: the kernel body (the implicit
  `loop(1)`) holds 3 binary ops on 1024x1024 tensors; with 16 x 24 = 384-element tiles that is
  (1048576 / 384) x (1 + 2) x 3 = 24576 tile operations, above the 18000 the tiling guide gives
  before the expression table blows up.  A (64, 256) tile gives 64 tiles per op.

Expected diagnostics:
    PTO004 line 33
    PTO013 line 25
"""
import pypto

N = 1024
F16 = pypto.DT_FP16


@pypto.frontend.jit
def scale_bias_gate(  # PTO013
    x: pypto.Tensor((N, N), F16),
    scale: pypto.Tensor((N, N), F16),
    bias: pypto.Tensor((N, N), F16),
    gate: pypto.Tensor((N, N), F16),
    out: pypto.Tensor((N, N), F16),
):
    # small tiles "for more parallelism"
    pypto.set_vec_tile_shapes(16, 24)  # PTO004
    h = x * scale
    h = h + bias
    out[:] = h * gate


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(24)
    return {
        "x": torch.randn(N, N, generator=g).half(),
        "scale": torch.rand(N, N, generator=g).half(),
        "bias": torch.randn(N, N, generator=g).half(),
        "gate": torch.rand(N, N, generator=g).half(),
        "out": torch.zeros(N, N, dtype=torch.float16),
    }


def reference(x, scale, bias, gate, out):
    return {"out": ((x.float() * scale.float() + bias.float()) * gate.float()).half()}
