"""The running program's data as ``@pypto_ast.jit`` keys its caches on it.

A kernel lowered in-process reads live values: its module's globals, other modules' globals
(``helpers.SCALE``, the globals of an inlined helper from another module) and its closure.  The
front end records which ones it read (``frontend.livevalues.LiveWorld``); this module gives each
such value a canonical text (``data_text``: the same selection of data the front end converts)
and finds, for a source file, the globals of the module running it (``ModuleIndex``).  Standard
library only: the jit's warm path and its disk index use it without importing the front end.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

MAX_ITEMS = 10_000
MISSING = object()
"""A global the live module does not define (the kernel read the source's value)."""

_FROZEN_SCALARS = (type(None), bool, int, float, str)


def data_text(value, depth: int = 0) -> Optional[str]:
    """A canonical text of a run-time value the front end takes as data (the selection of
    ``frontend.livevalues.convert``), None when it is not data (functions, classes, modules,
    other objects: those are read from source)."""
    if value is MISSING:
        return "missing"
    if value is None or isinstance(value, (bool, str, float)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, int):
        return f"int:{value:x}"  # hex: no limit on the number of digits
    if depth > 8:
        return "unknown"
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            return "unknown"
        items = [data_text(v, depth + 1) or "unknown" for v in value]
        return f"{type(value).__name__}[{','.join(items)}]"
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            return "unknown"
        items = [f"{data_text(k, depth + 1)}={data_text(v, depth + 1) or 'unknown'}" for k, v in value.items()]
        return "dict{" + ",".join(items) + "}"
    kind = type(value)
    module, cls = kind.__module__, kind.__name__
    if cls == "DataType" and hasattr(value, "name"):
        return f"dtype:{getattr(value, 'name', '')}"
    if cls == "_Marker" and module.startswith("pypto_ast.lang"):
        return f"marker:{value.name}"
    if module == "torch" and cls == "dtype":
        return f"torch:{value}"
    if cls in ("Tensor", "Parameter") and module.startswith("torch"):
        try:
            return f"tensor:{tuple(int(d) for d in value.shape)}:{value.dtype}"
        except (TypeError, ValueError, AttributeError):
            return "unknown"
    if cls == "SimpleNamespace" or hasattr(kind, "__dataclass_fields__"):  # a config object: its fields
        names = list(kind.__dataclass_fields__) if hasattr(kind, "__dataclass_fields__") else list(vars(value))
        if len(names) > MAX_ITEMS:
            return "unknown"
        items = [f"{n}={data_text(getattr(value, n, None), depth + 1) or 'unknown'}" for n in names]
        return f"record:{cls}{{" + ",".join(items) + "}"
    return None


def is_frozen(value, depth: int = 0) -> bool:
    """Whether ``value`` cannot change in place (numbers, strings, dtypes, tuples of those):
    then the same object means the same data, and a warm call compares identity only."""
    if isinstance(value, _FROZEN_SCALARS) or value is MISSING:
        return True
    if isinstance(value, tuple) and depth < 8:
        return all(is_frozen(v, depth + 1) for v in value)
    kind = type(value)
    return kind.__name__ in ("DataType", "_Marker") or (kind.__module__ == "torch" and kind.__name__ == "dtype")


class ModuleIndex:
    """The live globals of the module running a source file: the kernel's own module is the one
    given; another file's is the module the kernel's globals reach (a module bound to a name, the
    module of a function bound to a name), else any imported module of that file."""

    def __init__(self, root_path: Optional[str], root_namespace: dict):
        self.root = os.path.abspath(root_path) if root_path else None
        self._namespaces = {self.root: root_namespace} if self.root else {}
        self._indexed = False

    def namespace(self, path: Optional[str]) -> Optional[dict]:
        """The globals of the module at ``path``; None when no running module comes from it."""
        if path is None:
            return None
        path = os.path.abspath(path)
        found = self._namespaces.get(path)
        if found is None and not self._indexed:
            self._index()
            found = self._namespaces.get(path)
        return found

    def _index(self) -> None:
        self._indexed = True
        root = self._namespaces.get(self.root, {})
        candidates = []
        for value in list(root.values()):
            if isinstance(value, type(sys)):
                candidates.append(getattr(value, "__dict__", None))
            else:
                candidates.append(getattr(value, "__globals__", None))
        candidates += [getattr(m, "__dict__", None) for m in list(sys.modules.values())]
        for namespace in candidates:
            if not isinstance(namespace, dict):
                continue
            file = namespace.get("__file__")
            if isinstance(file, str) and file.endswith(".py"):
                self._namespaces.setdefault(os.path.abspath(file), namespace)
