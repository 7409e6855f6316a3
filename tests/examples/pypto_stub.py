"""A recording stand-in for the `pypto` package, enough to *import* the example modules.

The example tests must not need the official wheel (it is not a dependency of pypto-ast), yet they
want to call `example_inputs()` / `reference()` and compare them with the kernel's annotations.
Importing an example only evaluates module-level code: constants, `pypto.DT_*`, annotations such
as `pypto.Tensor((M, N), pypto.DT_FP32)` / `pypto.Tensor[[M, N], dt]`, and decorators.  This stub
records annotations as `TensorSpec`s and turns `frontend.jit` into a `JitStub` that keeps the
original function; any other attribute is a permissive `_Anything`.
"""
from __future__ import annotations

import contextlib
import sys
import types
from dataclasses import dataclass
from typing import Any

DTYPES = {
    "DT_FP32": "float32", "DT_FP16": "float16", "DT_BF16": "bfloat16", "DT_INT8": "int8",
    "DT_INT16": "int16", "DT_INT32": "int32", "DT_INT64": "int64", "DT_UINT8": "uint8",
    "DT_BOOL": "bool", "DT_DOUBLE": "float64",
}


class _Anything:
    """Absorbs any use at import time (calls, attributes, items, arithmetic)."""

    def __call__(self, *a: Any, **k: Any) -> _Anything:
        return self

    def __getattr__(self, name: str) -> _Anything:
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __getitem__(self, key: Any) -> _Anything:
        return self

    def __iter__(self):
        return iter(())


@dataclass(frozen=True)
class DType:
    name: str

    @property
    def torch_name(self) -> str | None:
        return DTYPES.get(self.name)


DYNAMIC = "DYNAMIC"


@dataclass
class TensorSpec:
    shape: Any = None
    dtype: Any = None


class Tensor(TensorSpec):
    def __init__(self, shape: Any = None, dtype: Any = None, *args: Any, **kwargs: Any):
        super().__init__(shape=None if shape is None else list(shape), dtype=dtype)

    def __class_getitem__(cls, item: Any) -> Tensor:
        items = item if isinstance(item, tuple) else (item,)
        shape = next((list(i) for i in items if isinstance(i, (list, tuple))), None)
        dtype = next((i for i in items if isinstance(i, DType)), None)
        return cls(shape, dtype)


class JitStub:
    def __init__(self, func: Any, options: dict):
        self.func, self.options = func, options


def _jit(func: Any = None, **options: Any) -> Any:
    if func is None:
        return lambda f: JitStub(f, options)
    return JitStub(func, options)


class FunctionStub:
    def __init__(self, func: Any):
        self.func = func


def _function(func: Any = None) -> Any:
    if func is None:
        return FunctionStub
    return FunctionStub(func)


def _build() -> dict[str, types.ModuleType]:
    pypto = types.ModuleType("pypto")
    frontend = types.ModuleType("pypto.frontend")
    frontend.jit = _jit
    frontend.function = _function
    frontend.dynamic = lambda name: name
    frontend.__getattr__ = lambda name: _Anything()
    pypto.frontend = frontend
    pypto.Tensor = pypto.tensor = Tensor
    pypto.DYNAMIC = pypto.DYN = DYNAMIC
    pypto.STATIC = "STATIC"
    for name in DTYPES:
        setattr(pypto, name, DType(name))
    pypto.__getattr__ = lambda name: _Anything()
    pypto.__path__ = []  # a package, so `from pypto.frontend import jit` resolves
    return {"pypto": pypto, "pypto.frontend": frontend}


@contextlib.contextmanager
def installed():
    """Temporarily make `import pypto` return the stub."""
    saved = {k: v for k, v in sys.modules.items() if k == "pypto" or k.startswith("pypto.")}
    for k in saved:
        del sys.modules[k]
    sys.modules.update(_build())
    try:
        yield
    finally:
        for k in [k for k in sys.modules if k == "pypto" or k.startswith("pypto.")]:
            del sys.modules[k]
        sys.modules.update(saved)
