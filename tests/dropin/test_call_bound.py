"""What a call binds in the repository's pypto (883e7df) and the drop-in follows: a
``pypto.Tensor(shape)`` annotation without a dtype takes the argument's (``explicit_dtype``);
a list of STATIC/DYNAMIC markers (pypto's status shape) accepts an argument of higher rank, the
extra dims static; ``t[:] = v`` on a computed tensor inside a loop carries to the next iteration
and past the loop (the move writes the tensor object); the helpers models import from
``pypto.operation`` (``op_wrapper``) and torch_npu's ``npu_format_cast``.  Kernels are our own,
in the models' style (a config object, a helper module, bf16 with fp32 accumulation)."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import BACKENDS, write  # noqa: E402

HELPERS = """
    import pypto
    from pypto.operation import op_wrapper


    @op_wrapper
    def scaled(t, factor):
        return pypto.mul(t, factor)


    def row_energy(v, eps):
        v32 = pypto.cast(v, pypto.DT_FP32)
        return pypto.div(v32 * v32 + eps, 1.0, pypto.PrecisionType.INTRINSIC)
"""

KERNEL = """
    from dataclasses import dataclass

    import torch
    import torch_npu

    import pypto
    from carry_helpers import row_energy, scaled


    @dataclass
    class RowConfig:
        rows: int = 4
        eps: float = 1e-6
        scale: float = 0.5


    @pypto.frontend.jit
    def accumulate_rows(
        blocks: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC]),
        gamma: pypto.Tensor([pypto.STATIC, pypto.STATIC]),
        out: pypto.Tensor([pypto.STATIC, pypto.STATIC]),
        config: RowConfig,
    ):
        n, d = blocks.shape
        r = config.rows
        acc = pypto.zeros([r, d], dtype=pypto.DT_FP32)
        for i in pypto.loop(0, n // r, 1, name="ROWS", idx_name="i"):
            pypto.set_vec_tile_shapes(r, d)
            block = pypto.view(blocks, [r, d], [i * r, 0])
            acc[:] = acc + scaled(row_energy(block, config.eps), config.scale)
        pypto.set_vec_tile_shapes(r, d)
        g = pypto.reshape(gamma, [1, d])
        out[:] = pypto.cast(acc * g, out.dtype)


    def golden(blocks, gamma, config):
        v = blocks.float().reshape(-1, config.rows, blocks.shape[-1])
        acc = ((v * v + config.eps) * config.scale).sum(0)
        return (acc * gamma.reshape(1, -1)).to(blocks.dtype)


    def run(rows=12, d=64, dtype=torch.bfloat16):
        config = RowConfig()
        blocks = torch.randn(rows, d).to(dtype).npu()
        gamma = torch.rand(1, 1, d).npu()  # rank 3 for a two-marker list: pypto accepts it
        gamma_nz = torch_npu.npu_format_cast(gamma, torch_npu.Format.FRACTAL_NZ)
        out = torch.zeros(config.rows, d, dtype=dtype).npu()
        accumulate_rows(blocks, gamma_nz, out, config)
        return out.cpu(), golden(blocks.cpu(), gamma.cpu(), config)
"""


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kernel_module(tmp_path, monkeypatch):
    write(tmp_path / "carry_helpers.py", HELPERS)
    path = write(tmp_path / "carry_kernel.py", KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    dropin.install("interp")
    try:
        yield path
    finally:
        dropin.uninstall()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dtype_less_annotation_rank_and_loop_carried_move(kernel_module, backend, dtype):
    dropin.install(backend)
    module = load(kernel_module, f"carry_kernel_{backend}_{dtype}")
    got, want = module.run(dtype=getattr(torch, dtype))
    assert got.dtype == getattr(torch, dtype)  # the dtype-less `out` took the argument's dtype
    # every block counts: without the carry only the last block's energy would be there
    torch.testing.assert_close(got.float(), want.float(), rtol=1e-2, atol=1e-2)
    assert module.accumulate_rows.last_backend == backend


def test_wrong_rank_is_a_clean_value_error(kernel_module):
    module = load(kernel_module, "carry_kernel_rank")
    config = module.RowConfig()
    blocks = torch.randn(8, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match=r"`gamma`.*rank at least 2 but the argument has shape \[64\]"):
        module.accumulate_rows(blocks, torch.rand(64), torch.zeros(4, 64, dtype=torch.bfloat16), config)


def test_explicit_dtype_still_checked(tmp_path):
    source = """
        import pypto


        @pypto.frontend.jit
        def double(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 32])):
            pypto.set_vec_tile_shapes(8, 32)
            for i in pypto.loop(0, x.shape[0] // 8, 1, name="L", idx_name="i"):
                y[i * 8:(i + 1) * 8, :] = pypto.cast(pypto.view(x, [8, 32], [i * 8, 0]) * 2.0, y.dtype)
    """
    dropin.install("interp")
    try:
        module = load(write(tmp_path / "explicit.py", source), "explicit_dtype_kernel")
        with pytest.raises(TypeError, match=r"`x` is declared fp32 but the argument is bf16"):
            module.double(torch.zeros(16, 32, dtype=torch.bfloat16), torch.zeros(16, 32, dtype=torch.bfloat16))
        y = torch.zeros(16, 32, dtype=torch.float16)  # y names no dtype: fp16 is its dtype for this call
        x = torch.randn(16, 32)
        module.double(x, y)
        torch.testing.assert_close(y, (x * 2).half())
    finally:
        dropin.uninstall()
