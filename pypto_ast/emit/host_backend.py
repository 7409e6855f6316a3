"""Run a ``Program`` on the host: emit Ascend C, build it against our CPU kernel_operator.h,
call the control program through ctypes.  Output tensors are written in place; locals and
workspaces are allocated here; returned values come back as tensors.

Two ways in: :func:`run_host` checks, builds, runs once and reports the GM traffic (the CLI's
``--run``, the tests); :class:`HostLaunch` is a library loaded once with its argument layout
prepared (pointer array, dims, scalars, scratch buffers), so each ``launch`` does only the
pointer packing and the ``pypto_run`` call (``@pypto_ast.jit``'s warm path)."""

from __future__ import annotations

import ctypes
import functools
import json
import threading
from typing import Optional, Sequence

from .. import rounding_ties
from ..arguments import aliased_inputs, check_outputs, overlapping
from . import abi
from .build import load_library
from .host_runtime import build_program
_DTYPES = {"fp32": "float32", "fp16": "float16", "int32": "int32", "bf16": "bfloat16", "int8": "int8",
           "bool": "bool", "int64": "int64", "int16": "int16", "uint8": "uint8"}
_DTYPES.update(uint16="uint16", uint32="uint32")  # the integer family's (emit/vector_int.py)
MAX_DIMS = 8


class HostRunError(Exception):
    """The kernel faulted on the host model (a pypto_host::HardwareFault or other error);
    ``span`` is the source span of the op, loop or branch it faulted in, when known."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.message, self.span = message, span


def _fault(lib, sites) -> HostRunError:
    """The fault of the last ``pypto_run`` on this thread, at the site the control program was
    running (``pypto_fault_site``, an index into the manifest's "sites")."""
    message = lib.pypto_last_error().decode(errors="replace")
    site = getattr(lib, "pypto_fault_site", None)  # None: a library emitted before sites existed
    k = site() if site is not None else -1
    if not 0 <= k < len(sites):
        return HostRunError(message)
    from ..ir import Span

    return HostRunError(message, Span(*sites[k]))


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

    if files is None:
        from . import ascendc  # the emitter: not needed to launch a library built before

        files = ascendc.emit_program(program, line_directives=line_directives)
    manifest = json.loads(files["manifest.json"])
    params = {p.name: p for p in program.params}

    buffers, copies_back, dims = [], [], []
    by_name = {}
    tensor_params = [p for p in program.params if p.kind == "tensor"]
    check_outputs([p.name for p in tensor_params], [inputs.get(p.name) for p in tensor_params],
                  [p.is_output for p in tensor_params], f"{program.name}(): ")
    slots = []  # (slot in buffers, is output) of each parameter
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
            slots.append((len(buffers), p.is_output))
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
    for k in aliased_inputs([buffers[slot] for slot, _ in slots], [out for _, out in slots]):
        buffers[slots[k][0]] = buffers[slots[k][0]].clone()  # read as it was at the call

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
        raise _fault(lib, manifest.get("sites", ()))
    rounding_ties.note_host_launch(lib, rounding_ties.rounding_casts(program))
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


def launch_layout(program, files: dict, scalars: Optional[dict] = None) -> dict:
    """What a :class:`HostLaunch` needs of ``program`` and its emitted ``files``, as plain JSON
    data (``@pypto_ast.jit`` keeps it on disk next to the library): the manifest, each
    parameter's kind, dtype, declared dims (None for DYNAMIC) and output flag, and the
    values of the scalar parameters as passed to ``pypto_run`` (``scalars`` first, then the
    parameters' own values)."""
    manifest = json.loads(files["manifest.json"])
    params = {p.name: p for p in program.params}
    scalars = scalars or {}
    values = []
    for name in manifest["scalars"]:
        v = scalars.get(name, params[name].value)
        values.append(int(v) if isinstance(v, (int, bool)) or float(v).is_integer() else 0)
    return {
        "manifest": {k: manifest[k] for k in abi.MANIFEST_KEYS if k in manifest},
        "params": abi.param_layout(program),
        "scalar_values": values,
        # where a launch's rounding ties come from (PTO114): (line, col, end line, end col) per cast
        "rounding_casts": [[sp.line, sp.col, sp.end_line, sp.end_col] for sp in rounding_ties.rounding_casts(program)],
    }


def _check_layout(lib, layout: dict) -> None:
    """``layout`` must be the launch ABI ``lib`` was built for (its ``pypto_layout()``): else the
    pointers, dims and scalars handed to ``pypto_run`` would be another program's."""
    try:
        built = lib.pypto_layout
    except AttributeError:
        raise ValueError("the library has no pypto_layout(): not built by this pypto-ast") from None
    built.restype = ctypes.c_char_p
    if built().decode() != abi.layout_digest(layout["manifest"], layout["params"]):
        raise ValueError("the launch layout is not the one the library was built for")


class HostLaunch:
    """A host library loaded with its launch prepared for one specialisation of a program.

    ``layout`` is :func:`launch_layout`'s; ``names`` are the kernel's parameters in call order:
    :meth:`launch` takes the call's values in that order, already checked against the
    specialisation by the caller (dtype, static dims, device: the caller's key); non-contiguous
    tensors are copied (outputs copied back after the run).  Scratch (locals, workspaces) is
    allocated once and reused; locals are refilled with NaN before each launch as
    :func:`run_host` does; returned values get fresh tensors per launch.  Launches of one
    ``HostLaunch`` are serialised (the pointer table and scratch are shared)."""

    def __init__(self, layout: dict, lib, names: Sequence[str], *, device=None):
        import torch

        manifest = layout["manifest"]
        _check_layout(lib, layout)
        params = {p["name"]: p for p in layout["params"]}
        position = {name: i for i, name in enumerate(names)}
        buffers = manifest["buffers"]
        returned = {r["buffer"] for r in manifest.get("returns") or ()}
        self.ptrs = (ctypes.c_void_p * max(1, len(buffers)))()
        self.args: list = []  # (slot, argument index, is output)
        self.fresh: list = []  # (slot, shape, torch dtype): returned values, new tensors each launch
        self.nan_fill: list = []  # scratch locals refilled with NaN before each launch
        self.scratch: list = []  # kept alive: their pointers sit in self.ptrs
        by_name: dict = {}  # buffer name -> ("arg", index) | ("fresh", k) | ("scratch", tensor)
        dims: list = []
        self.dynamic: list = []  # (position in dims, argument index, axis): read from each call's tensor
        for slot, b in enumerate(buffers):
            name = b["name"]
            want = getattr(torch, _DTYPES[b["dtype"]])
            if b["kind"] == "param":
                if name not in position or name not in params:
                    raise ValueError(f"missing tensor input {name!r}")
                index = position[name]
                self.args.append((slot, index, params[name]["is_output"]))
                by_name[name] = ("arg", index)
                decl = params[name]["dims"]
                if len(decl) > MAX_DIMS:
                    raise ValueError(f"{name}: rank {len(decl)} > {MAX_DIMS}")
                for axis, d in enumerate(decl):
                    if d is None:
                        self.dynamic.append((len(dims) + axis, index, axis))
                shape = [1 if d is None else d for d in decl]
            else:
                shape = b["shape"]
                if any(d is None for d in shape):
                    raise ValueError(f"buffer {name} has a dynamic shape")
                if len(shape) > MAX_DIMS:
                    raise ValueError(f"{name}: rank {len(shape)} > {MAX_DIMS}")
                if name in returned or b["kind"] == "ret":
                    by_name[name] = ("fresh", len(self.fresh))
                    self.fresh.append((slot, tuple(shape), want))
                else:
                    t = torch.empty(shape, dtype=want, device=device)
                    self.scratch.append(t)
                    self.ptrs[slot] = t.data_ptr()
                    by_name[name] = ("scratch", t)
                    if b["kind"] == "local" and t.is_floating_point():
                        self.nan_fill.append(t)  # never written before read: shows up as NaN
            dims += list(shape) + [1] * (MAX_DIMS - len(shape))
        values = layout["scalar_values"]
        self.dims = (ctypes.c_int64 * max(1, len(dims)))(*dims)
        self.scalars = (ctypes.c_int64 * max(1, len(values)))(*values)
        self.returns = [by_name[r["buffer"]] for r in manifest.get("returns") or ()]
        self.sites = manifest.get("sites", ())
        # the parameters in self.args order, for the argument rules (pypto_ast/arguments.py)
        self.arg_names = [buffers[slot]["name"] for slot, _, _ in self.args]
        self.arg_outputs = [is_output for _, _, is_output in self.args]
        self.who = f"{manifest.get('program', 'kernel')}(): "
        self.lib = lib
        lib.pypto_last_error.restype = ctypes.c_char_p
        self._run = self._entry(lib)
        self._lock = threading.Lock()
        self._empty = torch.empty if device is None else functools.partial(torch.empty, device=device)
        self.layout, self.library = layout, None
        self.rounding_casts = [tuple(sp) for sp in layout.get("rounding_casts", ())]  # PTO114's spans

    def _entry(self, lib):
        """``run(ptrs, scalars, dims) -> status``: the library's entry point."""
        run = lib.pypto_run
        run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        run.restype = ctypes.c_int
        return run

    @classmethod
    def build(cls, program, files: dict, names: Sequence[str], scalars: Optional[dict] = None, *,
              cache_dir=None, progress=None, always_compile=None) -> "HostLaunch":
        """Build (or find in the cache) the library of ``files`` and prepare its launch; the
        library's path is ``.library``."""
        sources = {n: t for n, t in files.items() if n.endswith(".cpp")}
        path = build_program(sources, cache_dir=cache_dir, progress=progress, always_compile=always_compile)
        layout = launch_layout(program, files, scalars)
        launch = cls(layout, load_library(path), names)
        launch.layout, launch.library = layout, path
        return launch

    def launch(self, args: Sequence):
        """Run once on ``args`` (the call's values in ``names`` order); returns the returned
        value(s) or None.  Raises HostRunError when the kernel faults."""
        copies = None
        keep = None
        with self._lock:
            ptrs = self.ptrs
            spans = []  # the byte range each argument's pointer covers
            for slot, index, is_output in self.args:
                t = args[index]
                if is_output and t.requires_grad:
                    check_outputs(self.arg_names, [args[i] for _, i, _ in self.args], self.arg_outputs, self.who)
                if not t.is_contiguous():
                    c = t.contiguous()
                    if is_output:
                        copies = copies or []
                        copies.append((t, c))
                    keep = keep or []
                    keep.append(c)
                    t = c
                p = ptrs[slot] = t.data_ptr()
                spans.append((p, p + t.nbytes))
            for k in overlapping(spans, self.arg_outputs):  # read as it was at the call
                c = args[self.args[k][1]].contiguous().clone()
                keep = keep or []
                keep.append(c)
                ptrs[self.args[k][0]] = c.data_ptr()
            for t in self.nan_fill:
                t.fill_(float("nan"))
            fresh = None
            if self.fresh:
                empty = self._empty
                fresh = [empty(shape, dtype=dtype) for _, shape, dtype in self.fresh]
                for (slot, _, _), t in zip(self.fresh, fresh):
                    ptrs[slot] = t.data_ptr()
            if self.dynamic:
                dims = self.dims
                for pos, index, axis in self.dynamic:
                    dims[pos] = args[index].shape[axis]
            rc = self._run(ptrs, self.scalars, self.dims)
            if rc != 0:
                raise _fault(self.lib, self.sites)
            if self.rounding_casts:
                rounding_ties.note_host_launch(self.lib, self.rounding_casts)
        if copies:
            for dst, src in copies:
                dst.copy_(src)
        if not self.returns:
            return None
        values = tuple(args[ref] if kind == "arg" else fresh[ref] if kind == "fresh" else ref.clone()
                       for kind, ref in self.returns)
        return values[0] if len(values) == 1 else values
