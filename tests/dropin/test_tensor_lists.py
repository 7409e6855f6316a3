"""Python lists of tensors built while pypto traces a kernel: appended in a loop, written as
literals, comprehensions, repeated (``[t] * group``), concatenated (``parts + [tail]``), sliced,
reversed, summed, and handed to ``pypto.concat``.  The front end computes them as Python does
(the items are the tensors themselves).  Our own kernel in the models' style (a helper module, a
config object, bf16 in, fp32 math), compared with torch on each backend."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import BACKENDS, write  # noqa: E402

HELPERS = """
    import pypto


    def column_blocks(t, width):
        rows, cols = t.shape
        blocks = []
        for c in range(cols // width):
            blocks.append(pypto.view(t, [rows, width], [0, c * width]))
        return blocks


    def weighted(blocks, weights):
        return [pypto.mul(b, w) for b, w in zip(blocks, weights)]
"""

KERNEL = """
    from dataclasses import dataclass

    import torch

    import pypto
    from list_helpers import column_blocks, weighted


    @dataclass
    class MixConfig:
        width: int = 16
        repeat: int = 3
        weights: tuple = (1.0, -2.0, 0.5, 4.0)


    @pypto.frontend.jit
    def block_mix(
        x: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16),
        sink: pypto.Tensor([pypto.STATIC], pypto.DT_FP32),
        mixed: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
        stacked: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
        total: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
        cfg: MixConfig,
    ):
        rows, cols = x.shape
        pypto.set_vec_tile_shapes(rows, cfg.width)
        x32 = pypto.cast(x, pypto.DT_FP32)
        blocks = column_blocks(x32, cfg.width)
        scaled = weighted(blocks, cfg.weights)
        head, tail = scaled[:-1], scaled[-1]
        order = [tail] + list(reversed(head))  # a list literal plus a list
        mixed[:] = pypto.concat(order, dim=-1)

        pypto.set_vec_tile_shapes(rows * cfg.repeat, 1)
        column = pypto.reshape(sink, [sink.shape[0], 1], inplace=True)
        stacked[:] = pypto.concat([column] * cfg.repeat, dim=0)  # the models' `[t] * group_size`

        pypto.set_vec_tile_shapes(rows, cfg.width)
        total[:] = sum(blocks[1:], blocks[0])


    def golden(x, sink, cfg):
        v = x.float()
        blocks = [v[:, c * cfg.width:(c + 1) * cfg.width] for c in range(v.shape[1] // cfg.width)]
        scaled = [b * w for b, w in zip(blocks, cfg.weights)]
        mixed = torch.cat([scaled[-1]] + scaled[:-1][::-1], -1)
        stacked = torch.cat([sink.reshape(-1, 1)] * cfg.repeat, 0)
        return mixed, stacked, sum(blocks[1:], blocks[0])


    def run(rows=8):
        cfg = MixConfig()
        x = torch.randn(rows, cfg.width * 4).to(torch.bfloat16)
        sink = torch.randn(rows)
        outs = (torch.zeros(rows, cfg.width * 4), torch.zeros(rows * cfg.repeat, 1), torch.zeros(rows, cfg.width))
        block_mix(x, sink, *outs, cfg)
        return outs, golden(x, sink, cfg)
"""


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("backend", BACKENDS)
def test_lists_of_tensors_built_in_the_kernel(tmp_path, monkeypatch, backend):
    write(tmp_path / "list_helpers.py", HELPERS)
    path = write(tmp_path / "block_mix_kernel.py", KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    dropin.install(backend)
    try:
        module = load(path, f"block_mix_kernel_{backend}")
        got, want = module.run()
    finally:
        dropin.uninstall()
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_a_list_repeated_a_symbolic_number_of_times_is_located(tmp_path):
    from pypto_ast import pipeline

    path = write(tmp_path / "sym_repeat.py", """
        import pypto


        @pypto.frontend.jit
        def repeat_rows(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
                        y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            y[:] = pypto.concat([x] * x.shape[0], dim=0)
    """)
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(path))
    assert info.value.code == "PTO105"
    assert "repeated a symbolic number of times" in str(info.value)
