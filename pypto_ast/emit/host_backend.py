"""Run a ``Program`` on the host: emit Ascend C, build it against our CPU kernel_operator.h,
call the control program through ctypes. Output tensors are written in place."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path
from typing import Optional

from . import ascendc
from .build import build_host_library, load_library

HEADER_DIR = Path(__file__).parent / "host"
_DTYPES = {"fp32": "float32", "fp16": "float16"}


class HostRunError(Exception):
    """The kernel faulted on the host model (a pypto_host::HardwareFault or other error)."""


def run_host(program, inputs: dict, *, cache_dir=None, line_directives: bool = True,
             files: Optional[dict] = None) -> dict:
    """Run ``program`` with ``inputs`` ({param name: torch tensor or number}); output tensors are
    written in place. Returns the GM traffic summed over all launches:
    ``{"gm_to_ub_bytes", "ub_to_gm_bytes", "gm_to_ub_calls", "ub_to_gm_calls"}``."""
    import torch

    files = files if files is not None else ascendc.emit_program(program, line_directives=line_directives)
    manifest = json.loads(files["manifest.json"])
    sources = {n: t for n, t in files.items() if n.endswith(".cpp")}
    lib = load_library(build_host_library(sources, include_dirs=[HEADER_DIR], cache_dir=cache_dir))
    params = {p.name: p for p in program.params}

    buffers, copies_back = [], []
    for name in manifest["tensors"]:
        if name not in inputs:
            raise ValueError(f"missing tensor input {name!r}")
        t = inputs[name]
        p = params[name]
        want = getattr(torch, _DTYPES[p.type.dtype])
        shape = tuple(d.value for d in p.type.shape)
        if not isinstance(t, torch.Tensor) or t.dtype != want or tuple(t.shape) != shape:
            raise ValueError(f"{name}: expected a {p.type.dtype} tensor of shape {list(shape)}")
        if t.device.type != "cpu" or not t.is_contiguous():
            c = t.detach().to("cpu").contiguous()
            if p.is_output:
                copies_back.append((t, c))
            t = c
        buffers.append(t)
    scalars = []
    for name in manifest["scalars"]:
        v = inputs.get(name, params[name].value)
        scalars.append(int(v) if isinstance(v, (int, bool)) or float(v).is_integer() else 0)

    ptrs = (ctypes.c_void_p * max(1, len(buffers)))(*[b.data_ptr() for b in buffers])
    svals = (ctypes.c_int64 * max(1, len(scalars)))(*scalars)
    lib.pypto_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.pypto_run.restype = ctypes.c_int
    lib.pypto_last_error.restype = ctypes.c_char_p
    rc = lib.pypto_run(ptrs, svals)
    if rc != 0:
        raise HostRunError(lib.pypto_last_error().decode(errors="replace"))
    for dst, src in copies_back:
        dst.copy_(src)
    traffic = (ctypes.c_uint64 * 4)()
    lib.pypto_traffic(traffic)
    return {"gm_to_ub_bytes": traffic[0], "ub_to_gm_bytes": traffic[1],
            "gm_to_ub_calls": traffic[2], "ub_to_gm_calls": traffic[3]}
