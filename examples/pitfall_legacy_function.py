"""Legacy-style add + ReLU launched with `with pypto.function(...)` instead of `@frontend.jit`.

Pitfall PTO002 (legacy launch without a device), line 55, the launcher `add_relu` called on NPU
tensors: its body records the graph with `pypto.function` on `from_torch` tensors; nothing calls
`torch.npu.set_device(...)` first.  On an NPU host the device-side launch fails with
"fail get device id, check if set device id" (the FAQ's device-id-not-set page).  The fix is to
write the kernel with `@pypto.frontend.jit` (which launches on the tensors' current device), or
at least call `torch.npu.set_device(device_id)` before recording.  On a CPU-only host 0.2.0 takes
the device compile path when the context exits and the process exits with status 1 (`bisheng`
missing) without raising a Python exception.

This module has no `frontend.jit` kernel; `ENTRY` names the plain launcher function.

Expected diagnostics:
    PTO002 line 55
"""
import pypto

ROWS, COLS = 64, 128
ENTRY = "add_relu"


def add_relu(x, y, out):
    """Record and launch relu(x + y) into `out` (all torch tensors, meant to live on the NPU)."""
    px = pypto.from_torch(x, "x")
    py = pypto.from_torch(y, "y")
    pout = pypto.from_torch(out, "out")
    with pypto.function("add_relu", px, py, pout):
        for _ in pypto.loop(1, name="body", idx_name="i"):
            pypto.set_vec_tile_shapes(32, COLS)
            pout.move(pypto.relu(px + py))


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(22)
    return {
        "x": torch.randn(ROWS, COLS, generator=g),
        "y": torch.randn(ROWS, COLS, generator=g),
        "out": torch.zeros(ROWS, COLS),
    }


def reference(x, y, out):
    import torch

    return {"out": torch.relu(x + y)}


if __name__ == "__main__":
    import torch_npu  # noqa: F401  (registers the NPU device for .npu())

    inputs = {k: v.npu() for k, v in example_inputs().items()}  # no torch.npu.set_device(...)
    add_relu(**inputs)  # PTO002
