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
    from . import ir

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
        from .ir.merge import merge_loop1 as merge

        program = merge(program)
    return program


def bind_call(kernel: frontend.Kernel, args: tuple, kwargs: dict) -> dict:
    import inspect

    return dict(inspect.signature(kernel.func).bind(*args, **kwargs).arguments)


BACKENDS = ("interp", "host")


def run(program, inputs: dict, backend: str = "interp", *, soc: Optional[str] = None,
        stats: Optional[dict] = None, progress=None) -> Any:
    """Run ``program`` on ``backend``: ``interp`` (the torch interpreter) or ``host`` (emitted
    Ascend C built with g++ against our CPU kernel_operator.h; outputs are written in place and
    None is returned).  For ``host``, ``stats`` (if given) receives the GM traffic
    (``gm_to_ub_bytes``, ``ub_to_gm_bytes``, ``*_calls``) and ``min_bytes`` (every tensor the
    kernels read, read once, plus every tensor they write, written once).  Constructs the host backend does not
    support, a plan over the ``soc``'s UB budget and device faults raise ``KernelErrors``.
    ``progress`` (a callable taking one line) hears about compiler runs that a build needs."""
    if backend == "interp":
        from .ir.interp import run_program

        return run_program(program, inputs)
    if backend != "host":
        raise PipelineError(f"unknown backend {backend!r} (available: {', '.join(BACKENDS)})")
    from .emit.build import BuildError
    from .emit.host_backend import HostRunError, run_host

    files = emit(program, "ascendc", soc=soc)
    try:
        result = run_host(program, inputs, files=files, progress=progress)
    except HostRunError as exc:
        raise KernelErrors([(f"host backend: {exc}", getattr(exc, "span", None))], None) from None
    except BuildError as exc:
        raise PipelineError(f"building the host library failed: {exc}") from None
    except ValueError as exc:
        raise PipelineError(f"host backend: {exc}") from None
    if stats is not None:
        stats.update({k: v for k, v in result.items() if k != "returned"})
    return result["returned"]


def build_host(program, *, soc: Optional[str] = None, out_dir: Optional[str] = None, progress=None):
    """Emit and compile the host library; with ``out_dir`` the sources, manifest and the
    library (``lib<program>.so``) are written there.  Returns the library path."""
    import shutil
    from pathlib import Path

    from .emit.build import BuildError
    from .emit.host_runtime import build_program

    files = emit(program, "ascendc", soc=soc)
    try:
        lib = build_program({n: t for n, t in files.items() if n.endswith(".cpp")}, progress=progress)
    except BuildError as exc:
        raise PipelineError(f"building the host library failed: {exc}") from None
    if out_dir is None:
        return Path(lib)
    write_files(files, out_dir)
    dest = Path(out_dir) / f"lib{program.name}.so"
    shutil.copyfile(lib, dest)
    return dest


def write_files(files: dict, out_dir: str) -> list:
    """Write ``{name: text}`` into ``out_dir`` (created if needed); return the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, text in sorted(files.items()):
        path = os.path.join(out_dir, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        written.append(path)
    return written


def call_kernel(kernel: frontend.Kernel, args: tuple, kwargs: dict, backend: str = "interp") -> Any:
    """What calling a traced kernel does: bind, lower for these arguments, run."""
    inputs = bind_call(kernel, args, kwargs)
    return run(lower(kernel, inputs), inputs, backend)


def emit(program, what: str, *, spans: bool = True, source_path: Optional[str] = None,
         soc: Optional[str] = None):
    """Text of a stage: ``ir`` (the printer), ``python`` (explicit PyPTO), ``dot`` (graphviz);
    ``ascendc`` returns ``{file name: text}`` (kernels, control.cpp, manifest.json) after
    checking every block's UB plan against ``soc`` (default ascend910b)."""
    if what == "ir":
        from .ir.printer import print_program

        return print_program(program, spans=spans)
    if what == "python":
        from .ir.pyemit import emit_python

        return emit_python(program)
    if what == "dot":
        from .ir.dot import program_to_dot

        return program_to_dot(program)
    if what == "ascendc":
        import json

        from .emit import soc as socs
        from .emit.ascendc import EmitError, emit_program

        try:
            chip = socs.get_soc(soc)
        except KeyError as exc:
            raise PipelineError(str(exc.args[0]), source_path) from None
        try:
            files = emit_program(program, line_directives=spans)
        except EmitError as exc:
            raise KernelErrors([(exc.message, exc.span)], source_path) from None
        except Exception as exc:  # the emitter's own bug: could not run
            raise PipelineError(f"the Ascend C emitter failed: {type(exc).__name__}: {exc}", source_path) from None
        findings = socs.check_plan(json.loads(files["manifest.json"]), chip, program)
        if findings:
            raise KernelErrors(findings, source_path)
        return files
    raise PipelineError(f"unknown emitter {what!r}")
