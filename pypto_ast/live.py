"""Running a kernel module, only where the user asked to: ``pypto-transpile --run`` (for its
``example_inputs()`` and ``reference()``) and calling a kernel in-process.  Lowering still
reads the kernel's source (``pipeline.lower``); this module only executes Python.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import uuid
from typing import Optional

from .pipeline import KernelErrors, PipelineError  # noqa: F401  (re-raised by callers)
from .lang import frontend


@contextlib.contextmanager
def serving_pypto():
    """While kernel modules import, ``import pypto`` gets pypto_ast.lang (the module runs
    where the official pypto is absent; it is never a run-time dependency)."""
    from . import lang

    names = {"pypto": lang, "pypto.frontend": lang.frontend}
    saved = {n: sys.modules.get(n) for n in names}
    sys.modules.update(names)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def load_module(path: str):
    """Execute a kernel module as ``__pypto_kernel_<id>__`` with pypto served from lang."""
    if not os.path.isfile(path):
        raise PipelineError(f"no such file: {path}", path)
    name = f"__pypto_kernel_{uuid.uuid4().hex[:12]}__"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    with serving_pypto():
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except SyntaxError as exc:
            raise PipelineError(f"syntax error: {exc.msg}", path, (exc.lineno or 1, (exc.offset or 1) - 1)) from None
        except Exception as exc:  # the module's own code failed at import
            raise PipelineError(f"importing the module failed: {type(exc).__name__}: {exc}", path,
                                _line_in(exc, path)) from None
        finally:
            sys.modules.pop(name, None)
    return module


def _line_in(exc: BaseException, path: str):
    """(line, col) of the innermost traceback frame in ``path``: where the module's own code failed."""
    import traceback

    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            where = (frame.lineno or 1, getattr(frame, "colno", None) or 0)
    return where


def find_kernel(module, name: Optional[str] = None) -> frontend.Kernel:
    kernels = {k: v for k, v in vars(module).items()
               if isinstance(v, frontend.Kernel) and not isinstance(v, frontend.InlineFunction)}
    if name is not None:
        if name not in kernels:
            raise PipelineError(f"no jit kernel named {name!r} (found: {', '.join(sorted(kernels)) or 'none'})",
                                getattr(module, "__file__", None))
        return kernels[name]
    if not kernels and _has_legacy_function(module):
        raise KernelErrors([("legacy `with pypto.function(...)` kernels are not lowered; decorate the "
                             "kernel with @pypto.frontend.jit", _legacy_span(module))],
                           getattr(module, "__file__", None))
    if len(kernels) != 1:
        found = ", ".join(sorted(kernels)) or "none"
        raise PipelineError(f"expected exactly one jit kernel, found {found}: choose one with --kernel",
                            getattr(module, "__file__", None))
    return next(iter(kernels.values()))


def _legacy_with(module):
    import ast

    path = getattr(module, "__file__", None)
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "function":
                    return call
    return None


def _has_legacy_function(module) -> bool:
    return _legacy_with(module) is not None


def _legacy_span(module):
    from . import ir

    call = _legacy_with(module)
    return ir.Span(call.lineno, call.col_offset, call.end_lineno, call.end_col_offset) if call else None
