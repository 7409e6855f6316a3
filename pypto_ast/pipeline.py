"""The stages, each a plain function from one value to the next (listed once, here).

    source file --load--> module --find--> kernel --lower--> Program --run--> outputs
    (lint: source --analysis.engine--> diagnostics; emit: Program --printer/pyemit/dot--> text)

The CLIs, ``@jit`` and the tests all call these; ``--emit X`` stops after the stage that
makes X. Heavy imports (torch) happen inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import uuid
from typing import Any, Optional

from .lang import frontend


class PipelineError(Exception):
    """A stage could not run; ``path``/``line``/``col`` locate the cause when known."""

    def __init__(self, message: str, path: Optional[str] = None, span=None):
        super().__init__(message)
        self.message, self.path, self.span = message, path, span


@contextlib.contextmanager
def serving_pypto():
    """While kernel modules import, ``import pypto`` gets pypto_ast.lang (our tracer needs
    its objects; the official pypto is never a run-time dependency)."""
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


class KernelErrors(PipelineError):
    """The kernel cannot be lowered: ``findings`` is a list of (message, ir.Span or None)."""

    def __init__(self, findings: list, path: Optional[str]):
        super().__init__("; ".join(m for m, _ in findings), path)
        self.findings = findings


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
            from .transforms.lower import tracer_span_of_exception

            span = tracer_span_of_exception(exc, path)
            raise PipelineError(f"importing the module failed: {type(exc).__name__}: {exc}", path,
                                (span.line, span.col) if span else None) from None
        finally:
            sys.modules.pop(name, None)
    return module


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
    from .transforms import ir

    call = _legacy_with(module)
    return ir.Span(call.lineno, call.col_offset, call.end_lineno, call.end_col_offset) if call else None


def lower(kernel: frontend.Kernel, inputs: Optional[dict] = None, *, merge_loop1: bool = False):
    """Trace the kernel into a Program; unsupported constructs and lowering errors raise
    ``KernelErrors`` with every finding located in the kernel's source."""
    import inspect

    from .transforms import unsupported
    from .transforms.lower import LoweringError, lower as trace

    path = inspect.getsourcefile(kernel.func)
    findings = unsupported.check(kernel.func)
    if findings:
        raise KernelErrors([(f.message, f.span) for f in findings], path)
    try:
        with serving_pypto():  # a function-level `import pypto` in kernel code sees lang too
            program = trace(kernel.func, dict(inputs or {}))
    except LoweringError as exc:
        raise KernelErrors([(exc.message, exc.span)], exc.path or path) from None
    if merge_loop1:
        from .transforms.merge_ir import merge_loop1 as merge

        program = merge(program)
    return program


def bind_call(kernel: frontend.Kernel, args: tuple, kwargs: dict) -> dict:
    import inspect

    return dict(inspect.signature(kernel.func).bind(*args, **kwargs).arguments)


def run(program, inputs: dict, backend: str = "interp") -> Any:
    if backend != "interp":
        raise PipelineError(f"unknown backend {backend!r} (available: interp)")
    from .torch_interp import run_program

    return run_program(program, inputs)


def call_kernel(kernel: frontend.Kernel, args: tuple, kwargs: dict, backend: str = "interp") -> Any:
    """What calling a traced kernel does: bind, lower for these arguments, run."""
    inputs = bind_call(kernel, args, kwargs)
    return run(lower(kernel, inputs), inputs, backend)


def emit(program, what: str, *, spans: bool = True, source_path: Optional[str] = None) -> str:
    """Text of a stage: ``ir`` (the printer), ``python`` (explicit PyPTO), ``dot`` (graphviz)."""
    if what == "ir":
        from .transforms.printer import print_program

        return print_program(program, spans=spans)
    if what == "python":
        from .transforms.pyemit import emit_python

        return emit_python(program)
    if what == "dot":
        from .transforms.dot import program_to_dot

        return program_to_dot(program)
    raise PipelineError(f"unknown emitter {what!r}")
