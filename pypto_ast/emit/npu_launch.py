"""Launch an NPU program library (``npu_build``) on torch_npu's current stream.

:class:`NpuLaunch` is :class:`~pypto_ast.emit.host_backend.HostLaunch` with two differences, so the
argument marshalling (pointer table, dims, scalars, scratch, returned values, copies of
non-contiguous tensors) is the host backend's, tested there on every run: scratch and returned
tensors are allocated on the NPU by torch_npu's allocator (the caller's workspaces), and the entry is
``pypto_npu_run(stream, tensors, scalars, dims)`` with the stream read right before every launch:
reading ``torch.npu.current_stream().npu_stream`` flushes torch_npu's task queue, so the ops that
produced the inputs are submitted before the kernels (ascendc.md §13.1: the "first call randomly
wrong" failure).  Nothing waits for the kernels: the launch is asynchronous like any torch op.
"""

from __future__ import annotations

import ctypes
from typing import Callable, Sequence

from .host_backend import HostLaunch


def current_stream() -> int:
    import torch

    return torch.npu.current_stream().npu_stream


class NpuLaunch(HostLaunch):
    """``stream``: returns the ``aclrtStream`` (an int) to launch on, called before every launch."""

    def __init__(self, layout: dict, lib, names: Sequence[str], *, device="npu",
                 stream: Callable[[], int] = current_stream):
        self._stream = stream
        super().__init__(layout, lib, names, device=device)

    def _entry(self, lib):
        run = lib.pypto_npu_run
        run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        run.restype = ctypes.c_int
        stream = self._stream

        def launch(ptrs, scalars, dims):
            return run(ctypes.c_void_p(stream()), ptrs, scalars, dims)

        return launch
