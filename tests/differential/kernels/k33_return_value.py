"""Return convention (`@pypto_ast.jit`): the kernel returns its result instead of writing an
output parameter."""
import pypto
import pypto_ast

R, C = 32, 64
F32 = pypto.DT_FP32


@pypto_ast.jit
def gated(x: pypto.Tensor((R, C), F32), gate: pypto.Tensor((R, C), F32)):
    pypto.set_vec_tile_shapes(16, 64)
    return x * pypto.sigmoid(gate) + 1.0


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(33)
    return {"x": torch.randn(R, C, generator=g), "gate": torch.randn(R, C, generator=g)}


def reference(x, gate):
    import torch

    return x * torch.sigmoid(gate) + 1.0
