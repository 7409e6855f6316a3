"""The NPU backend: the emitted Ascend C built with CANN's bisheng (``emit/npu_build``) and launched on
torch_npu's current stream (``emit/npu_launch``).  What it needs is what ``pypto-transpile doctor
--backend npu`` checks; when something is missing, :class:`~pypto_ast.errors.BackendUnavailable`
names it before anything is built."""

from __future__ import annotations

import os
import sys

from . import Prepared


def torch_npu_works() -> bool:
    """Whether the real torch_npu imports here (tried once; never the drop-in's stub).  A failed import
    leaves no torch_npu module behind."""
    module = sys.modules.get("torch_npu")
    if module is not None:
        return not getattr(module, "__pypto_ast_dropin__", False)
    import importlib.util

    try:
        if importlib.util.find_spec("torch_npu") is None:
            return False
    except (ImportError, ValueError):
        return False
    try:
        import torch_npu  # noqa: F401
    except Exception:  # noqa: BLE001 - installed but unusable here (no CANN)
        for name in [n for n in sys.modules if n == "torch_npu" or n.startswith("torch_npu.")]:
            sys.modules.pop(name, None)
        return False
    return True


def _device_id(inputs: dict):
    """The NPU the tensors are on, else ``TILE_FWK_DEVICE_ID``; None when neither says."""
    for value in inputs.values():
        device = getattr(value, "device", None)
        if device is not None and device.type == "npu" and device.index is not None:
            return device.index
    value = os.environ.get("TILE_FWK_DEVICE_ID", "").strip()
    return int(value) if value.isdigit() else None


def unavailable(inputs: dict) -> str:
    """Why this process cannot launch on an NPU ('' when it can)."""
    from ..emit.cann import ToolkitError, find_toolkit

    missing = []
    try:
        find_toolkit()
    except ToolkitError as exc:
        missing.append(str(exc))
    if not torch_npu_works():
        missing.append("torch_npu does not import here (it needs CANN's libraries: `source <CANN>/set_env.sh`)")
    if _device_id(inputs) is None:
        missing.append("no device id: pass NPU tensors, or export TILE_FWK_DEVICE_ID=0, or call torch.npu.set_device(id)")
    return "; ".join(missing)


def prepare(program, names, inputs, *, soc=None, source_path=None, progress=None) -> Prepared:
    from .. import pipeline
    from ..emit import npu_build
    from ..emit.build import load_library
    from ..emit.cann import find_toolkit
    from ..emit.host_backend import HostRunError, launch_layout
    from ..emit.npu_launch import NpuLaunch
    from ..emit.soc import DEFAULT_SOC
    from ..errors import BackendUnavailable

    why = unavailable(inputs)
    if why:
        raise BackendUnavailable(f"the npu backend cannot run here: {why} (pypto-transpile doctor --backend npu)")
    import torch

    device = _device_id(inputs)
    torch.npu.set_device(device)  # the FAQ's "fail get device id" cannot happen after this
    files = pipeline.emit(program, "ascendc", soc=soc, source_path=source_path, npu=True)
    library = npu_build.build_npu_library(files, find_toolkit(), soc=soc or DEFAULT_SOC, progress=progress)
    scalars = {p.name: inputs.get(p.name, p.value) for p in program.params if p.kind == "scalar"}
    layout = launch_layout(program, files, scalars)
    launch = NpuLaunch(layout, load_library(library), names, device=f"npu:{device}")
    return Prepared("npu", launch.launch, (HostRunError,), layout, str(library))
