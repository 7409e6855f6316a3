"""Bias + leaky-ReLU epilogue factored into a `@pypto.frontend.function` helper.

`bias_lrelu` is inlined by the pypto parser (its AST is re-parsed in a new scope), so, like a
jit body, it has no `return` and writes its result through the out parameter `dst[:] = ...`.
It is called positionally, as 0.2.0 requires.  The kernel also shows a static branch on a
non-tensor parameter (`use_bias`), which is resolved at trace time.

Leaky ReLU is spelled `maximum(h, 0.1 * h)` rather than `pypto.lrelu(h, 0.1)`: 0.2.0 traces and
compiles `lrelu`, but its SIM cost model has no pipe for the LReLU opcode and the call raises
`F92001 No pipe type corresponding to opcode is found. opcode=LReLU`.

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto

ROWS, COLS = 64, 256
F32 = pypto.DT_FP32
NEG_SLOPE = 0.1


@pypto.frontend.function
def bias_lrelu(
    src: pypto.Tensor((ROWS, COLS), F32),
    bias: pypto.Tensor((1, COLS), F32),
    dst: pypto.Tensor((ROWS, COLS), F32),
):
    h = src + bias
    dst[:] = pypto.maximum(h, h * NEG_SLOPE)


@pypto.frontend.jit
def epilogue(
    x: pypto.Tensor((ROWS, COLS), F32),
    bias: pypto.Tensor((1, COLS), F32),
    out: pypto.Tensor((ROWS, COLS), F32),
    use_bias: bool = True,
):
    pypto.set_vec_tile_shapes(32, COLS)
    if use_bias:
        bias_lrelu(x, bias, out)
    else:
        out[:] = pypto.maximum(x, x * NEG_SLOPE)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(9)
    return {
        "x": torch.randn(ROWS, COLS, generator=g),
        "bias": torch.randn(1, COLS, generator=g),
        "out": torch.zeros(ROWS, COLS),
    }


def reference(x, bias, out, use_bias=True):
    import torch

    h = x + bias if use_bias else x
    return {"out": torch.nn.functional.leaky_relu(h, NEG_SLOPE)}
