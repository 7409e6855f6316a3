"""Run-time values as the front end's values, for the in-process decorator.

When a kernel is called in-process (``@pypto_ast.jit``, a kernel of a module that ran), the
module's globals hold the values its code really computed: constants read from a config file,
shapes from argv, a dtype chosen at import.  Those take precedence over what the static
evaluation of the source found (as Triton's JIT reads ``fn.__globals__``).  Only data is taken:
numbers, strings, containers of them, dtypes, torch tensors' shapes; functions, classes and
modules stay what the source says they are.  Standard library only; torch is recognised by name.

``LiveWorld`` extends that to every module a kernel reads (``helpers.SCALE``, or the globals of an
inlined ``from helpers import scaled``: the running ``helpers`` module's, not its source's) and
records which live values the lowering actually read: ``@pypto_ast.jit`` keys its caches on exactly
that read set (docs/knobs.md), so a change to anything the kernel read lowers again, and a change to
anything else does not.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Optional

from ..livedata import MISSING, ModuleIndex
from . import api
from .values import UNKNOWN, ApiRef, Marker, Record, TorchSpec

_SKIP = object()  # not data: the static value stays
_TORCH_DTYPES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int8": "int8", "uint8": "uint8",
    "int16": "int16", "int32": "int32", "int64": "int64", "bool": "bool", "float64": "double",
}
MAX_ITEMS = 10_000


def from_live(namespace: dict) -> dict:
    """``{name: front-end value}`` for the data in ``namespace`` (a module's or a function's globals)."""
    out = {}
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        converted = convert(value)
        if converted is not _SKIP:
            out[name] = converted
    return out


def convert(value: Any, depth: int = 0) -> Any:
    """One run-time value; ``_SKIP`` when it is not data."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > 8:
        return UNKNOWN
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            return UNKNOWN
        items = [convert(v, depth + 1) for v in value]
        items = [UNKNOWN if v is _SKIP else v for v in items]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            return UNKNOWN
        out = {}
        for k, v in value.items():
            key = convert(k, depth + 1)
            if key is _SKIP or key is UNKNOWN:
                return UNKNOWN
            item = convert(v, depth + 1)
            out[key] = UNKNOWN if item is _SKIP else item
        return out
    kind = type(value)
    module, cls = kind.__module__, kind.__name__
    if cls == "DataType" and hasattr(value, "name"):  # pypto_ast.lang or the official pypto
        name = getattr(value, "name", "")
        name = name if name.startswith("DT_") else f"DT_{name}"
        return api.DTYPES.get(name, UNKNOWN)
    if cls == "_Marker" and module.startswith("pypto_ast.lang"):
        return Marker(value.name)
    if module == "torch" and cls == "dtype":
        short = str(value).replace("torch.", "")
        return ApiRef(f"torch.{short}") if short in _TORCH_DTYPES else UNKNOWN
    if cls in ("Tensor", "Parameter") and module.startswith("torch"):
        try:
            shape = tuple(int(d) for d in value.shape)
            dtype = _TORCH_DTYPES.get(str(value.dtype).replace("torch.", ""))
        except (TypeError, ValueError, AttributeError):
            return UNKNOWN
        return TorchSpec(shape, dtype)
    if kind.__name__ == "SimpleNamespace" or hasattr(kind, "__dataclass_fields__") or config_object(value):
        # a config object (dataclass instance, namespace, an object of a class of the user's code):
        # its data, read by attribute -- the dataclass fields, the instance's own attributes (an
        # ``__init__`` that sets ``self.tile = 128``) and the data attributes of its classes
        if depth > 4 and kind.__name__ != "SimpleNamespace" and not hasattr(kind, "__dataclass_fields__"):
            return UNKNOWN  # an object graph, not a config
        names = list(getattr(kind, "__dataclass_fields__", ()))
        own = getattr(value, "__dict__", None)
        if isinstance(own, dict):
            names += [n for n in own if n not in names]
        if len(names) > MAX_ITEMS:
            return UNKNOWN
        fields = {}
        for klass in reversed(kind.__mro__[:-1]) if kind.__name__ != "SimpleNamespace" else ():
            for name, item in vars(klass).items():
                if name.startswith("__") or callable(item) or hasattr(item, "__get__"):
                    continue  # methods, properties, descriptors: read from the class statement
                item = convert(item, depth + 1)
                if item is not _SKIP:
                    fields[name] = item
        for name in names:
            try:
                item = convert(getattr(value, name, None), depth + 1)
            except Exception:  # noqa: BLE001 - a property of the user's code that raises
                item = UNKNOWN
            fields[name] = UNKNOWN if item is _SKIP else item
        return Record(cls, fields, _origin(kind))
    return _SKIP


_FOREIGN = frozenset({"torch", "torch_npu", "numpy", "pypto", "pypto_ast", "enum", "builtins", "ctypes", "threading",
                      "logging", "io", "socket", "subprocess", "multiprocessing", "concurrent", "asyncio"})


def config_object(value: Any) -> bool:
    """An object of a class of the user's code (every class of its MRO but ``object`` defined outside
    torch, numpy, pypto and the like, no enum member): what a kernel or its factory receives as a
    configuration, read by attribute."""
    kind = type(value)
    if isinstance(value, type) or not isinstance(getattr(value, "__dict__", None), dict):
        return False
    try:
        import enum

        if isinstance(value, enum.Enum):
            return False
    except ImportError:  # pragma: no cover
        pass
    classes = kind.__mro__[:-1]
    return bool(classes) and all(getattr(c, "__module__", "builtins").split(".")[0] not in _FOREIGN
                                 for c in classes)


def _origin(kind) -> Optional[tuple]:
    """(source path, qualname) of a class of the user's code, for its methods and properties."""
    import sys

    qualname = getattr(kind, "__qualname__", "")
    module = sys.modules.get(getattr(kind, "__module__", ""))
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py") or "<" in qualname:
        return None
    return (os.path.abspath(path), qualname)


def argument(value: Any) -> Any:
    """A kernel's live build-time argument as the front end reads it: config objects and pypto
    dtypes converted (``convert``), anything else (numbers, the front end's own values) as given."""
    kind = type(value)
    if isinstance(value, type) or kind.__module__.startswith("pypto_ast.frontend"):
        return value
    if kind.__name__ == "SimpleNamespace" or hasattr(kind, "__dataclass_fields__") or config_object(value) or \
            (kind.__name__ in ("DataType", "_Marker") and hasattr(value, "name")):
        converted = convert(value)
        return value if converted is _SKIP else converted
    return value


class LiveWorld:
    """The running program as the front end sees it while lowering one kernel in-process.

    ``converted(path)`` is the live globals of the module whose source is ``path``
    (``livedata.ModuleIndex``: the kernel's own module, or the running module of another user
    file) as front-end values.  While ``recording``, every live global and closure value the
    evaluation reads is noted once, with the object read: ``reads`` (``(path, name) -> value``)
    and ``cell_reads`` (``name -> cell``).  Reads made while a module body is evaluated
    statically (``paused()``) are not the kernel's and are not noted."""

    def __init__(self, root_path: Optional[str], root_namespace: dict, cells: Optional[dict] = None):
        self.modules = ModuleIndex(root_path, root_namespace)
        self._converted: dict = {}
        self.cells = cells or {}  # closure name -> cell of the kernel function
        self.reads: dict = {}
        self.cell_reads: dict = {}
        self.recording = False
        self._paused = 0

    def converted(self, path: Optional[str]) -> dict:
        """``from_live`` of the live globals of the module at ``path`` (empty: not imported)."""
        path = os.path.abspath(path) if path else None
        if path not in self._converted:
            namespace = self.modules.namespace(path)
            self._converted[path] = from_live(namespace) if namespace is not None else {}
        return self._converted[path]

    def note(self, path: Optional[str], name: str) -> None:
        """A live global ``name`` of the module at ``path`` was read."""
        if not self.recording or self._paused or path is None:
            return
        key = (os.path.abspath(path), name)
        if key not in self.reads:
            namespace = self.modules.namespace(path)
            if namespace is not None:
                self.reads[key] = namespace.get(name, MISSING)

    def note_cell(self, name: str) -> None:
        """The closure value ``name`` of the kernel was read."""
        if self.recording and not self._paused and name in self.cells:
            self.cell_reads.setdefault(name, self.cells[name])

    @contextlib.contextmanager
    def paused(self):
        """While a module body is evaluated statically: its reads are not the kernel's."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1
