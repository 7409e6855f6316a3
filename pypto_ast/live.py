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

from .pipeline import PipelineError
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


def call_user(module, name: str, *args, **kwargs):
    """``module.name(*args, **kwargs)`` -- the module's own ``example_inputs()`` / ``reference()``
    -- with what it raises turned into a located PipelineError (PTO103), never a traceback."""
    path = getattr(module, "__file__", None)
    try:
        return getattr(module, name)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the user's code failed, not ours
        where = _line_in(exc, path) if path else None
        raise PipelineError(f"{name}() raised {type(exc).__name__}: {exc}", path, where) from None


def _line_in(exc: BaseException, path: str):
    """(line, col) of the innermost traceback frame in ``path``: where the module's own code failed."""
    import traceback

    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            where = (frame.lineno or 1, getattr(frame, "colno", None) or 0)
    return where


def find_kernel(module, name: Optional[str] = None) -> frontend.Kernel:
    """The module-level ``@pypto.frontend.jit`` object named ``name`` (or the only one).  Kernels
    nested in functions and legacy bodies have no such object: ``pipeline.lower_file`` lowers them."""
    kernels = {k: v for k, v in vars(module).items()
               if isinstance(v, frontend.Kernel) and not isinstance(v, frontend.InlineFunction)}
    path = getattr(module, "__file__", None)
    if name is not None:
        if name not in kernels:
            raise PipelineError(f"no module-level jit kernel named {name!r} "
                                f"(found: {', '.join(sorted(kernels)) or 'none'})", path)
        return kernels[name]
    if len(kernels) != 1:
        found = ", ".join(sorted(kernels)) or "none"
        raise PipelineError(f"expected exactly one module-level jit kernel, found {found}", path)
    return next(iter(kernels.values()))
