"""Run a ``Program`` on the host: emit Ascend C, build it against our CPU kernel_operator.h,
call the control program through ctypes.  Output tensors are written in place; locals and
workspaces are allocated here; returned values come back as tensors."""

from __future__ import annotations

import ctypes
import json
from typing import Optional

from . import ascendc
from .build import load_library
from .host_runtime import build_program
_DTYPES = {"fp32": "float32", "fp16": "float16", "int32": "int32", "bf16": "bfloat16", "int8": "int8",
           "bool": "bool", "int64": "int64", "int16": "int16", "uint8": "uint8"}
MAX_DIMS = 8


class HostRunError(Exception):
    """The kernel faulted on the host model (a pypto_host::HardwareFault or other error)."""


def _eval_dim(d):
    v = getattr(d, "value", d)
    if isinstance(v, int):
        return v
    return None


def run_host(program, inputs: dict, *, cache_dir=None, line_directives: bool = True,
             files: Optional[dict] = None, progress=None) -> dict:
    """Run ``program`` with ``inputs`` ({param name: torch tensor or number}); output tensors are
    written in place. Returns the GM traffic summed over all launches
    (``gm_to_ub_bytes``, ``ub_to_gm_bytes``, ``gm_to_ub_calls``, ``ub_to_gm_calls``), the minimum
    (``min_bytes``: every parameter tensor a kernel reads, read once, plus every one it writes,
    written once) and ``returned`` (the Return values, or None)."""
    import torch

    files = files if files is not None else ascendc.emit_program(program, line_directives=line_directives)
    manifest = json.loads(files["manifest.json"])
    params = {p.name: p for p in program.params}

    buffers, copies_back, dims = [], [], []
    by_name = {}
    for b in manifest["buffers"]:
        name = b["name"]
        want = getattr(torch, _DTYPES[b["dtype"]])
        if b["kind"] == "param":
            if name not in inputs:
                raise ValueError(f"missing tensor input {name!r}")
            t = inputs[name]
            p = params[name]
            decl = [_eval_dim(d) for d in p.type.shape]
            if not isinstance(t, torch.Tensor) or t.dtype != want or t.dim() != len(decl) or any(
                    d is not None and d != s for d, s in zip(decl, t.shape)):
                shown = [d if d is not None else "?" for d in decl]
                raise ValueError(f"{name}: expected a {p.type.dtype} tensor of shape {shown}")
            if t.device.type != "cpu" or not t.is_contiguous():
                c = t.detach().to("cpu").contiguous()
                if p.is_output:
                    copies_back.append((t, c))
                t = c
            shape = list(t.shape)
        else:
            shape = b["shape"]
            if any(d is None for d in shape):
                raise ValueError(f"buffer {name} has a dynamic shape")
            t = torch.empty(shape, dtype=want)
            if b["kind"] == "local" and t.is_floating_point():
                t.fill_(float("nan"))  # never written before read: shows up as NaN
        if len(shape) > MAX_DIMS:
            raise ValueError(f"{name}: rank {len(shape)} > {MAX_DIMS}")
        dims += list(shape) + [1] * (MAX_DIMS - len(shape))
        buffers.append(t)
        by_name[name] = t
    scalars = []
    for name in manifest["scalars"]:
        v = inputs.get(name, params[name].value)
        scalars.append(int(v) if isinstance(v, (int, bool)) or float(v).is_integer() else 0)

    # Arguments are checked above, before anything is compiled.
    sources = {n: t for n, t in files.items() if n.endswith(".cpp")}
    lib = load_library(build_program(sources, cache_dir=cache_dir, progress=progress))
    ptrs = (ctypes.c_void_p * max(1, len(buffers)))(*[b.data_ptr() for b in buffers])
    svals = (ctypes.c_int64 * max(1, len(scalars)))(*scalars)
    dvals = (ctypes.c_int64 * max(1, len(dims)))(*dims)
    lib.pypto_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.pypto_run.restype = ctypes.c_int
    lib.pypto_last_error.restype = ctypes.c_char_p
    rc = lib.pypto_run(ptrs, svals, dvals)
    if rc != 0:
        raise HostRunError(lib.pypto_last_error().decode(errors="replace"))
    for dst, src in copies_back:
        dst.copy_(src)
    traffic = (ctypes.c_uint64 * 4)()
    lib.pypto_traffic(traffic)
    read, written = set(), set()
    for k in manifest["kernels"]:
        for r in k.get("tiling", []):
            if r.get("buffer_kind", "param") == "param":
                (read if r["dir"] == "in" else written).add(r["tensor"])
    nbytes = lambda n: by_name[n].numel() * by_name[n].element_size()  # noqa: E731
    returned = None
    if manifest.get("returns"):
        vals = tuple(by_name[r["buffer"]] for r in manifest["returns"])
        returned = vals[0] if len(vals) == 1 else vals
    return {"gm_to_ub_bytes": traffic[0], "ub_to_gm_bytes": traffic[1],
            "gm_to_ub_calls": traffic[2], "ub_to_gm_calls": traffic[3],
            "min_bytes": sum(nbytes(n) for n in read) + sum(nbytes(n) for n in written),
            "returned": returned}
