#!/usr/bin/env python3
"""Kernels and tests written the way the official PyPTO examples write them (not copied from
them): ``import torch_npu`` at the top, ``pypto.frontend.jit`` kernels with ``pypto.Tensor``
annotations, ``@pypto.options`` test functions taking a device, checks guarded by ``"npu" in
device``, a ``main()`` with argparse.  Run by tests/dropin under ``python -m pypto_ast.dropin``
and ``pytest -p pypto_ast.pytest_plugin``."""

import argparse
import os
import sys
from dataclasses import dataclass

import torch
import torch_npu  # noqa: F401

import pypto

runtime_options = {"run_mode": pypto.RunMode.NPU}
pypto.set_pass_options(vec_nbuffer_mode=0)


@dataclass
class ScaleConfig:
    factor: float = 3.0
    tile: int = 16


@pypto.frontend.jit(runtime_options=runtime_options)
def scale_add_kernel(
    a: pypto.Tensor[[...], pypto.DT_FP32],
    b: pypto.Tensor[[...], pypto.DT_FP32],
    out: pypto.Tensor[[...], pypto.DT_FP32],
):
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = (a + b) * 2.0


@pypto.frontend.jit(runtime_options=runtime_options)
def rows_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
    config: ScaleConfig,
):
    pypto.set_vec_tile_shapes(config.tile, 64)
    rows = x.shape[0]
    for i in pypto.loop((rows + config.tile - 1) // config.tile):
        block = pypto.view(x, [config.tile, 64], [i * config.tile, 0],
                           valid_shape=[(rows - i * config.tile).min(config.tile), 64])
        pypto.assemble(pypto.mul(block, config.factor), [i * config.tile, 0], out)


def softmax_rows(x):
    """A kernel made inside a function, reading its closure (as the reduce examples do)."""
    dim = -1

    @pypto.frontend.jit(runtime_options=runtime_options)
    def softmax_kernel(inp: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        row_max = pypto.amax(inp, dim=dim, keepdim=True)
        e = pypto.exp(pypto.sub(inp, row_max))
        out[:] = pypto.div(e, pypto.sum(e, dim=dim, keepdim=True))

    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel(x, out)
    return out


@pypto.options(pass_options={"enable_slice": True})
def test_scale_add(device):
    a = torch.randn((32, 64), dtype=torch.float32, device=device)
    b = torch.randn((32, 64), dtype=torch.float32, device=device)
    out = torch.zeros((32, 64), dtype=torch.float32, device=device)
    scale_add_kernel(a, b, out)
    if "npu" in device:
        torch.testing.assert_close(out, (a + b) * 2.0, atol=1e-5, rtol=1e-5)
    else:
        print("sim mode: not compared")


@pypto.options(pass_options={"enable_slice": True})
def test_rows(device):
    config = ScaleConfig()
    x = torch.randn((40, 64), dtype=torch.float32, device=device)
    out = torch.zeros((40, 64), dtype=torch.float32, device=device)
    rows_kernel(x, out, config)
    torch.npu.synchronize()
    if "npu" in device:
        torch.testing.assert_close(out, x * config.factor, atol=1e-5, rtol=1e-5)


@pypto.options(pass_options={"enable_slice": True})
def test_softmax(device):
    x = torch.rand((16, 64), dtype=torch.float32, device=device)
    out = softmax_rows(x)
    if "npu" in device:
        torch.testing.assert_close(out.cpu(), torch.softmax(x, dim=-1).cpu(), atol=1e-5, rtol=1e-5)


def device_init(run_mode):
    if run_mode == "sim":
        runtime_options["run_mode"] = pypto.RunMode.SIM
        return "cpu"
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    return f"npu:{device_id}"


def main():
    examples = {"scale_add": test_scale_add, "rows": test_rows, "softmax": test_softmax}
    parser = argparse.ArgumentParser(description="official-style drop-in test script")
    parser.add_argument("-m", "--run_mode", choices=["npu", "sim"], default="npu")
    parser.add_argument("-t", "--tests", nargs="*", choices=examples.keys())
    args = parser.parse_args()
    device = device_init(args.run_mode)
    for name in args.tests or examples:
        print(f"Running test_{name} ...")
        examples[name](device)
        print(f"ok {name} on {device}")
    print(f"argv={sys.argv[1:]}")


if __name__ == "__main__":
    main()
