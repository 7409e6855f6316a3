"""A drop-in ``import pypto``: scripts and tests written for the official PyPTO run unchanged on
a machine with no NPU, CANN or pypto install, their kernels lowered from source by pypto-ast and
run on the ``interp`` (torch reference interpreter) or ``host`` (emitted Ascend C built with g++)
backend, whatever ``run_mode`` the script asks for.

    import pypto_ast.dropin; pypto_ast.dropin.install(backend="host")   # then `import pypto`
    python -m pypto_ast.dropin [--backend host|interp] SCRIPT [ARGS...]  # run a script under it
    pytest -p pypto_ast.pytest_plugin --pypto-backend host               # a test suite under it

After ``install()``, ``import pypto`` (and ``pypto.frontend``, ``pypto.runtime`` and any other
``pypto.*`` submodule) resolves to the drop-in's namespaces, served by a meta path finder placed
first on ``sys.meta_path`` (an installed official pypto is shadowed, never imported).  They carry:

* the DSL names kernels use at module level: dtypes, ``Tensor`` annotations, ``DYNAMIC``,
  ``RunMode``/``CastMode``..., ``set_vec_tile_shapes``/``set_cube_tile_shapes``;
* ``pypto.frontend.jit`` / ``pypto.jit``: the kernel runs through ``pypto_ast.jit.JitKernel`` on
  the installed backend (``runtime_options`` and the other options are accepted and ignored);
  ``pypto.frontend.function`` helpers are inlined by the front end;
* ``pypto.options(...)`` as decorator (the function itself is returned, so pytest sees its
  signature) and context manager, every official ``set_*_options`` call, as no-ops.

Whatever of the official pypto the drop-in cannot do raises **one** error naming the API and the
caller's file and line, ``pypto_ast.dropin.Unsupported: pypto.xyz is not supported by the
pypto-ast drop-in (called at file.py:12)``: every namespace has a module ``__getattr__`` whose value
for an official name (``pypto_ast.frontend.api.known``: the public names of 0.2.0 and of the
repository) can be read (at import, in annotations) and raises when called.  A name the official
pypto does not have is an ``AttributeError`` (``ImportError`` for ``from pypto import x`` and
``import pypto.x``) as there, so a script's feature detection (``hasattr``, ``try: import``) sees
what it would see with the official package.  A kernel pypto-ast cannot lower or run raises
``KernelError`` with the front end's located diagnostic and the call site.

``torch_npu``: when the real package cannot be imported, a stub is served (``import torch_npu``,
``torch.npu.set_device``, ``current_device``, ``synchronize``, ``get_soc_version``...; other
``torch_npu`` APIs are ``Unsupported``), and NPU devices are the CPU: ``torch``'s factory
functions (``torch.randn(..., device="npu:0")``, ``torch.empty``, ``torch.tensor``...),
``Tensor.to("npu")``, ``Tensor.npu()`` and ``torch.device("npu:0")`` arguments give CPU tensors,
so a script's NPU path (``device = f"npu:{device_id}"``, its checks ``if "npu" in device``) runs
as written; torch custom ops registered for ``NPU`` are CPU kernels and ``torchair``'s graph
backend runs the captured graph (``npu_extensions``).  A device move is a copy, as on an NPU (see
``_patch_torch_devices``); events time on the CPU clock.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import importlib.abc
import importlib.machinery
import os
import sys
import time
import types
from typing import Optional

from . import npu_extensions

BACKENDS = ("interp", "host", "auto")
AUTOLOAD = "TORCH_DEVICE_BACKEND_AUTOLOAD"

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_MODULES = ("runpy", "functools", "contextlib")  # machinery between the caller and the drop-in


class DropinError(Exception):
    """Base of what the drop-in raises on purpose (never a traceback from deep inside)."""


class Unsupported(DropinError):
    """An API of the official pypto (or torch_npu) that the drop-in does not provide."""

    def __init__(self, api: str, where: Optional[str] = None, why: str = ""):
        self.api, self.where, self.why = api, where, why
        message = f"{api} is not supported by the pypto-ast drop-in"
        if where:
            message += f" (called at {where})"
        if why:
            message += f": {why}"
        super().__init__(message)


class DropinWarning(UserWarning):
    """Something the script asked of the official pypto that the drop-in does not do, while the
    kernel still runs (pypto's cost model in ``RunMode.SIM``); also kept in ``notices()``."""


class KernelError(DropinError):
    """A kernel pypto-ast cannot lower or run: the front end's (or backend's) located diagnostic."""

    def __init__(self, kernel: str, message: str, where: Optional[str] = None, code: str = ""):
        self.kernel, self.where, self.code = kernel, where, code
        text = f"kernel {kernel} cannot run on the pypto-ast drop-in: {message}"
        if where:
            text += f" (called at {where})"
        super().__init__(text)


def caller_location(skip_dropin: bool = True) -> Optional[str]:
    """``file:line`` of the innermost frame outside pypto_ast and the import machinery."""
    frame = _caller_frame(skip_dropin)
    return None if frame is None else f"{_display(frame.f_code.co_filename)}:{frame.f_lineno}"


def _caller_frame(skip_dropin: bool = True):
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        module = frame.f_globals.get("__name__", "") or ""
        inside = skip_dropin and os.path.abspath(filename).startswith(_PKG_DIR + os.sep)
        machinery = filename.startswith("<frozen") or module in _SKIP_MODULES or module.startswith("importlib")
        machinery = machinery or module.startswith("torch._dynamo")  # torch.compiler.disable around a kernel call
        if not inside and not machinery:
            return frame
        frame = frame.f_back
    return None


def _display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# =============================================================================================
# unsupported names
# =============================================================================================
class UnsupportedAPI:
    """The value of a name the drop-in does not provide: readable (so ``import``, annotations and
    ``from pypto import xyz`` work), an ``Unsupported`` error with the caller's line when used."""

    __slots__ = ("_api", "_why")

    def __init__(self, api: str, why: str = ""):
        object.__setattr__(self, "_api", api)
        object.__setattr__(self, "_why", why)

    def __call__(self, *args, **kwargs):
        raise Unsupported(self._api, caller_location(), self._why)

    def __getattr__(self, name):
        qualname = f"{self._api}.{name}"
        if (name.startswith("__") and name.endswith("__")) or not _official(qualname):
            raise AttributeError(f"{self._api!r} has no attribute {name!r}")
        return UnsupportedAPI(qualname, self._why)

    def __getitem__(self, item):  # ``pypto.Something[...]`` in an annotation
        return self

    def __mro_entries__(self, bases):
        raise Unsupported(self._api, caller_location(), self._why or "it cannot be subclassed")

    def __enter__(self):
        raise Unsupported(self._api, caller_location(), self._why)

    def __exit__(self, *exc):
        return False

    def __iter__(self):
        raise Unsupported(self._api, caller_location(), self._why)

    def __repr__(self) -> str:
        return f"<unsupported {self._api}>"


def _official(qualname: str) -> bool:
    """Whether the official package may have ``qualname``: a public name of pypto's table
    (``frontend.api.known``), any private name (the table lists public names only, and scripts
    call ``pypto.runtime._device_run_once_data_from_host``), anything of torch_npu (no table).

    An official name the drop-in does not implement is *present* (``hasattr`` is true, ``from
    pypto import x`` works) and raises ``Unsupported`` when used: a script then takes the branch
    it takes with the official package and, if that branch needs the name, stops at one line
    saying so, instead of quietly running a fallback meant for another pypto version.  Names the
    official package lacks are absent, as there."""
    if not (qualname == "pypto" or qualname.startswith("pypto.")):
        return True
    if any(part.startswith("_") for part in qualname.split(".")):
        return True
    from .frontend import api

    return api.known(qualname)


def _fallback(prefix: str, private: bool = True):
    """A module ``__getattr__``: a missing official name (``_official``) is an UnsupportedAPI,
    any other name, and a missing dunder (what the import system and introspection probe for),
    an AttributeError.  Without ``private`` (the torch.npu stub, whose private names torch
    probes with ``hasattr``) ``_names`` are AttributeErrors as well."""

    def __getattr__(name: str):
        qualname = f"{prefix}.{name}"
        if (name.startswith("__") and name.endswith("__")) or (not private and name.startswith("_")) \
                or not _official(qualname):
            reexport = _package_name(prefix, name)
            if reexport is not None:
                return reexport
            raise AttributeError(f"module {prefix!r} has no attribute {name!r}")
        if prefix == "pypto" and name.startswith("set_") and name.endswith("_options"):
            return _noop  # every set_*_options: compiler and runtime settings the backends do not read
        return UnsupportedAPI(qualname)

    return __getattr__


def _package_name(prefix: str, name: str):
    """A public name of the package that an official submodule merely imports (``from
    pypto.operation import op_wrapper``: operation.py imports it from ``pypto._op_wrapper``; the
    name table lists what a module defines, not its imports): the drop-in's ``pypto.<name>``."""
    if not prefix.startswith("pypto.") or name.startswith("_") or "pypto" not in _Finder.modules:
        return None
    package = _Finder.modules["pypto"]
    value = package.__dict__.get(name)
    if value is None or isinstance(value, UnsupportedAPI):
        return None
    return value


def op_wrapper(func):
    """``pypto.op_wrapper`` (``pypto._op_wrapper``): the decorator the repository's op helpers
    wear (a helper over ``pypto_impl``: tensors to their native bases and back).  Kernels read
    such a helper from its source, the decorator transparent; live, it calls the helper."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


def _live_op(name: str):
    def op(*args, **kwargs):
        raise Unsupported(f"pypto.{name}", caller_location(),
                          "pypto ops run only inside @pypto.frontend.jit kernels (read from their source)")

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"pypto.{name}: an op of kernel bodies (lowered from source by pypto-ast)."
    return op


# =============================================================================================
# kernels
# =============================================================================================
_state = types.SimpleNamespace(backend="interp", installed=False, saved={}, torch_npu_stub=False, patched=[],
                               notices=[])


def notices() -> list:
    """The ``Unsupported`` requests noted (not raised) since ``clear_notices()``: pypto features a
    script asked for while its kernels still ran, e.g. pypto's cost model (``RunMode.SIM``)."""
    return list(_state.notices)


def clear_notices() -> None:
    _state.notices.clear()


def _is_sim(options: dict) -> bool:
    mode = (options.get("runtime_options") or {}).get("run_mode")
    return mode is not None and int(mode) == RunMode.SIM


def _sim_output(kernel_name: str, jit, args: tuple, kwargs: dict) -> None:
    """pypto's ``RunMode.SIM`` runs its cost model and writes
    ``output/output_<date>_<time>_<usec>_<pid>/CostModelSimulationOutput/`` in the working
    directory.  The drop-in computes the values (as it does in every mode) and writes that
    directory too, from pypto-ast's own static cost model (``pypto_ast.ir.costmodel``, design
    §33): ``merged_swimlane.json`` (Chrome trace events, one thread per core) and
    ``_simulate.stat.report.txt`` (the cycle report), with pypto-ast's estimate in them.  When the
    program cannot be estimated (a loop bound read from data it cannot see) a ``DropinWarning``
    says so, and the bench counts a test that then fails as unsupported."""
    from .ir import costmodel

    try:
        program = jit.program_of(*args, **kwargs)
        values = dict(zip(jit._names, jit._bind(args, kwargs)))
        shapes, scalars = {}, {}
        for name, v in values.items():
            if hasattr(v, "shape") and hasattr(v, "dtype"):
                shapes[name] = tuple(v.shape)
            elif isinstance(v, (bool, int, float)):
                scalars[name] = v

        def read(tensor: str, index: tuple) -> int:
            return int(values[tensor][index])

        est = costmodel.estimate(program, shapes, scalars, read, soc=jit.options.get("soc"))
    except Exception as exc:  # noqa: BLE001 - the values are computed; only the estimate is missing
        _notice(Unsupported("pypto's cost model (RunMode.SIM: output/*/CostModelSimulationOutput/)",
                            caller_location(), f"pypto-ast's cost model could not estimate kernel {kernel_name}: "
                            f"{type(exc).__name__}: {exc}; its values are computed, no cost-model output is written"))
        return
    folder = write_sim_output(est)
    import logging

    logging.getLogger("pypto_ast.dropin").info("%s: pypto-ast's static cost-model estimate (%d cycles) in %s",
                                               kernel_name, int(est.total_cycles), folder)


def write_sim_output(est, root: str = ".") -> str:
    """Write the estimate where pypto 0.2.0 writes its simulator's output (one directory per call,
    named by the time and the process id, as pypto names it, then the kernel); returns it."""
    import datetime
    import json

    now = datetime.datetime.now()
    name = f"output_{now:%Y%m%d_%H%M%S}_{now.microsecond:06d}_{os.getpid()}_{est.kernel}"
    folder = os.path.join(root, "output", name, "CostModelSimulationOutput")
    os.makedirs(folder, exist_ok=True)
    from .ir import costmodel

    with open(os.path.join(folder, "merged_swimlane.json"), "w", encoding="utf-8") as handle:
        json.dump(costmodel.trace(est), handle)
    with open(os.path.join(folder, "_simulate.stat.report.txt"), "w", encoding="utf-8") as handle:
        handle.write(costmodel.report(est))
    return os.path.dirname(folder)


def _notice(notice) -> None:
    """Note ``notice`` once (``notices()``) and warn it at the caller's line (``DropinWarning``)."""
    if all(str(n) != str(notice) for n in _state.notices):
        _state.notices.append(notice)
        import warnings

        frame = _caller_frame()
        if frame is None:
            warnings.warn(str(notice), DropinWarning, stacklevel=2)
        else:
            warnings.warn_explicit(str(notice), DropinWarning, frame.f_code.co_filename, frame.f_lineno,
                                   module=frame.f_globals.get("__name__"),
                                   registry=frame.f_globals.setdefault("__warningregistry__", {}))


def _kernel_class():
    from .lang.frontend import Kernel

    class DropinKernel(Kernel):
        """``@pypto.frontend.jit`` under the drop-in: lowered from source when called, run on the
        installed backend through ``pypto_ast.jit.JitKernel``."""

        kind = "jit"

        def __init__(self, func, options: dict):
            super().__init__(func, options)
            self._jits = {}

        def _jit(self, backend):
            if backend not in self._jits:
                from .jit import JitKernel

                # pypto runs kernels whatever pypto-lint says of them (a ``print`` in a loop, say),
                # so the drop-in does too
                self._jits[backend] = JitKernel(self.func, {**self.options, "backend": backend, "lint": False})
            return self._jits[backend]

        def __call__(self, *args, **kwargs):
            from .ir.interp import InterpError
            from .pipeline import KernelErrors, PipelineError

            from . import npugraph

            jit = self._jit(_state.backend)
            npugraph.record(self, args, kwargs)  # replayed by torch.npu.NPUGraph.replay()
            try:
                with npugraph.unwatched():
                    jit(*args, **kwargs)
                _locate_ties(self.func)
                if _is_sim(self.options):
                    _sim_output(self.func.__qualname__, jit, args, kwargs)
            except KernelErrors as exc:
                raise KernelError(self.func.__qualname__, _located(exc), caller_location(), exc.code) from None
            except PipelineError as exc:
                raise KernelError(self.func.__qualname__, _located(exc), caller_location(),
                                  getattr(exc, "code", "")) from None
            except InterpError as exc:  # a run-time error of the interpreted program
                raise KernelError(self.func.__qualname__, _located_span(self.func, exc), caller_location(),
                                  "PTO111") from None
            return None

        @property
        def last_backend(self):
            """The backend the last call ran on (``interp`` / ``host``), None before any call."""
            jit = self._jits.get(_state.backend)
            return getattr(jit, "last_backend", None) if jit is not None else None

        def __repr__(self) -> str:
            return f"<pypto kernel {self.func.__qualname__} on pypto-ast {_state.backend}>"

    try:  # a kernel call is opaque to torch.compile (dynamo never traces into the drop-in)
        import torch.compiler

        DropinKernel.__call__ = torch.compiler.disable(DropinKernel.__call__)
    except (ImportError, AttributeError):
        pass
    return DropinKernel


def _locate_ties(func) -> None:
    """The rounding ties (PTO114) this call's casts saw belong to the kernel's source file."""
    import inspect

    from . import rounding_ties

    try:
        path = _display(inspect.getsourcefile(func) or "")
    except TypeError:
        path = ""
    if path:
        rounding_ties.locate(path)


def _located_span(func, exc) -> str:
    import inspect

    try:
        path = _display(inspect.getsourcefile(func) or "")
    except TypeError:
        path = ""
    span = getattr(exc, "span", None)
    message = getattr(exc, "message", None) or str(exc)
    where = f"{path}:{span.line}:{span.col + 1}: " if path and span is not None else (f"{path}: " if path else "")
    return f"{where}PTO111 {message}"


def _located(exc) -> str:
    """``file:line:col: CODE message`` of a pipeline error, each finding located when it can be."""
    path = _display(exc.path) if getattr(exc, "path", None) else None
    code = getattr(exc, "code", "")
    findings = getattr(exc, "findings", None) or [(exc.message, getattr(exc, "span", None))]
    parts = []
    for message, span in findings:
        where = path
        if path and span is not None:
            line, col = (span[0], span[1]) if isinstance(span, tuple) else (span.line, span.col)
            where = f"{path}:{line}:{col + 1}"
        text = f"{code} {message}" if code else message
        parts.append(f"{where}: {text}" if where else text)
    return "; ".join(parts)


def _decorator(make):
    def decorate(func=None, **options):
        if func is None:
            return lambda f: make(f, options)
        if not callable(func):
            raise Unsupported("pypto.frontend.jit with a positional argument", caller_location())
        return make(func, options)

    return decorate


# =============================================================================================
# options
# =============================================================================================
class options:
    """``pypto.options(...)``: as a decorator the function itself is returned (its signature is
    what pytest sees); as a context manager it does nothing. Tile shapes are read from source."""

    def __init__(self, name=None, *args, **kwargs):
        self.name = name

    def __new__(cls, name=None, *args, **kwargs):
        if callable(name) and not args and not kwargs:  # bare ``@pypto.options``
            return name
        return super().__new__(cls)

    def __call__(self, func):
        return func

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class RunMode(enum.IntEnum):
    NPU = 0
    SIM = 1


def _noop(*args, **kwargs):
    return None


def _empty_options(*args, **kwargs):
    return {}


# =============================================================================================
# the served namespaces
# =============================================================================================
def _new_module(name: str, doc: str, package: bool = False, private: bool = True):
    module = types.ModuleType(name, doc)
    module.__file__ = __file__
    module.__loader__ = _Finder
    module.__spec__ = importlib.machinery.ModuleSpec(name, _Finder, is_package=package)
    if package:
        module.__path__ = []
    module.__dict__["__getattr__"] = _fallback(name, private)
    module.__dict__["__pypto_ast_dropin__"] = True
    return module


def _build_modules() -> dict:
    from . import lang
    from .lang import frontend as lang_frontend

    kernel = _kernel_class()
    jit = _decorator(kernel)
    function = _decorator(lang_frontend.InlineFunction)

    pypto = _new_module("pypto", "pypto-ast drop-in for the official pypto (pypto_ast.dropin)", package=True)
    skip = {"frontend", "options", "RunMode", "function", "loop", "loop_unroll", "annotations"}
    for name in dir(lang):
        if name.startswith("_") or name in skip:
            continue
        value = getattr(lang, name)
        if isinstance(value, types.ModuleType):
            continue
        pypto.__dict__[name] = value
    for name in lang._OPS + ["loop", "loop_unroll", "cond", "is_loop_begin", "is_loop_end"]:
        pypto.__dict__[name] = _live_op(name)
    pypto.__version__ = lang.__version__
    pypto.op_wrapper = op_wrapper
    pypto.RunMode = RunMode
    pypto.options = options
    pypto.jit = jit
    pypto.function = UnsupportedAPI("pypto.function", "legacy `with pypto.function(...)` bodies run only "
                                    "through pypto-transpile; use @pypto.frontend.jit")
    for name in ("set_print_options", "set_operation_options", "set_conv_tile_shapes", "set_build_options",
                 "set_runtime_options", "set_pass_options", "set_host_options", "set_codegen_options",
                 "set_verify_options", "set_debug_options", "set_options", "reset_options",
                 "set_semantic_label", "set_matrix_size"):
        pypto.__dict__[name] = _noop
    for name in ("get_pass_options", "get_runtime_options", "get_host_options", "get_codegen_options",
                 "get_verify_options", "get_debug_options", "get_options", "get_operation_options"):
        pypto.__dict__[name] = _empty_options

    frontend = _new_module("pypto.frontend", "pypto.frontend of the pypto-ast drop-in", package=True)
    frontend.jit = jit
    frontend.function = function
    frontend.dynamic = lang_frontend.dynamic
    frontend.DynamicDim = lang_frontend.DynamicDim
    pypto.frontend = frontend

    runtime = _new_module("pypto.runtime", "pypto.runtime of the pypto-ast drop-in")
    runtime.RunMode = RunMode
    # kernels run synchronously on the pypto-ast backends: nothing to set up, wait for or tear down
    runtime._device_init = runtime._device_fini = runtime._device_synchronize = _noop
    pypto.runtime = runtime
    return {"pypto": pypto, "pypto.frontend": frontend, "pypto.runtime": runtime}


# =============================================================================================
# torch_npu and NPU devices
# =============================================================================================
def _real_torch_npu() -> bool:
    """Whether the real torch_npu imports here (tried once, never with the stub in place)."""
    from .backends.npu import torch_npu_works

    return torch_npu_works()


class _Stream:
    def __init__(self, *args, **kwargs):
        pass

    def synchronize(self):
        return None

    def wait_stream(self, *args):
        return None

    def record_event(self, event=None):
        event = event if event is not None else _Event(enable_timing=True)
        event.record(self)
        return event

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Event:
    """``torch.npu.Event``: kernels run synchronously on the CPU, so an event is the CPU clock
    read when it is recorded and ``elapsed_time`` the milliseconds between two records, as for
    ``torch.cuda.Event`` (a script's timing loop reports the time its kernels took)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        self.enable_timing = enable_timing
        self._recorded_ns: Optional[int] = None

    def record(self, stream=None):
        self._recorded_ns = time.perf_counter_ns()

    def query(self):
        return True

    def synchronize(self):
        return None

    def wait(self, stream=None):
        return None

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise RuntimeError("torch.npu.Event.elapsed_time: both events need enable_timing=True")
        if self._recorded_ns is None or getattr(end_event, "_recorded_ns", None) is None:
            raise RuntimeError("torch.npu.Event.elapsed_time: both events must be recorded first")
        return (end_event._recorded_ns - self._recorded_ns) / 1e6


def _build_torch_npu() -> dict:
    package = _new_module("torch_npu", "torch_npu stub of the pypto-ast drop-in (NPU devices are the CPU)",
                          package=True, private=False)
    npu = _new_module("torch_npu.npu", "torch.npu stub of the pypto-ast drop-in", package=True, private=False)
    device = {"id": 0}

    def set_device(dev):
        index = getattr(dev, "index", dev)
        if isinstance(index, str):
            index = index.split(":", 1)[1] if ":" in index else 0
        device["id"] = int(index or 0)

    npu.set_device = set_device
    npu.current_device = lambda: device["id"]
    npu.device_count = lambda: 1
    npu.is_available = lambda: True
    npu.is_initialized = lambda: True
    npu.init = _noop
    npu.synchronize = _noop
    npu.empty_cache = _noop
    # NPU tensors are CPU tensors: their generator is the CPU's (seeded directly: torch.manual_seed
    # itself calls the device module's manual_seed_all)
    npu.manual_seed = _seed
    npu.manual_seed_all = _seed
    npu.seed = _noop
    npu._is_in_bad_fork = lambda: False
    npu.get_rng_state = lambda *a, **k: torch_cpu_rng("get")
    npu.set_rng_state = lambda state, *a, **k: torch_cpu_rng("set", state)
    npu.get_soc_version = lambda: 220
    npu.get_device_name = lambda *a: "pypto-ast drop-in (CPU)"
    npu.get_device_capability = lambda *a: None
    npu.Stream = _Stream
    npu.Event = _Event
    npu.current_stream = lambda *a: _Stream()
    npu.default_stream = lambda *a: _Stream()
    npu.stream = lambda *a: contextlib.nullcontext()
    npu.device = lambda *a: contextlib.nullcontext()
    from . import npugraph

    npu.NPUGraph = npugraph.NPUGraph  # capture records the pypto kernel calls, replay runs them again
    npu.graph = npugraph.graph
    npu.is_current_stream_capturing = lambda: npugraph.capturing() is not None
    npu.config = types.SimpleNamespace(allow_internal_format=False)
    npu.set_stream_limit = npu.set_device_limit = _noop
    npu.memory_allocated = lambda *a: 0
    npu.max_memory_allocated = lambda *a: 0
    npu.reset_peak_memory_stats = _noop
    package.npu = npu
    package.__version__ = "0.0+pypto_ast_dropin"
    package.Format = _NpuFormat
    package.npu_format_cast = _npu_format_cast
    package.get_npu_format = lambda t: getattr(t, "_pypto_ast_npu_format", _NpuFormat.ND)
    modules = {"torch_npu": package, "torch_npu.npu": npu}
    modules.update(npu_extensions.build_torchair(
        lambda name, doc, pkg: _new_module(name, doc, package=pkg, private=False)))
    return modules


class _NpuFormat(enum.IntEnum):
    """torch_npu.Format: the storage layouts of NPU tensors (the values are torch_npu's)."""
    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32


def _npu_format_cast(tensor, fmt):
    """``torch_npu.npu_format_cast``: a copy in another storage layout; the logical values (what
    torch and a pypto kernel read: an NZ annotation describes how the NPU stores them) are the
    same, so on the CPU it is a copy that remembers the format."""
    out = tensor.clone()
    out._pypto_ast_npu_format = _NpuFormat(int(fmt))
    return out


def _seed(seed):
    import torch

    torch.default_generator.manual_seed(int(seed))


def torch_cpu_rng(what: str, state=None):
    import torch

    if what == "get":
        return torch.default_generator.get_state()
    torch.default_generator.set_state(state)
    return None


_FACTORIES = (
    "tensor", "as_tensor", "asarray", "empty", "empty_like", "empty_strided", "zeros", "zeros_like",
    "ones", "ones_like", "full", "full_like", "rand", "rand_like", "randn", "randn_like", "randint",
    "randint_like", "randperm", "arange", "range", "linspace", "logspace", "eye", "tril_indices",
    "triu_indices", "scalar_tensor", "normal", "empty_permuted", "frombuffer",
)
_METHODS = ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor")  # device: a keyword only
_SHARING = ("as_tensor", "asarray")  # may return their argument's memory; onto an NPU they copy
_FRESH = (list, tuple, int, float, bool, complex)  # data as_tensor/asarray always copy


def _is_npu(device) -> bool:
    if isinstance(device, str):
        return device.startswith("npu")
    if isinstance(device, int) and not isinstance(device, bool):
        return True  # a bare index: the current accelerator's device, an NPU under torch_npu
    return getattr(device, "type", None) == "npu"


def _is_cpu(device) -> bool:
    return device.startswith("cpu") if isinstance(device, str) else getattr(device, "type", None) == "cpu"


def _map_device(args, kwargs, positional: bool):
    if "device" in kwargs and _is_npu(kwargs["device"]):
        kwargs["device"] = "cpu"
    if positional and args and _is_npu(args[0]):
        args = ("cpu",) + tuple(args[1:])
    return args, kwargs


_NPU_MARK = "_pypto_ast_on_npu"


def _on_npu(tensor) -> bool:
    """Whether the script put ``tensor`` on the NPU (a CPU tensor the drop-in marked)."""
    return getattr(tensor, _NPU_MARK, False) is True


def _mark(result, onto_npu: bool):
    if onto_npu:
        try:
            setattr(result, _NPU_MARK, True)
        except (AttributeError, TypeError):  # not a tensor (a factory returning a tuple)
            pass
    return result


def _patch_torch_devices(torch) -> None:
    """NPU devices are the CPU: the factories and ``Tensor`` methods that take a device map it.

    A device move is a copy, as between a host and an NPU: ``.npu()``, ``.to(<npu>)``, ``.cpu()``,
    ``.to("cpu")`` and ``torch.as_tensor``/``asarray`` onto an NPU give a tensor with storage of
    its own, so after ``x = x_cpu.npu(); kernel(x)`` (an in-place kernel) ``x_cpu`` holds the
    inputs still: a golden computed from it is right, and a check that a kernel left its input
    alone can fail.  Both sides of a move are CPU tensors (``device.type == "cpu"``, what the
    backends take); the drop-in marks the tensors a script put on the NPU (a move onto it, a
    factory with an NPU device, a ``*_like``/``new_*`` of such a tensor without a device:
    ``_on_npu``), and moving a marked tensor onto the NPU again is no move: ``.npu()`` and
    ``.to("npu")`` return the tensor itself, as torch_npu does, so ``y = zeros(...).npu();
    kernel(y.npu()); y.cpu()`` reads what the kernel wrote.  A tensor computed from NPU tensors
    (``x * 2``, a view) is not marked: its ``.npu()`` copies.  Every ``.cpu()`` copies, of a
    CPU-made tensor too (where torch returns self)."""
    try:
        if torch._C._get_privateuse1_backend_name() == "privateuseone":
            torch.utils.rename_privateuse1_backend("npu")  # torch.device("npu:0") parses
    except Exception:  # noqa: BLE001 - older torch: device strings still map
        pass

    def patch(owner, name, replace):
        original = getattr(owner, name, None)
        if original is None or getattr(original, "__pypto_ast_dropin__", False):
            return
        patched = functools.wraps(original)(replace(original))
        patched.__pypto_ast_dropin__ = True
        setattr(owner, name, patched)
        _state.patched.append((owner, name, original))

    npu_extensions.patch_torch(torch, patch)  # custom ops registered for NPU are CPU kernels here

    def mapped(original):  # a ``device=`` keyword
        def call(*args, **kwargs):
            onto_npu = _is_npu(kwargs.get("device")) or (
                "device" not in kwargs and args and _on_npu(args[0]))  # zeros_like(y), y.new_zeros(n)
            args, kwargs = _map_device(args, kwargs, False)
            return _mark(original(*args, **kwargs), onto_npu)

        return call

    def copied_onto_npu(original):
        def call(*args, **kwargs):
            data = args[0] if args else kwargs.get("data", kwargs.get("obj"))
            onto_npu = _is_npu(kwargs.get("device"))
            args, kwargs = _map_device(args, kwargs, False)
            result = original(*args, **kwargs)
            return _mark(result.clone() if onto_npu and not isinstance(data, _FRESH) else result, onto_npu)

        return call

    def moved(original):  # Tensor.to: a device (npu or cpu) names a move, a dtype alone does not
        def to(self, *args, **kwargs):
            device = kwargs.get("device", args[0] if args else None)
            onto_npu = _is_npu(device)
            move = onto_npu or _is_cpu(device)
            args, kwargs = _map_device(args, kwargs, True)
            result = original(self, *args, **kwargs)
            if onto_npu and _on_npu(self):
                return result  # already there: no move (self, unless a dtype converts)
            if move and result is self:
                result = result.clone()
            return _mark(result, onto_npu or (not move and _on_npu(self)))

        return to

    def copied(original):  # Tensor.cpu
        def cpu(self, *args, **kwargs):
            result = original(self, *args, **kwargs)
            return result.clone() if result is self else result

        return cpu

    for name in _FACTORIES:
        patch(torch, name, copied_onto_npu if name in _SHARING else mapped)
    for name in _METHODS:
        patch(torch.Tensor, name, mapped)
    patch(torch.Tensor, "to", moved)
    patch(torch.Tensor, "cpu", copied)
    if not hasattr(torch.Tensor, "npu"):
        def npu(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
            if _on_npu(self):
                return self  # torch_npu: a tensor on the device already is returned as it is
            return _mark(self.clone(memory_format=memory_format), True)

        torch.Tensor.npu = npu
        _state.patched.append((torch.Tensor, "npu", None))
    if not hasattr(torch.Tensor, "is_npu"):
        torch.Tensor.is_npu = property(lambda self: False)
        _state.patched.append((torch.Tensor, "is_npu", None))


# =============================================================================================
# the finder
# =============================================================================================
class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``pypto``, ``pypto.*`` and (stubbed) ``torch_npu`` from the drop-in's modules."""

    modules: dict = {}

    @classmethod
    def _serves(cls, fullname: str) -> bool:
        """The drop-in's modules, and every other submodule the official pypto has (a module
        of its table, or a private one: see ``_official``); ``import pypto.nonexistent`` fails."""
        if fullname in cls.modules:
            return True
        if fullname.startswith("pypto."):
            from .frontend import surface

            return surface.NAMES.get(fullname, ("",))[0] == "module" or any(
                part.startswith("_") for part in fullname.split("."))
        return _state.torch_npu_stub and _stubbed_name(fullname)

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if not _state.installed or not cls._serves(fullname):
            return None
        return importlib.machinery.ModuleSpec(fullname, cls, is_package=True)

    @classmethod
    def create_module(cls, spec):
        name = spec.name
        module = cls.modules.get(name)
        if module is None:  # an official submodule the drop-in does not model: its names are unsupported
            module = _new_module(name, f"{name}: not modelled by the pypto-ast drop-in", package=True)
            cls.modules[name] = module
        return module

    @classmethod
    def exec_module(cls, module):
        return None

    @classmethod
    def find_module(cls, fullname, path=None):  # pragma: no cover - old import protocol
        return cls if cls.find_spec(fullname) else None


def _stubbed_name(name: str) -> bool:
    """A module the torch_npu stub serves: ``torch_npu`` and its submodules, ``torchair``'s."""
    return name == "torch_npu" or name.startswith("torch_npu.") or npu_extensions.served(name)


def _served_names(name: str) -> bool:
    return name == "pypto" or name.startswith("pypto.") or _stubbed_name(name)


def install(backend: str = "interp", *, npu_devices: bool = True) -> None:
    """From now on ``import pypto`` (and its submodules) is the drop-in, its kernels running on
    ``backend``; a stub ``torch_npu`` (and ``torch.npu``) is served when the real one cannot be
    imported, with NPU devices mapped to the CPU unless ``npu_devices`` is false.  Calling it again
    switches the backend."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (available: {', '.join(BACKENDS)})")
    _state.backend = backend
    if _state.installed:
        return
    if "torch" not in sys.modules:
        # torch >= 2.5 imports every installed device extension at `import torch`; torch_npu installed
        # without CANN then makes `import torch` itself fail (libhccl.so).  The drop-in imports torch_npu
        # explicitly below (the real one when it works) and the scripts it runs do too.
        os.environ.setdefault(AUTOLOAD, "0")
    _state.saved = {n: m for n, m in sys.modules.items() if _served_names(n)}
    for name in list(_state.saved):
        if name.startswith("pypto"):
            del sys.modules[name]
    modules = _build_modules()
    stub = not _real_torch_npu()
    _state.torch_npu_stub = stub
    if stub:
        modules.update(_build_torch_npu())
        for name in [n for n in sys.modules if n == "torch_npu" or n.startswith("torch_npu.")]:
            del sys.modules[name]
    _Finder.modules = dict(modules)
    sys.modules.update(modules)
    sys.meta_path.insert(0, _Finder)
    _state.installed = True
    if stub:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            torch.npu = modules["torch_npu.npu"]
            sys.modules["torch.npu"] = modules["torch_npu.npu"]
            if npu_devices:
                _patch_torch_devices(torch)


def uninstall() -> None:
    """Undo ``install()``: the modules it served leave ``sys.modules`` (what was there returns),
    ``torch.npu`` and the device mapping go.  torch's device name ``npu`` (its PrivateUse1
    backend, renamed so that ``torch.device("npu:0")`` parses) cannot be renamed back."""
    if not _state.installed:
        return
    with contextlib.suppress(ValueError):
        sys.meta_path.remove(_Finder)
    for name in [n for n in sys.modules if _served_names(n)]:
        if getattr(sys.modules[name], "__pypto_ast_dropin__", False):
            del sys.modules[name]
    sys.modules.update(_state.saved)
    if _state.torch_npu_stub and "torch" in sys.modules:
        torch = sys.modules["torch"]
        if getattr(getattr(torch, "npu", None), "__pypto_ast_dropin__", False):
            del torch.npu
        sys.modules.pop("torch.npu", None)
        for owner, name, original in reversed(_state.patched):
            if original is None:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
            else:
                setattr(owner, name, original)
        _state.patched.clear()
    _Finder.modules = {}
    _state.installed = False
    _state.torch_npu_stub = False


def backend() -> str:
    return _state.backend


def installed() -> bool:
    return _state.installed


# =============================================================================================
# python -m pypto_ast.dropin
# =============================================================================================
def run_script(path: str, argv: list, backend: str = "interp") -> None:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *argv]`` under ``install(backend)``."""
    import runpy

    install(backend)
    sys.argv = [path] + list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


def main(argv: Optional[list] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m pypto_ast.dropin",
        description="Run a script written for the official pypto with pypto-ast serving `import pypto`.")
    parser.add_argument("--backend", choices=("interp", "host"), default=os.environ.get("PYPTO_AST_BACKEND", "interp"),
                        help="where kernels run (default: interp, or $PYPTO_AST_BACKEND)")
    parser.add_argument("script", help="the Python script to run as __main__")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    options_ = parser.parse_args(argv)
    if not os.path.isfile(options_.script):
        parser.error(f"no such file: {options_.script}")
    try:
        run_script(options_.script, options_.args, options_.backend)
    except AssertionError as exc:  # the script's own check: its traceback, and PTO113 when it applies
        from .rounding_steps import explain, render

        diag = explain(exc)
        if diag is not None:
            print(render(diag), file=sys.stderr)
        from . import rounding_ties

        ties = rounding_ties.render(rounding_ties.take())
        if ties:
            print(ties, file=sys.stderr)
        raise
    except DropinError as exc:
        print(f"{type(exc).__module__}.{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # the canonical module, not this __main__ copy, holds the state and the error classes
    from pypto_ast.dropin import main as _main

    sys.exit(_main())
