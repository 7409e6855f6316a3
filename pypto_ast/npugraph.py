"""A CPU stand-in for torch_npu's graph capture (``torch.npu.NPUGraph``, ``torch.npu.graph``)
under the drop-in.

On an NPU, work issued while a graph captures is recorded on the stream, and ``replay()`` runs
it again on the same memory: a script fills its static input tensors, replays, and reads its
static outputs.  The stand-in records the pypto kernel calls made during the capture (their
tensor arguments by reference, so a replay sees the inputs' current contents and writes the same
output tensors) and replays them in order.  Where a CPU cannot do what the device does, it says so:

* the captured kernels also run once while capturing (a CPU has no deferred stream); a replay
  recomputes every output from the inputs, so what a script reads after ``replay()`` is what the
  NPU gives;
* torch ops issued during the capture would be recorded and replayed on an NPU; the stand-in runs
  them once only.  It watches them (a ``TorchDispatchMode``): allocations (``empty*``), views and
  metadata queries are safe to run once; any other op makes ``replay()`` raise ``Unsupported``
  naming it, rather than replay a graph that differs from the one captured.
"""

from __future__ import annotations

import contextlib
from typing import Optional

_SAFE_PREFIXES = ("empty", "new_empty")  # allocations: the graph's memory, contents undefined until written
_SAFE = {"detach", "alias", "lift_fresh"}  # no data written


class _State:
    capturing: Optional["NPUGraph"] = None


def capturing() -> Optional["NPUGraph"]:
    """The graph being captured, or None."""
    return _State.capturing


def record(kernel, args: tuple, kwargs: dict) -> None:
    """A pypto kernel call made during the capture: replayed with the same arguments."""
    if _State.capturing is not None:
        _State.capturing._calls.append((kernel, args, dict(kwargs)))


@contextlib.contextmanager
def unwatched():
    """Run a kernel's own work (the interpreter's torch ops) outside the capture's watch."""
    if _State.capturing is None:
        yield
        return
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        yield


def _safe(func, out) -> bool:
    import torch

    name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
    if name.startswith(_SAFE_PREFIXES) or name in _SAFE or getattr(func, "is_view", False):
        return True
    leaves = out if isinstance(out, (tuple, list)) else (out,)
    return not any(isinstance(x, torch.Tensor) for x in leaves)  # a metadata query (sizes, strides, ...)


def _watcher(graph: "NPUGraph"):
    from torch.utils._python_dispatch import TorchDispatchMode

    try:
        from torch._subclasses.fake_tensor import FakeTensor
    except ImportError:  # pragma: no cover - torch without fake tensors
        FakeTensor = ()

    class CaptureWatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            flat = list(args) + list((kwargs or {}).values())
            fake = any(isinstance(x, FakeTensor) for x in flat) or isinstance(out, FakeTensor)
            if not fake and graph._unreplayable is None and not _safe(func, out):
                graph._unreplayable = str(func)
            return out

    return CaptureWatch()


class NPUGraph:
    """``torch.npu.NPUGraph`` of the drop-in: records the pypto kernel calls of a capture."""

    def __init__(self, *args, **kwargs):
        self._calls: list = []
        self._unreplayable: Optional[str] = None
        self._mode = None

    def capture_begin(self, pool=None, capture_error_mode: str = "global"):
        from .dropin import Unsupported, caller_location

        if _State.capturing is not None:
            raise Unsupported("torch_npu.npu.NPUGraph.capture_begin", caller_location(),
                              "another graph is capturing (nested captures)")
        self._calls, self._unreplayable = [], None
        _State.capturing = self
        self._mode = _watcher(self)
        self._mode.__enter__()

    def capture_end(self):
        if _State.capturing is self:
            self._mode.__exit__(None, None, None)
            self._mode = None
            _State.capturing = None

    def replay(self):
        from .dropin import Unsupported, caller_location

        if self._unreplayable is not None:
            raise Unsupported("torch_npu.npu.NPUGraph.replay", caller_location(),
                              f"the capture issued the torch op {self._unreplayable}, which an NPU graph replays; "
                              f"the drop-in's stand-in replays the pypto kernel calls only")
        for kernel, args, kwargs in self._calls:
            kernel(*args, **kwargs)

    def reset(self):
        self._calls, self._unreplayable = [], None

    def pool(self):
        return None

    def enable_debug_mode(self):
        return None

    @property
    def kernel_calls(self) -> int:
        """How many pypto kernel calls a replay runs (the drop-in's own attribute)."""
        return len(self._calls)


class graph:
    """``with torch.npu.graph(g): ...``: capture into ``g``."""

    def __init__(self, npu_graph: NPUGraph, pool=None, stream=None, capture_error_mode: str = "global"):
        self.graph = npu_graph

    def __enter__(self):
        self.graph.capture_begin()
        return self

    def __exit__(self, *exc):
        self.graph.capture_end()
        return False
