# near-miss: PTO021
"""What pypto does parse: a Python `for` over a build-time range (unrolled), a helper that runs as
plain Python (its `while` and `try` are Python's), build-time conditional expressions, a
comprehension over its own names, and a guard that raises on a configuration the kernel refuses."""
import pypto

BLOCK = 32


def block_count(rows):
    n = 0
    while n * BLOCK < rows:
        n += 1
    try:
        return int(n)
    except TypeError:
        return n


@pypto.frontend.jit
def scaled_blocks(
    x: pypto.Tensor([128, 64], pypto.DT_FP32),
    y: pypto.Tensor([BLOCK, 64], pypto.DT_FP32),
    scale: float = 1.0,
):
    pypto.set_vec_tile_shapes(BLOCK, 64)
    if scale <= 0.0:
        raise ValueError("scale must be positive")
    weights = [0.5 ** (k + 1) for k in range(4)]
    bias = 1.0 if x.shape[1] == 64 else 0.0
    y[:] = pypto.view(x, [BLOCK, 64], [0, 0]) * weights[0]
    for blk in range(1, block_count(x.shape[0])):
        part = pypto.view(x, [BLOCK, 64], [blk * BLOCK, 0])
        y[:] = y + part * weights[blk]
    y[:] = y * scale + bias
