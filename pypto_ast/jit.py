"""``@pypto_ast.jit``: a kernel compiled at its first call and run in-process.

It accepts what ``pypto.frontend.jit`` accepts (in-place outputs, ``pypto.Tensor(...)`` /
``pypto.Tensor[[...], dt]`` / any-shape annotations, ``int`` build-time scalars, DYNAMIC and
STATIC dims, kernels defined inside functions) and, unlike it, kernels that *return* results.

First call of a specialisation: the kernel's file is linted (errors in the kernel's own lines
raise one :class:`pypto_ast.KernelError`, warnings are ``warnings.warn``-ed), the kernel is
lowered from its *source* with the call's argument shapes and the data in its live globals and
closure (``pipeline.lower``), then, for ``host``, emitted as Ascend C, built with g++ through
the content-addressed disk cache (``emit/build.py``) and loaded.  Later calls with the same
specialisation skip all of that (docs/knobs.md, "JIT cache"):

* a cheap *pre-key* -- the kernel file's (mtime, size, inode), the requested backend, each
  argument's dtype, shape (DYNAMIC dims left out) and device, and scalar values -- maps the call
  to its specialisation, so a warm call does the checks, the pointer packing and ``pypto_run``
  only; an edit of the file (or a rebinding of a global or closure value the kernel names)
  drops the pre-keys and the next call lowers again;
* the *specialisation key* is a sha256 over the printed IR, the argument shapes (DYNAMIC dims
  excluded) and dtypes, the options, the backend, the SoC and the toolchain (compiler version,
  runtime headers and sources, ``build.Objects.digest``) -- never Python's ``hash()``.  Two
  pre-keys that lower to the same program share one compiled library.

Backends: ``host`` (CPU tensors; the emitted Ascend C built with g++), ``interp`` (the torch
reference interpreter), ``npu`` (needs CANN and an NPU: raises :class:`BackendUnavailable`),
``auto`` (by the arguments' device: CPU -> host when a C++ compiler (``knobs.cxx``) is found,
else interp; NPU -> npu).  ``kernel.last_backend`` says which ran, and so does a debug line of
the ``pypto_ast`` logger.  Wrong arguments (count, dtype, shape, device) raise ``TypeError`` /
``ValueError`` naming the parameter before anything runs, so outputs stay untouched.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import re
import sys
import threading
import types
import warnings
from typing import Optional

from . import knobs, livedata
from .errors import KernelWarning
from .lang.frontend import Kernel

logger = logging.getLogger("pypto_ast")

BACKENDS = ("interp", "host", "npu", "auto")
NPU_UNAVAILABLE = "the npu backend needs CANN and an NPU, not available here"
OPTIONS = ("backend", "soc", "lint", "host_options", "runtime_options", "codegen_options", "pass_options",
           "verify_options", "debug_options", "new_ir", "create_new_logical_tensor")
"""Keywords ``jit(...)`` takes: ``pypto.frontend.jit``'s own, plus ``backend``, ``soc`` and ``lint``
(False: the first call does not lint the kernel's file)."""
KEY_VERSION = 1
"""Bump when what goes into the specialisation key changes."""

_SIMPLE = (int, float, bool, str, type(None))
_COMPILING = ("host", "auto")
_MISSING = object()
_stat = os.stat
_torch = None
_tensor_type = None  # torch.Tensor once torch is imported (by the first call's cold path)


class _NoTensor:
    """Stands for torch.Tensor in isinstance checks until torch is imported."""


def _other_key(v) -> tuple:
    """The pre-key part of an argument that is neither a tensor nor a plain scalar."""
    try:
        hash(v)
        return (type(v), v)
    except TypeError:
        return ("repr", type(v).__name__, repr(v))


def _torch_module():
    global _torch, _tensor_type
    if _torch is None:
        import torch

        _torch, _tensor_type = torch, torch.Tensor
    return _torch


class Specialisation:
    """One compiled form of a kernel: the program lowered for some argument shapes, on one
    backend, with what a launch needs prepared (``run(values)``)."""

    __slots__ = ("key", "program", "backend", "run", "faults", "mask", "path", "names", "ir", "layout",
                 "library", "reads")

    def __init__(self, key, program, backend, run, faults, mask, path, names, ir, layout=None, library=None):
        self.key, self.program, self.backend, self.run, self.faults = key, program, backend, run, faults
        self.mask, self.path, self.names, self.ir = mask, path, names, ir
        self.layout, self.library = layout, library  # host: the launch layout and the library's path
        self.reads: tuple = ()  # the live values its lowering read (see _reads)


class JitKernel(Kernel):
    """A ``@pypto_ast.jit`` kernel: ``JitKernel(func, options)``; calling it runs ``func``'s
    kernel on the options' ``backend`` (default ``knobs.backend``, read at each call).

    ``options``: ``backend`` (interp, host, npu, auto), ``soc`` (the SoC whose UB bounds the
    emitted buffers), ``lint`` (default True: lint errors in the kernel's lines fail the first
    call), and ``pypto.frontend.jit``'s ``host_options`` / ``runtime_options`` /
    ``codegen_options`` / ``pass_options`` / ... (taken into the specialisation key; the
    lowering itself does not read them).  Any other key is kept and keyed the same way."""

    kind = "pypto_ast.jit"

    def __init__(self, func, options: Optional[dict] = None):
        super().__init__(func, dict(options or {}))
        self.last_backend: Optional[str] = None
        self.cache_stats = {"lowered": 0, "specialisations": 0, "compiles": 0, "builds": 0, "index_hits": 0}
        """What the cold path did: lowerings, distinct specialisations, compiler runs (a disk
        cache miss), build-cache lookups (a hit when no compile follows), and first calls served
        by the disk index without lowering."""
        self._lock = threading.RLock()
        self._fast: dict = {}  # pre-key -> Specialisation
        self._specs: dict = {}  # specialisation key -> Specialisation
        self._mask = None  # per parameter: tuple of "dynamic" flags per axis, or None
        self._stamp = None
        self._watch: tuple = ()  # the live values the registered specialisations read (see _reads)
        self._linted = None  # the stamp the kernel's lines were linted at
        self._warned: list = []  # the lint warnings shown then (kept in the disk index too)
        code = getattr(func, "__code__", None)
        self._path = code.co_filename if code is not None else None
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError):
            signature = None
        self._signature = signature
        params = list(signature.parameters.values()) if signature is not None else []
        self._names = tuple(p.name for p in params)
        self._simple = bool(params) and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        defaults = []
        for p in reversed(params):
            if p.default is p.empty:
                break
            defaults.append(p.default)
        self._defaults = tuple(reversed(defaults))
        self._required = len(params) - len(self._defaults)
        # a call with exactly this many positional arguments and no keywords skips binding
        self._arity = len(self._names) if self._simple else -1
        backend = self._backend = self.options.get("backend")
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"{self.__qualname__}: backend={backend!r}: expected one of {', '.join(BACKENDS)}")

    def __repr__(self) -> str:
        return f"<pypto_ast.jit kernel {self.func.__qualname__}>"

    # -- the call -----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # The warm path: bind, stamp, pre-key, launch.  Everything else is in _specialise.
        if kwargs or len(args) != self._arity:
            args = self._bind(args, kwargs)
        requested = self._backend or knobs.backend
        try:
            st = _stat(self._path)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except (OSError, TypeError):
            stamp = None
        if stamp != self._stamp or (self._watch and not self._watch_holds()):
            self._reset(stamp)
        spec = self._fast.get(self._prekey(args, requested, stamp))
        if spec is None:
            spec = self._specialise(args, requested, stamp)
        if spec.backend != self.last_backend:  # one line per change, not per call
            self.last_backend = spec.backend
            logger.debug("%s runs on the %s backend", self.func.__qualname__, spec.backend)
        try:
            return spec.run(args)
        except spec.faults as exc:
            raise self._fault(spec, exc) from None

    def program_of(self, *args, **kwargs):
        """The lowered Program a call with these arguments runs (after that call: its
        specialisation's; lowered again when the specialisation came from the disk index, which
        keeps no IR).  The cost model (``RunMode.SIM`` under the drop-in) reads it."""
        values = self._bind(args, kwargs) if kwargs or len(args) != self._arity else args
        spec = self._fast.get(self._prekey(values, self._backend or knobs.backend, self._stamp))
        if spec is not None and spec.program is not None:
            return spec.program
        from . import pipeline

        scope, kdef = pipeline.locate_kernel(self)
        given = pipeline.given_from_inputs(dict(zip(self._names, values)))
        given.closure = pipeline.live_closure(scope, kdef, self.func)
        return pipeline.lower_kernel(scope, kdef, given, use_call_sites=False)

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        """The call's values in parameter order; a wrong count is a TypeError naming the kernel."""
        if not kwargs and self._simple:
            n = len(args)
            if n == len(self._names):
                return args
            if self._required <= n < len(self._names):
                return args + self._defaults[n - self._required:]
        if self._signature is None:
            raise TypeError(f"{self.func.__qualname__}: cannot read the kernel's signature")
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.func.__qualname__}(): {exc}") from None
        bound.apply_defaults()
        return tuple(bound.arguments[name] for name in self._names)

    def _watch_holds(self) -> bool:
        """Whether every live value a specialisation read is still the object it was, holding
        the same data (mutable containers are compared by their text: ``CFG["k"] = v``)."""
        for path, name, holder, value, text, frozen in self._watch:
            now = _current(path, name, holder)
            if now is not value or (not frozen and livedata.data_text(now) != text):
                return False
        return True

    def _reset(self, stamp) -> None:
        with self._lock:
            self._fast = {}
            self._mask = None
            self._stamp = stamp
            self._watch = ()

    def _prekey(self, values: tuple, requested: str, stamp) -> tuple:
        """What a warm call is looked up by: the file's stamp, the requested backend (and the
        compiler knob), each tensor's dtype, shape (DYNAMIC axes as -1) and device, each
        other value itself (its repr when it is unhashable)."""
        tensor = _tensor_type or _NoTensor
        mask = self._mask
        key = [stamp, requested, knobs.cxx if requested in _COMPILING else None]
        append = key.append
        if mask is None:  # no DYNAMIC axis: the common case, kept short
            for v in values:
                if isinstance(v, tensor):
                    append((v.dtype, v.shape, v.is_cpu or v.device.type))
                elif type(v) in _SIMPLE:
                    append((type(v), v))
                else:
                    append(_other_key(v))
            return tuple(key)
        for i, v in enumerate(values):
            if isinstance(v, tensor):
                shape = v.shape
                m = mask[i]
                if m is not None and len(m) == len(shape):
                    shape = tuple(-1 if dyn else d for d, dyn in zip(shape, m))
                append((v.dtype, shape, v.is_cpu or v.device.type))
            elif type(v) in _SIMPLE:
                append((type(v), v))
            else:
                append(_other_key(v))
        return tuple(key)

    # -- the cold path ------------------------------------------------------------------------
    def _specialise(self, values: tuple, requested: str, stamp) -> Specialisation:
        torch = _torch_module()
        with self._lock:
            spec = self._fast.get(self._prekey(values, requested, stamp))
            if spec is not None:
                return spec
            inputs = dict(zip(self._names, values))
            backend = self._resolve_backend(inputs, requested)
            if backend == "npu":  # say what is missing before anything is lowered or built
                from .backends.npu import unavailable

                why = unavailable(inputs)
                if why:
                    from .errors import BackendUnavailable

                    raise BackendUnavailable(f"{NPU_UNAVAILABLE}: {why} (pypto-transpile doctor --backend npu)")
            index = _Index.key(self, inputs, backend) if backend == "host" else None
            if index is not None and not knobs.always_compile:
                spec = index.load(self)
                if spec is not None:
                    return self._register(spec, values, requested, stamp)
            from . import pipeline

            scope, kdef = pipeline.locate_kernel(self)
            if self._linted != stamp and self.options.get("lint", True):
                self._warned = _lint_kernel(scope, kdef)
                self._linted = stamp
            given = pipeline.given_from_inputs(inputs)
            given.closure = pipeline.live_closure(scope, kdef, self.func)
            try:
                program = pipeline.lower_kernel(scope, kdef, given, use_call_sites=False)
            except pipeline.KernelErrors as exc:
                _raise_argument_error(self.func.__qualname__, exc)
                raise _kernel_error(exc, scope) from None
            self.cache_stats["lowered"] += 1
            _check_arguments(self.func.__qualname__, program, inputs, torch)
            mask = _dynamic_mask(program, self._names)
            ir_text = pipeline.emit(program, "ir")
            soc = self.options.get("soc")
            key = self._spec_key(program, ir_text, inputs, mask, backend, soc, torch)
            spec = self._specs.get(key)
            if spec is None:
                spec = self._compile(program, ir_text, inputs, mask, backend, soc, key, scope)
                self._specs[key] = spec
                self.cache_stats["specialisations"] += 1
            spec.reads = _reads(scope.world)
            if index is not None and spec.layout is not None:
                index.store(spec, scope, self._warned)
            return self._register(spec, values, requested, stamp)

    def _register(self, spec: Specialisation, values: tuple, requested: str, stamp) -> Specialisation:
        """Make ``spec`` what calls like this one find on the warm path, and watch what it read."""
        watched = {(r[0], r[1]) for r in self._watch}
        self._watch += tuple(r for r in spec.reads if (r[0], r[1]) not in watched)
        if self._mask is None:
            self._mask = spec.mask
        if self._mask == spec.mask:
            self._fast[self._prekey(values, requested, stamp)] = spec
        return spec

    def _resolve_backend(self, inputs: dict, requested: str) -> str:
        torch = _torch
        devices = {}
        for name, v in inputs.items():
            if isinstance(v, torch.Tensor):
                devices.setdefault(v.device.type, name)
        if requested == "auto":
            if "npu" in devices:
                backend = "npu"
            elif _have_compiler():
                backend = "host"
            else:
                backend = "interp"
        else:
            backend = requested
        if backend == "npu":
            return backend
        if len(devices) > 1:
            (first, a), (second, b) = list(devices.items())[:2]
            raise ValueError(f"{self.func.__qualname__}: argument `{b}` is on {second} but `{a}` is on {first}: "
                             "pass every tensor on one device")
        if backend == "host":
            for device, name in devices.items():
                if device != "cpu":
                    raise ValueError(f"{self.func.__qualname__}: argument `{name}` is a {device} tensor; the host "
                                     "backend runs on CPU tensors (move it with .cpu(), or use backend='npu')")
        return backend

    def _spec_key(self, program, ir_text: str, inputs: dict, mask, backend: str, soc, torch) -> str:
        from . import __version__

        params = []
        for p in program.params:
            v = inputs.get(p.name)
            if p.kind == "tensor":
                m = mask[self._names.index(p.name)] if mask is not None and p.name in self._names else None
                shape = [-1 if m and dyn else int(d) for d, dyn in zip(v.shape, m or [False] * v.dim())]
                params.append([p.name, str(v.dtype), shape])
            else:
                params.append([p.name, "scalar", repr(v)])
        toolchain = None
        if backend == "host":
            from .emit import host_runtime

            toolchain = host_runtime.runtime().digest()
        elif backend == "interp":
            toolchain = f"torch {torch.__version__}"
        elif backend == "npu":  # the toolkit, and the device its scratch lives on
            from .backends.npu import _device_id
            from .emit.cann import find_toolkit

            toolchain = f"CANN {find_toolkit().version} device {_device_id(inputs)}"
        blob = {"version": KEY_VERSION, "pypto_ast": __version__, "ir": ir_text, "params": params,
                "options": {k: v for k, v in self.options.items() if k not in ("backend", "lint")}, "backend": backend,
                "soc": (soc or "").lower() or None, "toolchain": toolchain}
        text = json.dumps(blob, sort_keys=True, separators=(",", ":"), default=repr)
        return hashlib.sha256(text.encode()).hexdigest()

    def _compile(self, program, ir_text, inputs, mask, backend, soc, key, scope) -> Specialisation:
        from . import backends, pipeline
        from .emit.build import BuildError

        path = scope.source.path

        def progress(line: str) -> None:
            if line.startswith(("compiling", "building", "bisheng")):
                self.cache_stats["compiles"] += 1
            elif line.startswith("warning: "):  # a damaged cache entry: rebuilt, and said so
                from .emit.build import DamagedCacheWarning

                warnings.warn(line[len("warning: "):], DamagedCacheWarning, stacklevel=5)
            logger.debug("%s: %s", self.func.__qualname__, line)

        if backend != "interp":
            self.cache_stats["builds"] += 1
        try:
            prepared = backends.prepare(backend, program, self._names, inputs, soc=soc, source_path=path,
                                        progress=progress)
        except pipeline.KernelErrors as exc:
            raise _kernel_error(exc, scope) from None
        except BuildError as exc:
            raise pipeline.PipelineError(f"building the {backend} library failed: {exc}", path) from None
        except ValueError as exc:
            raise pipeline.PipelineError(f"{backend} backend: {exc}", path) from None
        return Specialisation(key, program, backend, prepared.launch, prepared.faults, mask, path, self._names,
                              ir_text, prepared.layout, prepared.library)

    def _fault(self, spec: Specialisation, exc: BaseException):
        """A device fault (host) or a run-time error (interp) as a located KernelError."""
        from .errors import KernelError, finding_diagnostic

        display = _display(spec.path)
        message = getattr(exc, "message", None) or str(exc)
        diag = finding_diagnostic(display, f"{spec.backend} backend: {message}", getattr(exc, "span", None), "PTO111")
        return KernelError([diag], {display: _read(spec.path)})


def jit(func=None, **options):
    """``@pypto_ast.jit`` or ``@pypto_ast.jit(backend=..., soc=..., pass_options=..., ...)``."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError(f"pypto_ast.jit() got unknown option(s) {', '.join(unknown)} "
                        f"(known: {', '.join(OPTIONS)})")
    backend = options.get("backend")
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"pypto_ast.jit(backend={backend!r}): expected one of {', '.join(BACKENDS)}")
    if func is None:
        return lambda f: JitKernel(f, options)
    if not callable(func):
        raise TypeError(f"pypto_ast.jit decorates a function, not {type(func).__name__}")
    return JitKernel(func, options)


jit.JitKernel = JitKernel  # ``pypto_ast.jit.JitKernel`` whether ``pypto_ast.jit`` is this function or the module


class _CallableModule(types.ModuleType):
    """``import pypto_ast.jit`` binds the package attribute ``jit`` to this module, not to the
    decorator: calling the module decorates, so ``@pypto_ast.jit`` works either way."""

    def __call__(self, func=None, **options):
        return jit(func, **options)


sys.modules[__name__].__class__ = _CallableModule


# -- helpers ------------------------------------------------------------------------------------
_have_cxx: dict = {}


def _have_compiler() -> bool:
    from . import knobs

    found = _have_cxx.get(knobs.cxx)
    if found is None:
        import shutil

        found = _have_cxx[knobs.cxx] = shutil.which(knobs.cxx) is not None
    return found


def _display(path: Optional[str]) -> str:
    """A path as pypto-lint names it: relative to the working directory when inside it."""
    if not path:
        return "<unknown>"
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _read(path: Optional[str]) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, TypeError, UnicodeDecodeError):
        return None


def _lines_of(kdef) -> tuple[int, int]:
    node = kdef.node
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, getattr(node, "end_lineno", None) or node.lineno


_lint_cache: dict = {}  # (path, text sha256) -> diagnostics of the file


def _lint_kernel(scope, kdef) -> list:
    """Lint the kernel's file (pyproject's [tool.pypto-lint] applies); the diagnostics inside
    the kernel's lines: errors raise one KernelError, warnings are warned (and returned)."""
    from .diagnostics import Severity
    from .errors import KernelError

    source = scope.source
    display = _display(source.path)
    digest = hashlib.sha256(source.text.encode()).hexdigest()
    diagnostics = _lint_cache.get((display, digest))
    if diagnostics is None:
        from .analysis.engine import lint_text
        from .config import ConfigError, resolve
        from .settings import Settings

        try:
            settings = resolve([display]).settings
        except ConfigError:
            settings = Settings()
        diagnostics = lint_text(source.text, display, settings).diagnostics
        _lint_cache[(display, digest)] = diagnostics
    first, last = _lines_of(kdef)
    mine = [d for d in diagnostics if first <= d.span.start.line <= last]
    errors = [d for d in mine if d.severity is Severity.ERROR]
    if errors:
        raise KernelError(errors, {display: source.text})
    warned = []
    for d in mine:
        message = f"{d.span.path}:{d.span.start.line}:{d.span.start.col + 1}: {d.code} {d.message}"
        warnings.warn(message, KernelWarning, stacklevel=4)
        warned.append(message)
    return warned


def _kernel_error(exc, scope):
    """A pipeline KernelErrors as a KernelError: one diagnostic per finding, rendered like the CLI."""
    from .errors import KernelError, finding_diagnostic

    path = exc.path or scope.source.path
    display = _display(path)
    text = scope.source.text if path == scope.source.path else _read(path)
    return KernelError([finding_diagnostic(display, m, s, exc.code) for m, s in exc.findings], {display: text})


_ARGUMENT_ERRORS = (
    (re.compile(r"^argument `(?P<name>\w+)` must be a tensor"), TypeError),
    (re.compile(r"^tensor `(?P<name>\w+)` is declared (?P<want>\w+) but the argument is (?P<got>\w+)$"), TypeError),
    (re.compile(r"^tensor `(?P<name>\w+)` is declared with rank (at least )?\d+ but the argument has shape"), ValueError),
    (re.compile(r"^tensor `(?P<name>\w+)` is declared \[.*\] but the argument has shape"), ValueError),
    (re.compile(r"^parameter `(?P<name>\w+)` receives a tensor but is not annotated"), TypeError),
)


def _raise_argument_error(qualname: str, exc) -> None:
    """The front end's "argument does not match the annotation" (PTO106) as the TypeError or
    ValueError a wrong call raises."""
    if exc.code != "PTO106" or len(exc.findings) != 1:
        return
    message = exc.findings[0][0]
    for pattern, kind in _ARGUMENT_ERRORS:
        match = pattern.match(message)
        if match:
            named = "" if message.startswith("argument `") else f"argument `{match['name']}`: "
            raise kind(f"{qualname}(): {named}{message}") from None


_DT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int8": "int8", "uint8": "uint8",
       "int16": "int16", "int32": "int32", "int64": "int64", "bool": "bool", "float64": "double"}


def _check_arguments(qualname: str, program, inputs: dict, torch) -> None:
    """Every argument against the lowered program: tensors where it has tensor parameters, of
    its dtype and rank, equal to its static dims; no tensor for a build-time scalar; outputs the
    backends may write (``arguments.check_outputs``, which the backends apply on warm calls)."""
    from .arguments import check_outputs

    for p in program.params:
        v = inputs.get(p.name, _MISSING)
        if p.kind == "tensor":
            want = [d.value if hasattr(d, "value") and isinstance(d.value, int) else None for d in p.type.shape]
            shown = [d if d is not None else "?" for d in want]
            if not isinstance(v, torch.Tensor):
                raise TypeError(f"{qualname}(): argument `{p.name}` must be a torch.Tensor ({p.type.dtype}, shape "
                                f"{shown}), got {type(v).__name__}")
            got = _DT.get(str(v.dtype).replace("torch.", ""), str(v.dtype))
            if got != p.type.dtype:
                raise TypeError(f"{qualname}(): argument `{p.name}` must be a {p.type.dtype} tensor, got {got}")
            if v.dim() != len(want) or any(w is not None and w != s for w, s in zip(want, v.shape)):
                raise ValueError(f"{qualname}(): argument `{p.name}` must have shape {shown}, got {list(v.shape)}")
        elif isinstance(v, torch.Tensor):
            raise TypeError(f"{qualname}(): argument `{p.name}` is a build-time scalar, got a tensor")
    tensors = [p for p in program.params if p.kind == "tensor"]
    check_outputs([p.name for p in tensors], [inputs[p.name] for p in tensors], [p.is_output for p in tensors],
                  f"{qualname}(): ")


def _dynamic_mask(program, names: tuple):
    """Per parameter (in call order): for a tensor, whether each axis is DYNAMIC in the
    program (a ``ShapeOf`` dim, not a constant); None for the others.  None when no axis is."""
    from . import ir

    by_name = {p.name: p for p in program.params}
    mask, any_dynamic = [], False
    for name in names:
        p = by_name.get(name)
        if p is None or p.kind != "tensor":
            mask.append(None)
            continue
        flags = tuple(not isinstance(d, ir.Const) for d in p.type.shape)
        any_dynamic = any_dynamic or any(flags)
        mask.append(flags)
    return tuple(mask) if any_dynamic else None


def _reads(world) -> tuple:
    """What a lowering read of the running program (``frontend.livevalues.LiveWorld``), one
    ``(path, name, holder, value, text, frozen)`` per value: ``path`` the module's file and
    ``holder`` its globals, or ``path`` None and ``holder`` the kernel's closure cell; ``value``
    the object read, ``text`` its data (``livedata.data_text``), ``frozen`` when it cannot
    change in place."""
    if world is None:
        return ()
    reads = []
    for (path, name), value in sorted(world.reads.items()):
        holder = world.modules.namespace(path)
        reads.append((path, name, holder, value, livedata.data_text(value) or "unknown", livedata.is_frozen(value)))
    for name, cell in sorted(world.cell_reads.items()):
        value = _current(None, name, cell)
        reads.append((None, name, cell, value, livedata.data_text(value) or "unknown", livedata.is_frozen(value)))
    return tuple(reads)


def _current(path, name, holder):
    """The value ``name`` has now in ``holder`` (a module's globals, or a cell when ``path`` is None)."""
    if path is None:
        try:
            return holder.cell_contents
        except ValueError:  # an empty cell
            return livedata.MISSING
    return holder.get(name, livedata.MISSING)


_code_stamp: Optional[str] = None


def _code_fingerprint() -> str:
    """Every file of the pypto_ast package (front end, emitter, runtime headers) by name, size
    and mtime: a changed pypto-ast lowers again rather than reuse an old index entry."""
    global _code_stamp
    if _code_stamp is None:
        top = os.path.dirname(os.path.abspath(__file__))
        h = hashlib.sha256()
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(path, top)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        _code_stamp = h.hexdigest()
    return _code_stamp


def _lint_config_stamp(path: str) -> list:
    """The pyproject.toml files at or above the kernel's directory (their [tool.pypto-lint]
    decides which lint errors fail the first call), by size and mtime."""
    found = []
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        try:
            st = os.stat(candidate)
            found.append([candidate, st.st_size, st.st_mtime_ns])
        except OSError:
            pass
        parent = os.path.dirname(folder)
        if parent == folder:
            return found
        folder = parent


class _Index:
    """``<cache>/v<N>/jit/<key>/<variant>.json``: what a first call of a ``host`` kernel found, so
    the same call in another process loads the library without lowering (Triton's disk cache,
    keyed the same way: from the source, not the IR).

    The key covers the kernel's file (its bytes), the kernel's name and line, each argument's
    dtype, shape and device, the scalar values, the options, the compiler and every file of
    pypto-ast itself.  The live values the lowering read (globals of any module, closure values)
    cannot be known before lowering, so each *variant* of a key records them, with their data
    text: a variant serves a call only when every value it read is the same data now, and a
    global the kernel never read plays no part.  A variant also lists the other source files
    the front end read with their sha256, and names the build-cache entry, whose own checks
    (digest, sha256 of the library) run before it is loaded, and whose library must have been
    built for the variant's launch layout (``pypto_layout``).  A variant is sealed with a
    sha256 over all of it, so an edited or mixed-up record is a miss, never another kernel's
    library.  Anything that does not match is a miss: the call lowers, builds and writes its
    variant (atomically, 0600 in the private cache)."""

    VERSION = 2
    MAX_VARIANTS = 8  # per key; the oldest go first

    def __init__(self, folder: str, digest: str, main: str, main_sha: str):
        self.folder, self.digest, self.main, self.main_sha = folder, digest, main, main_sha

    @classmethod
    def key(cls, kernel: "JitKernel", inputs: dict, backend: str) -> Optional["_Index"]:
        from . import __version__
        from .emit import build

        func = kernel.func
        main = os.path.abspath(kernel._path or "")
        try:
            with open(main, "rb") as handle:
                main_sha = hashlib.sha256(handle.read()).hexdigest()
            compiler = build._find_compiler(knobs.cxx)
            cst = os.stat(compiler)
            root = build._cache_root(None)
        except (OSError, build.BuildError):
            return None
        torch = _torch
        args = []
        for name in kernel._names:
            v = inputs.get(name)
            if isinstance(v, torch.Tensor):
                args.append([name, "tensor", str(v.dtype), list(v.shape), v.device.type])
            else:
                args.append([name, type(v).__name__, livedata.data_text(v) or repr(v)])
        blob = {
            "version": cls.VERSION, "key": KEY_VERSION, "pypto_ast": [__version__, _code_fingerprint()],
            "file": [main, main_sha], "kernel": [func.__qualname__, func.__code__.co_firstlineno],
            "args": args, "backend": backend,
            "options": {k: v for k, v in kernel.options.items() if k != "backend"},
            "compiler": [knobs.cxx, compiler, cst.st_size, cst.st_mtime_ns, cst.st_ino],
            "build_format": build.FORMAT_VERSION, "lint_config": _lint_config_stamp(main),
        }
        digest = _sha256_json(blob)
        return cls(os.path.join(str(root), "jit", digest), digest, main, main_sha)

    def _variants(self) -> list:
        """The variant files of this key, newest first."""
        try:
            found = [e for e in os.scandir(self.folder) if e.name.endswith(".json") and e.is_file(follow_symlinks=False)]
        except OSError:
            return []
        dated = []
        for e in found:
            try:
                dated.append((e.stat(follow_symlinks=False).st_mtime_ns, e.path))
            except OSError:
                continue
        return [path for _, path in sorted(dated, reverse=True)]

    def load(self, kernel: "JitKernel") -> Optional[Specialisation]:
        modules = livedata.ModuleIndex(kernel._path, getattr(kernel.func, "__globals__", {}) or {})
        cells = dict(zip(getattr(kernel.func.__code__, "co_freevars", ()), getattr(kernel.func, "__closure__", None) or ()))
        for path in self._variants():
            spec = self._load_variant(kernel, path, modules, cells)
            if spec is not None:
                return spec
        return None

    def _load_variant(self, kernel: "JitKernel", path: str, modules, cells: dict) -> Optional[Specialisation]:
        try:
            with open(path, encoding="utf-8") as handle:
                entry = json.load(handle)
            if not isinstance(entry, dict) or entry.get("key") != self.digest or entry.get("seal") != _seal(entry):
                return None
            reads = []
            for where, name, text in entry["reads"]:
                holder = modules.namespace(where) if where is not None else cells.get(name)
                if holder is None:
                    return None
                value = _current(where, name, holder)
                if livedata.data_text(value) != text:
                    return None  # a value the kernel read is other data now
                reads.append((where, name, holder, value, text, livedata.is_frozen(value)))
            for dep, sha in entry["deps"].items():
                with open(dep, "rb") as handle:
                    if hashlib.sha256(handle.read()).hexdigest() != sha:
                        return None
            from .emit import build
            from .emit.host_backend import HostLaunch, HostRunError

            library = build.cached_library(entry["build"])
            if library is None:
                return None
            spec = kernel._specs.get(entry["spec"])
            if spec is None:
                launch = HostLaunch(entry["layout"], build.load_library(library), kernel._names)
                mask = entry.get("mask")
                mask = tuple(tuple(m) if m is not None else None for m in mask) if mask is not None else None
                spec = Specialisation(entry["spec"], None, "host", launch.launch, (HostRunError,), mask, self.main,
                                      kernel._names, None, entry["layout"], library)
                kernel._specs[entry["spec"]] = spec
                kernel.cache_stats["specialisations"] += 1
            spec.reads = tuple(reads)
            replay = list(entry.get("warnings", ()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        if kernel._linted != kernel._stamp:  # the lint warnings this version of the file had, once
            for message in replay:
                warnings.warn(message, KernelWarning, stacklevel=5)
            kernel._warned, kernel._linted = replay, kernel._stamp
        kernel.cache_stats["index_hits"] += 1
        logger.debug("%s: loaded %s (no lowering: %s)", kernel.func.__qualname__, library, path)
        return spec

    def store(self, spec: Specialisation, scope, warned) -> None:
        """Record ``spec`` (just lowered from ``scope``) as a variant of this key; silently nothing
        when the sources changed while it lowered or the cache cannot be written."""
        deps = {}
        for path, module in scope.registry.items():
            if module is None:
                continue
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                return
            sha = hashlib.sha256(data).hexdigest()
            if os.path.abspath(path) == self.main and sha != self.main_sha:
                return  # edited while it lowered: the key's bytes are not what was lowered
            try:
                from .source import decode

                if decode(data)[0] != module.source.text:
                    return
            except Exception:  # noqa: BLE001 - an undecodable file: no entry
                return
            deps[os.path.abspath(path)] = sha
        reads = [[where, name, text] for where, name, _, _, text, _ in spec.reads]
        entry = {"version": self.VERSION, "key": self.digest, "reads": reads, "spec": spec.key,
                 "build": os.path.basename(os.path.dirname(str(spec.library))), "layout": spec.layout,
                 "mask": spec.mask, "deps": deps, "warnings": list(warned)}
        entry["seal"] = _seal(entry)
        variant = _sha256_json(reads)
        try:
            for folder in (os.path.dirname(self.folder), self.folder):  # jit/ and jit/<key>/, both private
                os.makedirs(folder, mode=0o700, exist_ok=True)
            import tempfile

            fd, tmp = tempfile.mkstemp(prefix=f".{variant[:16]}-", suffix=".tmp", dir=self.folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(entry, handle, sort_keys=True)
                os.replace(tmp, os.path.join(self.folder, f"{variant}.json"))
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            for old in self._variants()[self.MAX_VARIANTS:]:
                os.unlink(old)
        except OSError:
            pass


def _sha256_json(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr).encode()).hexdigest()


def _seal(entry: dict) -> str:
    """The sha256 over every field of an index variant but the seal itself: what binds the record's
    key, reads, build entry, specialisation and layout to one another."""
    return _sha256_json({k: v for k, v in entry.items() if k != "seal"})
