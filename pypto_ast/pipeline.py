"""The stages, each a plain function from one value to the next (listed once, here).

    source file --read_source--> ModuleScope --lower_file/lower_kernel--> Program --run--> outputs
    (lint: source --analysis.engine--> diagnostics; emit: Program --printer/pyemit/dot/ascendc--> text)

The source is read by the static front end (``pypto_ast.frontend``) and never executed; only
``pypto_ast.live`` runs a module, where the user asked to (``--run``, calling a kernel).  The
CLIs, the decorator and the tests all call these; ``--emit X`` stops after the stage that
makes X. Heavy imports (torch) happen inside the functions that need them.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Optional



class PipelineError(Exception):
    """A stage could not run; ``path``/``line``/``col`` locate the cause when known."""

    def __init__(self, message: str, path: Optional[str] = None, span=None):
        super().__init__(message)
        self.message, self.path, self.span = message, path, span


class KernelErrors(PipelineError):
    """The kernel cannot be lowered: ``findings`` is a list of (message, ir.Span or None)."""

    def __init__(self, findings: list, path: Optional[str], code: str = "PTO100"):
        super().__init__("; ".join(m for m, _ in findings), path)
        self.findings = findings
        self.code = code


def lower(kernel, inputs: Optional[dict] = None, *, merge_loop1: bool = False, use_globals: bool = True):
    """Lower a kernel object (``@pypto.frontend.jit`` of a module that ran, a plain function)
    from its *source*: the function is found in its file by its first line and read by the static
    front end, with the shapes and dtypes of ``inputs`` (torch tensors, ``TensorArg``s, build-time
    values) and, unless ``use_globals`` is false, the data in its live globals and closure taking
    precedence over the static reading of the module (the in-process decorator's entry point).
    Errors raise ``KernelErrors`` located in the kernel's source."""
    scope, kdef = locate_kernel(kernel, use_globals=use_globals)
    given = given_from_inputs(inputs)
    if use_globals:
        given.closure = live_closure(scope, kdef, getattr(kernel, "func", kernel))
    return lower_kernel(scope, kdef, given, merge_loop1=merge_loop1, use_call_sites=not inputs)


def locate_kernel(kernel, *, use_globals: bool = True):
    """(ModuleScope, KernelDef) of a live kernel object or function: its file read by the static
    front end (with the data of its live globals unless ``use_globals`` is false) and the kernel
    found in it by its first line (or, when the file changed since it was imported, by name)."""
    func = getattr(kernel, "func", kernel)
    try:
        path = inspect.getsourcefile(func)
    except TypeError:
        path = None
    if path is None:
        raise PipelineError(f"cannot find the source of {func!r}")
    world = None
    if use_globals and getattr(func, "__globals__", None) is not None:
        from .frontend.livevalues import LiveWorld

        names = getattr(getattr(func, "__code__", None), "co_freevars", ())
        world = LiveWorld(path, func.__globals__, dict(zip(names, getattr(func, "__closure__", None) or ())))
    scope = read_source(path, world=world)
    return scope, _kernel_at(scope, func)


def live_closure(scope, kdef, func):
    """The frame of the live values a nested kernel closes over (``func.__closure__``: the data
    among them, as the front end's values), in front of the static reading of the functions
    around it; None when the kernel closes over no data."""
    cells = getattr(func, "__closure__", None) or ()
    names = getattr(getattr(func, "__code__", None), "co_freevars", ())
    if not cells or kdef.owner is None:
        return None
    from .frontend.evaluator import Frame
    from .frontend.kernels import HostContext
    from .frontend.livevalues import _SKIP, convert

    env = {}
    for name, cell in zip(names, cells):
        try:
            value = convert(cell.cell_contents)
        except ValueError:  # an empty cell: not bound yet
            continue
        if value is not _SKIP:
            env[name] = value
    if not env:
        return None
    static = HostContext(scope).env_at(kdef)
    frame = Frame(kdef.owner, "host", scope, scope.source, env=env, closure=static)
    frame.live_cells = scope.world is not None  # reads of these names are the kernel's closure reads
    return frame


def read_source(path: str, live: Optional[dict] = None, world=None):
    """The static front end's reading of a file (never executed): its ModuleScope.  ``live``:
    run-time values of its globals that take precedence; ``world``: the running program
    (``frontend.livevalues.LiveWorld``), whose values take precedence in every module read and
    which records the ones a lowering reads."""
    from . import frontend as static
    from .source import SourceError, SourceFile, decode

    try:
        with open(path, "rb") as handle:
            text, _ = decode(handle.read())
        source = SourceFile.parse(text, path)
    except OSError as exc:
        raise PipelineError(f"cannot read {path}: {exc.strerror or exc}", path) from None
    except SourceError as exc:
        raise KernelErrors([(exc.message, (exc.pos.line, exc.pos.col))], path, code="PTO000") from None
    return static.read(source, live=live, world=world)


def list_kernels(scope) -> list:
    """Every kernel of a file read by ``read_source``: KernelDefs (name, kind, line)."""
    from . import frontend as static

    return static.kernels(scope)


def lower_file(path: str, name: Optional[str] = None, *, shapes: Optional[dict] = None, inputs: Optional[dict] = None,
               merge_loop1: bool = False, live: Optional[dict] = None):
    """Lower kernel ``name`` (or the only one) of the file at ``path`` from its source, never running
    it.  ``shapes``: ``{param: (shape tuple, dtype or None) | scalar value}`` (``--shape``);
    ``inputs``: live arguments (``--run``).  Returns the Program."""
    from . import frontend as static

    scope = read_source(path, live=live)
    try:
        kdef = _choose(scope, name)
    except static.FrontendError as exc:
        raise KernelErrors([(exc.message, None)], path, code=exc.code) from None
    given = given_from_inputs(inputs)
    for param, value in (shapes or {}).items():
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], tuple):
            given.tensors[param] = value
        else:
            given.scalars[param] = value
            given.sizes.add(param)
    given.origin = "--shape" if shapes else given.origin
    return lower_kernel(scope, kdef, given, merge_loop1=merge_loop1, use_call_sites=True)


def _choose(scope, name):
    from .frontend.kernels import choose, discover

    return choose(discover(scope), name, scope.source.path)


def lower_kernel(scope, kdef, given, *, merge_loop1: bool = False, use_call_sites: bool = True):
    from . import frontend as static

    world = scope.world
    if world is not None:
        world.recording = True  # the live values this lowering reads: scope.world.reads
    try:
        program, reader = static.lower(scope, kdef=kdef, given=given, use_call_sites=use_call_sites)
    except static.FrontendError as exc:
        raise KernelErrors([(exc.message, _span_of(exc))], exc.path or scope.source.path, code=exc.code) from None
    finally:
        if world is not None:
            world.recording = False
    if merge_loop1:
        from .ir.merge import merge_loop1 as merge

        program = merge(program)
    return program


def _span_of(exc):
    from . import ir

    node = exc.node
    if node is None or not hasattr(node, "lineno") or exc.source is None:
        return None
    col, end_col = exc.source.char_cols(node)
    return ir.Span(node.lineno, col, node.end_lineno or node.lineno, end_col)


def _kernel_at(scope, func):
    """The KernelDef of a live function: the def whose first line (or decorator's) is its line;
    failing that (the file was edited after the module ran), the only kernel of its name."""
    from .frontend.kernels import discover

    line = func.__code__.co_firstlineno
    found = discover(scope)
    at_line = []
    for kdef in found:
        node = kdef.node
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if first == line or node.lineno == line:
            at_line.append(kdef)
    same_name = [k for k in at_line if getattr(k.node, "name", None) == func.__name__]
    if same_name:
        return same_name[0]
    qualname = func.__qualname__.replace("<locals>.", "")
    named = [k for k in found if k.name == qualname] or [k for k in found if getattr(k.node, "name", None) == func.__name__]
    if len(named) == 1:
        return named[0]
    if at_line:  # a legacy body (named by its builder), or a kernel whose def line is its decorator's
        return at_line[0]
    raise PipelineError(f"cannot find the kernel {func.__qualname__} in {scope.source.path} at line {line}",
                        scope.source.path)


_TORCH_DTYPES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int8": "int8", "uint8": "uint8",
    "int16": "int16", "int32": "int32", "int64": "int64", "bool": "bool", "float64": "double",
}


def given_from_inputs(inputs: Optional[dict]):
    """What live arguments tell the front end: shapes and dtypes of tensors, values of scalars."""
    from .frontend.kernels import Given

    given = Given(origin="the call's arguments" if inputs else "")
    for name, value in (inputs or {}).items():
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        if shape is not None and dtype is not None and not isinstance(value, (int, float, bool)):
            dt = dtype if isinstance(dtype, str) else _TORCH_DTYPES.get(str(dtype).replace("torch.", ""), str(dtype))
            given.tensors[name] = (tuple(None if d is None else int(d) for d in shape), dt)
        else:
            given.scalars[name] = value
    return given


BACKENDS = ("interp", "host")


def run(program, inputs: dict, backend: str = "interp", *, soc: Optional[str] = None,
        stats: Optional[dict] = None, progress=None) -> Any:
    """Run ``program`` on ``backend``: ``interp`` (the torch interpreter) or ``host`` (emitted
    Ascend C built with g++ against our CPU kernel_operator.h; outputs are written in place and
    None is returned).  For ``host``, ``stats`` (if given) receives the GM traffic
    (``gm_to_ub_bytes``, ``ub_to_gm_bytes``, ``*_calls``) and ``min_bytes`` (every tensor the
    kernels read, read once, plus every tensor they write, written once).  Constructs the host backend does not
    support, a plan over the ``soc``'s UB budget and device faults raise ``KernelErrors``; tensor
    arguments no backend runs with (``arguments.py``) raise ``ArgumentError`` on both backends.
    ``progress`` (a callable taking one line) hears about compiler runs that a build needs."""
    if backend == "interp":
        from .ir.interp import run_program

        return run_program(program, inputs)
    if backend == "npu":  # prepared and launched once (backends/npu.py); BackendUnavailable says what is missing
        from . import backends

        names = [p.name for p in program.params if p.name in inputs]
        prepared = backends.prepare("npu", program, names, inputs, soc=soc, progress=progress)
        return prepared.launch([inputs[n] for n in names])
    if backend != "host":
        raise PipelineError(f"unknown backend {backend!r} (available: {', '.join(BACKENDS)})")
    from .arguments import ArgumentError
    from .emit.build import BuildError
    from .emit.host_backend import HostRunError, run_host

    files = emit(program, "ascendc", soc=soc)
    try:
        result = run_host(program, inputs, files=files, progress=progress)
    except HostRunError as exc:
        raise KernelErrors([(f"host backend: {exc}", getattr(exc, "span", None))], None, code="PTO111") from None
    except BuildError as exc:
        raise PipelineError(f"building the host library failed: {exc}") from None
    except ArgumentError:  # refused as the interpreter refuses it (pypto_ast/arguments.py)
        raise
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


def build_npu(program, *, soc: Optional[str] = None, out_dir: Optional[str] = None, progress=None,
              environ=None):
    """Emit and compile the NPU library with the CANN toolkit found in ``environ`` (default: this
    process's); with ``out_dir`` the sources, the launchers and ``lib<program>.so`` are written there.
    A compiler error at a kernel line is a located PTO112; a missing toolkit a PipelineError."""
    import shutil
    from pathlib import Path

    from .emit import npu_build
    from .emit.cann import ToolkitError, find_toolkit
    from .emit.soc import DEFAULT_SOC
    from .ir.nodes import Span

    files = emit(program, "ascendc", soc=soc, npu=True)
    try:
        toolkit = find_toolkit(environ)
        lib = npu_build.build_npu_library(files, toolkit, soc=soc or DEFAULT_SOC, progress=progress)
    except ToolkitError as exc:
        raise PipelineError(f"cannot build for the NPU: {exc}") from None
    except npu_build.NpuBuildError as exc:
        source = os.path.basename(dict(program.attrs).get("source", ""))
        mine = [loc for loc in exc.locations if os.path.basename(loc.path) == source]
        if mine:  # a #line maps lines only: the op of that line gives the column
            from .ir import blocks

            spans = {op.span.line: op.span for block in blocks(program) for op in block.ops if op.span is not None}
            raise KernelErrors([(f"bisheng: {loc.message}", spans.get(loc.line, Span(loc.line, 0, loc.line, 0)))
                                for loc in mine], None, code="PTO112") from None
        raise PipelineError(f"building for the NPU failed: {exc}") from None
    if out_dir is None:
        return Path(lib)
    npu_build.write_build_tree(files, out_dir)
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


def call_kernel(kernel, args: tuple, kwargs: dict, backend: str = "interp") -> Any:
    """What calling a kernel does: bind the arguments, lower from source for their shapes, run."""
    func = getattr(kernel, "func", kernel)
    inputs = dict(inspect.signature(func).bind(*args, **kwargs).arguments)
    return run(lower(kernel, inputs), inputs, backend)


def emit(program, what: str, *, spans: bool = True, source_path: Optional[str] = None,
         soc: Optional[str] = None, npu: bool = False, shapes: Optional[dict] = None):
    """Text of a stage: ``ir`` (the printer), ``python`` (explicit PyPTO), ``dot`` (graphviz),
    ``cost`` / ``swimlane`` (the static cost model's cycle report / Chrome trace for the extents
    in ``shapes``, ``--shape``'s dict, design §33);
    ``ascendc`` returns ``{file name: text}`` (kernels, control.cpp, manifest.json) after
    checking every block's UB plan against ``soc`` (default ascend910b)."""
    if what == "ir":
        from .ir.printer import print_program

        return print_program(program, spans=spans)
    if what == "python":
        from .ir.pyemit import EmitError as PyEmitError, emit_python

        try:
            return emit_python(program)
        except PyEmitError as exc:
            raise KernelErrors([(str(exc), getattr(exc, "span", None))], source_path, code="PTO109") from None
    if what == "dot":
        from .ir.dot import program_to_dot

        return program_to_dot(program)
    if what in ("cost", "swimlane"):
        from .ir import costmodel

        dims, scalars = {}, {}  # ``--shape``: a dynamic dim stays symbolic in the IR; its extent is here
        for name, value in (shapes or {}).items():
            if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], tuple):
                dims[name] = value[0]
            else:
                scalars[name] = value
        try:
            est = costmodel.estimate(program, dims, scalars, soc=soc)
        except costmodel.CostError as exc:
            raise PipelineError(f"cost model: {exc.args[0]} (give it with --shape)", source_path) from None
        except KeyError as exc:
            raise PipelineError(f"cost model: {exc.args[0]}", source_path) from None
        return costmodel.report(est) if what == "cost" else costmodel.trace_text(est) + "\n"
    if what == "ascendc":
        import json

        from .emit import soc as socs
        from .emit.ascendc import EmitError, emit_program

        try:
            chip = socs.get_soc(soc)
        except KeyError as exc:
            raise PipelineError(str(exc.args[0]), source_path) from None
        try:
            files = emit_program(program, line_directives=spans, npu=npu)
        except EmitError as exc:
            raise KernelErrors([(exc.message, exc.span)], source_path, code=exc.code) from None
        except Exception as exc:  # the emitter's own bug: could not run
            raise PipelineError(f"the Ascend C emitter failed: {type(exc).__name__}: {exc}", source_path) from None
        findings = socs.check_plan(json.loads(files["manifest.json"]), chip, program)
        if findings:
            raise KernelErrors(findings, source_path, code="PTO110")
        return files
    raise PipelineError(f"unknown emitter {what!r}")
