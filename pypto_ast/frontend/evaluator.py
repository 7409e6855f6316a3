"""The static evaluation: kernel code read as pypto runs it at build time, without running it.

One evaluator walks a kernel's AST in program order over the front end's values
(``values.py``): build-time Python values are computed exactly (Python itself, guarded),
tensors carry shapes and dtypes through the op table (``ops.py``), loop indices and values read
from tensors are symbolic.  Plain helpers are inlined in the caller's context; Python ``for``
over build-time sequences unrolls; ``if`` on a build-time value takes one arm.  Two things are
explicit where pypto's tracing multiplies them: a ``pypto.loop`` body is evaluated once per
unrolled copy, and an ``if`` on a symbolic value once per arm, into one branch (values that leave
the arms are merged through a workspace, docs/design.md §5).

While it evaluates, it records the *facts* the lint rules read (``facts.py``) and, when it
builds a program (``building``), the IR (``builder.py``).  Problems are located: in a lint run
they make the value unknown; in a build they stop it with a coded ``FrontendError``.
"""

from __future__ import annotations

import ast
import contextlib
from typing import Any, Optional

from .. import ir
from ..diagnostics import format_count
from . import api, callcheck, ops, pyvalues, torchhost
from .builder import Builder, _traces
from .errors import FrontendError
from .facts import (
    AccessFact, BranchFact, Kernel, LoopFact, MoveFact, OpFact, PrintFact, RebindFact, TileSetFact, UseFact, ViewFact,
)
from .symbolic import binexpr, unexpr
from .values import (
    UNKNOWN, ApiRef, BoundMethod, BranchVal, ClassVal, Descriptor, DType, FieldSpec, FuncRef, Instance, LazyImport,
    LoopIter, Marker, Method, OptionsVal, Record, Sym, Tensor, TensorAnnotation, TorchSpec, UserModule, int_value,
    is_static,
)

MAX_INLINE_DEPTH = 16
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
MAX_STATIC_ITERATIONS = 100_000  # Python for loops unrolled in one evaluation, in all
LINT_UNROLL = 256  # a lint run unrolls Python for loops this long; longer ones are read once
# Statements one evaluation executes, counted over inlined helpers, unrolled Python loops, while
# loops and comprehension items: helpers calling helpers twice at each of MAX_INLINE_DEPTH levels,
# or Python fors nested 20 deep, would otherwise take exponential time.  A lint run past
# LINT_STEPS stops inlining and unrolling (what is left is read once: linear in the file);
# building past MAX_STEPS is PTO105.
LINT_STEPS = 10_000  # real kernels: at most ~750 (1,159 files of hicann/pypto, examples, tests)
MAX_STEPS = 1_000_000
MAX_WHILE = 10_000
_BIN = {"Add": "+", "Sub": "-", "Mult": "*", "FloorDiv": "//", "Mod": "%", "Div": "/"}
_CMP = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">="}


_ABSENT = object()  # a name not bound before a comprehension

class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Conflict:
    """A name two arms of a symbolic ``if`` bound to different build-time values."""

    __slots__ = ("name", "node")

    def __init__(self, name, node):
        self.name, self.node = name, node


class RangeVal:
    """``range(...)`` whose bounds may be symbolic (lint only: it cannot be iterated)."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


class StaticMethod:
    """A method of a build-time value before it is called (``shape.index``, ``names.append``)."""

    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class SuperVal:
    """``super()`` in a method of ``owner`` called on ``receiver``: attributes from the classes after ``owner``."""

    __slots__ = ("owner", "receiver")

    def __init__(self, owner, receiver):
        self.owner, self.receiver = owner, receiver


_NO_ATTR = object()


class LoopContext:
    """A pypto loop's original bounds, for is_loop_begin / is_loop_end of its index."""

    __slots__ = ("var", "start", "stop", "step")

    def __init__(self, var, start, stop, step):
        self.var, self.start, self.stop, self.step = var, start, stop, step


class Frame:
    def __init__(self, func, context: str, scope, source, env: Optional[dict] = None, closure=None):
        self.func = func
        self.context = context  # "module" | "host" | "jit" | "function" | "helper" | "legacy"
        self.scope = scope  # the ModuleScope whose globals this code reads
        self.source = source
        self.env: dict = env if env is not None else {}
        self.closure = closure  # the enclosing function frame's env (late binding, as Python)
        self.bindings: dict = {}  # kernel frame only: name -> "param" | RebindFact | "local"
        self.returns: list = []
        self.allows_return = False  # only @pypto_ast.jit kernels may return (pypto's parser refuses `return`)
        self.live_cells = False  # the live closure of an in-process kernel (pipeline.live_closure)
        self.owner = None  # a class body's ClassVal, or the class of the method this frame runs


class Evaluator:
    """Evaluates kernel code (and the host code around it) statically; see the module doc."""

    def __init__(self, scope, *, building: bool = False, builder: Optional[Builder] = None,
                 host_tile_set: bool = False, on_kernel_call=None):
        self.scope = scope
        self.building = building
        self.builder = builder
        self.on_kernel_call = on_kernel_call  # host evaluation: called with (FuncRef, args, kwargs, node)
        self.frames: list[Frame] = []
        self.kernel: Optional[Kernel] = None
        self.loop: Optional[LoopFact] = None
        initial = UNKNOWN if host_tile_set else None
        self.vec_tile: Any = initial
        self.vec_set: Optional[TileSetFact] = None
        self.cube_tile: Any = initial
        self.cube_set: Optional[TileSetFact] = None
        self.order = 0
        self.multiplier = 1
        self.paths = 1
        self.live_reads: list = []  # (Sym read from a tensor, node) bound in enclosing bodies
        self.read_uses: dict = {}  # tensor-read node id -> set of use kinds
        self.call_stack: list = []
        self.call_nodes: list = []  # the Call nodes of call_stack, for AccessFact.sites
        self.unknown_out: Optional[list] = None  # collects unknown pypto names (a kernel's annotations)
        self.recording = True  # record facts (off for unrolled copies after the first)
        self.loop_counter = 0
        self.loop_vars: list = []  # idx names of the pypto loops being evaluated (innermost last)
        self.node: Optional[ast.AST] = None  # the expression being evaluated (spans of IR ops)
        self.iterations = 0
        self.steps = 0  # statements executed (see LINT_STEPS)
        self.warnings: list = []  # (message, node, source)
        self.returned: Optional[tuple] = None
        self.sliced: set = set()  # idents of tensors made by plain slicing (``x[a:b, :]``): MoveFact kinds
        self.moved: set = set()  # idents of tensors a MoveFact wrote or moved: their reads are UseFacts
        self.tensor_last: dict = {}  # id(BoolOp) -> its last operand, a tensor (PTO022 when an `if` tests it)

    # =========================================================================================
    # problems
    # =========================================================================================
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    @property
    def source(self):
        return self.frames[-1].source if self.frames else self.scope.source

    def problem(self, code: str, message: str, node: Optional[ast.AST] = None) -> Any:
        """A located problem: fatal when building, an unknown value in a lint run."""
        if self.building:
            raise FrontendError(code, message, node if node is not None else self.node, self.source)
        return UNKNOWN

    def in_kernel(self) -> bool:
        return self.kernel is not None and any(f.context in ("jit", "function", "legacy", "helper") for f in self.frames)

    # =========================================================================================
    # names
    # =========================================================================================
    def lookup(self, name: str, node=None) -> Any:
        frame = self.frame
        if name in frame.env:
            value = frame.env[name]
            if frame.context == "module" and frame.env is frame.scope.env:
                frame.scope.note_live(name)  # a global read through the module's own frame
        else:
            closure = frame.closure
            while closure is not None and name not in closure.env:
                closure = closure.closure
            if closure is not None:
                value = closure.env[name]
                if closure.live_cells:
                    closure.scope.world.note_cell(name)
            else:
                value = frame.scope.lookup(name)
                if value is UNKNOWN and self.building and self.in_kernel() and not frame.scope.binds(name):
                    return self.problem("PTO101", f"name `{name}` is not defined (pypto would raise NameError "
                                                  "when it builds the kernel)", node)
        if isinstance(value, LazyImport):
            value = value.resolve()
        if isinstance(value, Conflict) and self.building:
            return self.problem("PTO108", f"`{name}` has different build-time values in the two arms of the symbolic "
                                          f"`if` at line {value.node.lineno}; pypto would compile a separate path for "
                                          "each, pypto-ast needs one value (compute it from tensors, or move the use "
                                          "into the arms)", node)
        return value

    def next_order(self) -> int:
        self.order += 1
        return self.order

    def pypto_loops(self) -> tuple:
        loops = []
        loop = self.loop
        while loop is not None:
            if loop.explicit:
                loops.append(loop)
            loop = loop.parent
        return tuple(reversed(loops))

    def in_pypto_loop(self) -> bool:
        return bool(self.pypto_loops())

    def kernel_frame(self) -> bool:
        return self.kernel is not None and self.frame.context in ("jit", "function", "legacy") and \
            len([f for f in self.frames if f.context in ("jit", "function", "legacy", "helper")]) == 1

    def on_name_load(self, name, node):
        if not self.kernel_frame() or not self.recording:
            return
        binding = self.frame.bindings.get(name)
        if binding == "param":
            self.kernel.param_reads.append((name, self.next_order(), self.pypto_loops()))
        elif isinstance(binding, RebindFact):
            binding.read_after = True

    def bind_name(self, name, value, node, stmt=None, aug=False, simple=False):
        frame = self.frame
        if self.kernel_frame() and self.recording:
            binding = frame.bindings.get(name)
            if stmt is not None and (binding == "param" or isinstance(binding, RebindFact) and binding.param == name):
                fact = RebindFact(stmt, node, name, aug, simple, value, self.next_order(), self.pypto_loops())
                self.kernel.rebinds.append(fact)
                frame.bindings[name] = fact
            else:
                frame.bindings[name] = "local"
        frame.env[name] = value
        if isinstance(value, Sym) and "tensor_read" in value.kinds:
            self.live_reads.append((value, node))

    # =========================================================================================
    # expressions
    # =========================================================================================
    def eval(self, node: Optional[ast.AST]) -> Any:
        if node is None:
            return None
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child)
            return UNKNOWN
        saved, self.node = self.node, node
        try:
            return method(node)
        finally:
            self.node = saved

    def eval_Constant(self, node):
        value = node.value
        if type(value) is int and value.bit_length() > pyvalues.MAX_INT_BITS:
            return UNKNOWN  # a hex literal of 10k digits is no shape or count (and slow to compute with)
        return value

    def eval_Name(self, node):
        self.on_name_load(node.id, node)
        return self.lookup(node.id, node)

    def eval_Attribute(self, node):
        return self.attribute(self.eval(node.value), node.attr, node)

    def attribute(self, base, attr: str, node):
        if isinstance(base, ApiRef):
            return self.api_attribute(base, attr, node)
        if isinstance(base, UserModule):
            scope = base.scope
            return scope.lookup(attr) if scope is not None else UNKNOWN
        if isinstance(base, Tensor):
            if attr == "shape":
                return UNKNOWN if base.shape is None else list(self.dim_value(d) for d in base.shape)
            if attr == "dtype":
                return base.dtype if base.dtype is not None else UNKNOWN
            if attr == "dim":
                return base.rank if base.rank is not None else UNKNOWN
            if attr == "name":
                return base.name or UNKNOWN
            return Method(base, attr, node)
        if isinstance(base, Sym) and attr in ("min", "max"):
            return Method(base, attr, node)
        if isinstance(base, int) and not isinstance(base, bool) and attr in ("min", "max"):
            return Method(_symbolic_scalar(base), attr, node)  # a symbolic scalar that folded to a number
        if isinstance(base, TorchSpec):
            value = torchhost.attribute(base, attr)
            return Method(base, attr, node) if value is None else value
        if isinstance(base, Record):  # a config object the kernel received
            if attr in base.fields:
                return base.fields[attr]
            obj = self.live_instance(base)
            return UNKNOWN if obj is None else self.attribute(obj, attr, node)
        if isinstance(base, (Instance, ClassVal, SuperVal)):
            value = self.object_attribute(base, attr, node)
            return UNKNOWN if value is _NO_ATTR else value
        if isinstance(base, DType) and attr == "name":
            return base.name
        if isinstance(base, ops.EnumValue) and attr in ("name", "value"):
            return base.name
        if isinstance(base, (list, tuple, dict, set)) or (
                is_static(base) and not isinstance(base, (int, float, bool)) or isinstance(base, (int, float))):
            # containers of anything (tensors, torch specs) keep Python's methods: results.append(t)
            if attr in pyvalues.PURE_METHODS.get(type(base), ()) or attr in pyvalues.MUTATING_METHODS.get(type(base), ()):
                return StaticMethod(base, attr)
            if isinstance(base, (int, float)) and attr in ("real", "imag"):
                return getattr(base, attr)
        return UNKNOWN

    def live_instance(self, record: Record) -> Optional[Instance]:
        """A live object of a class of the user's code as an ``Instance`` of its class statement
        (read from its module's source), over the live attributes: its methods and properties
        compute on them as Python would.  One per record, so what a method sets stays."""
        cache = self.__dict__.setdefault("_live_instances", {})
        if id(record) in cache:
            return cache[id(record)][1]
        obj = None
        if record.origin is not None:
            path, qualname = record.origin
            scope = self.scope.load(path) if hasattr(self.scope, "load") else None
            cls = scope.lookup(qualname.split(".")[0]) if scope is not None else UNKNOWN
            for part in qualname.split(".")[1:]:
                cls = cls.attrs.get(part, UNKNOWN) if isinstance(cls, ClassVal) else UNKNOWN
            if isinstance(cls, ClassVal):
                obj = Instance(cls, dict(record.fields))
        cache[id(record)] = (record, obj)
        return obj

    def object_attribute(self, base, attr: str, node) -> Any:
        """``obj.attr`` on an object or class of the analysed code, as Python finds it: the instance's
        own attributes, then the class and its bases (methods bound, properties computed, static and
        class methods unwrapped); ``_NO_ATTR`` when nothing binds it (Python: AttributeError)."""
        if isinstance(base, SuperVal):
            receiver = base.receiver
            cls = receiver.cls if isinstance(receiver, Instance) else receiver
            order = cls.mro() if isinstance(cls, ClassVal) else []
            order = order[order.index(base.owner) + 1:] if base.owner in order else []
            found = next((c.attrs[attr] for c in order if attr in c.attrs), _NO_ATTR)
        elif isinstance(base, Instance):
            if attr in base.fields:
                return base.fields[attr]
            if attr == "__class__":
                return base.cls
            receiver = base
            found = base.cls.lookup(attr, _NO_ATTR)
            if found is not _NO_ATTR and base.cls.opaque and not isinstance(found, (FuncRef, Descriptor)):
                return UNKNOWN  # an enum member, a NamedTuple field: not the value its body wrote
        else:
            if attr == "__name__":
                return base.qualname.rsplit(".", 1)[-1]
            receiver = base
            found = base.lookup(attr, _NO_ATTR)
            if found is not _NO_ATTR and base.opaque and not isinstance(found, (FuncRef, Descriptor)):
                return UNKNOWN
        if found is _NO_ATTR:
            return _NO_ATTR
        on_class = isinstance(receiver, ClassVal)
        if isinstance(found, FuncRef):
            return found if on_class else BoundMethod(found, receiver)
        if isinstance(found, Descriptor):
            if found.kind == "staticmethod":
                return found.func
            if found.kind == "classmethod":
                return BoundMethod(found.func, receiver if on_class else receiver.cls)
            if on_class:
                return UNKNOWN  # the property object itself
            return self.call_function(node, found.func, [receiver], {})
        return found

    def api_attribute(self, base: ApiRef, attr: str, node) -> Any:
        qual = base.qualname + "." + attr
        if qual.startswith("pypto."):
            if qual in api.MARKERS:
                return Marker(api.MARKERS[qual])
            dt = api.dtype(qual)
            if dt is not None:
                return dt
            if api.known(qual) and api.surface.NAMES.get(qual, ("",))[0] == "member" and \
                    api.surface.NAMES.get(base.qualname, ("",))[0] == "enum":
                return ops.EnumValue(base.qualname.rsplit(".", 1)[-1], attr)
            if not api.known(qual) and api.known(base.qualname) and api.surface.NAMES.get(
                    base.qualname, ("",))[0] in ("module", "class", "enum"):
                hint = api.suggestions(qual)
                more = f"; did you mean {', '.join(f'`{h}`' for h in hint)}?" if hint else ""
                return self.unknown_name(f"`{qual}` is not a pypto name{more}", node)
        if base.qualname == "math":
            value = pyvalues.math_value(attr)
            return value if value is not UNKNOWN else ApiRef(qual)
        return ApiRef(qual)

    def unknown_name(self, message, node):
        """A pypto name neither release has: PTO101 when building; read in a kernel by the linter, a
        fact (the kernel fails when pypto traces it: PTO028 says so with the same words)."""
        if self.unknown_out is not None:  # a kernel's annotations: kernels.py reports them
            self.unknown_out.append((message, node))
        if self.in_kernel():
            if self.building:
                return self.problem("PTO101", message, node)
            if self.recording and self.kernel is not None:
                self.kernel.unknown_names.append((message, node))
        return UNKNOWN

    def rejected(self, code, message, node):
        """A construct pypto rejects at trace time: ``code`` when building; read in a kernel by the
        linter, a fact (PTO021 reports it with the same words)."""
        if self.building:
            return self.problem(code, message, node)
        if self.recording and self.kernel is not None and self.in_kernel():
            self.kernel.rejected.append((message, node))
        return UNKNOWN

    def dim_value(self, d):
        if d is None:
            return UNKNOWN
        return d

    def eval_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def eval_List(self, node):
        return list(self._elements(node.elts))

    def eval_Set(self, node):
        items = self._elements(node.elts)
        try:
            return set(items) if all(is_static(i) for i in items) else UNKNOWN
        except TypeError:
            return UNKNOWN

    def _elements(self, elts) -> list:
        out = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                inner = self.eval(elt.value)
                items = pyvalues._materialise(inner) if is_static(inner) else (list(inner) if isinstance(inner, (list, tuple)) else None)
                if items is None:
                    out.append(UNKNOWN)
                else:
                    out.extend(items)
            else:
                out.append(self.eval(elt))
        return out

    def eval_Dict(self, node):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                inner = self.eval(v)
                if isinstance(inner, dict):
                    out.update(inner)
                else:
                    return UNKNOWN
                continue
            key, value = self.eval(k), self.eval(v)
            if not is_static(key):
                return UNKNOWN
            try:
                out[key] = value
            except TypeError:
                return UNKNOWN
        return out

    def eval_JoinedStr(self, node):
        """The f-string's text when every part is known at build time, else UNKNOWN; every part is
        evaluated either way (a symbolic part does not hide what the others read)."""
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                text = str(v.value)
            elif isinstance(v, ast.FormattedValue):
                text = self._formatted(v)
            else:
                text = None
            if parts is not None and isinstance(text, str):
                parts.append(text)
            else:
                parts = None
        return "".join(parts) if parts is not None else UNKNOWN

    def _formatted(self, node: ast.FormattedValue):
        """One ``{value!conv:spec}`` field as text, or None when it is not known at build time."""
        value = self.eval(node.value)
        spec = self.eval(node.format_spec) if node.format_spec is not None else ""
        if not is_static(value) or not isinstance(spec, str):
            return None
        if isinstance(value, (list, dict, tuple)) and len(repr(value)) > 10_000:
            return None
        convert = {-1: None, 114: repr, 115: str, 97: ascii}.get(node.conversion, None)
        try:
            return format(convert(value) if convert else value, spec)
        except Exception:  # noqa: BLE001 - a spec the value does not take: pypto would raise there
            return None

    def eval_FormattedValue(self, node):
        return self.eval_JoinedStr(ast.JoinedStr(values=[node]))

    def eval_Slice(self, node):
        lower = self.eval(node.lower) if node.lower is not None else None
        upper = self.eval(node.upper) if node.upper is not None else None
        step = self.eval(node.step) if node.step is not None else None
        return slice(lower, upper, step)

    def eval_Starred(self, node):
        return UNKNOWN

    def eval_Lambda(self, node):
        return FuncRef(node, "<lambda>", self.frame.scope, self.frame if self.frame.context != "module" else None,
                       self.source)

    # -- comprehensions: unrolled over static iterables, in a scope of their own ------------------
    def eval_ListComp(self, node):
        out = self.comprehension(node)
        return UNKNOWN if out is None else out

    eval_GeneratorExp = eval_ListComp  # consumed at once by what takes it (sum, tuple, ...)

    def eval_SetComp(self, node):
        out = self.comprehension(node)
        try:
            return UNKNOWN if out is None else set(out)
        except TypeError:
            return UNKNOWN

    def eval_DictComp(self, node):
        out = self.comprehension(node)
        try:
            return UNKNOWN if out is None else dict(out)
        except TypeError:
            return UNKNOWN

    def comprehension(self, node) -> Optional[list]:
        """The items of a comprehension (``(key, value)`` pairs for a dict), or None when an
        iterable or a condition is not a build-time value.  Its targets do not leak."""
        names = {n.id for gen in node.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        env, bindings = self.frame.env, self.frame.bindings
        saved = {n: (env.get(n, _ABSENT), bindings.get(n, _ABSENT)) for n in names}
        out: list = []
        try:
            done = self._generate(node, 0, out)
        finally:
            for n, (value, binding) in saved.items():
                for table, old in ((env, value), (bindings, binding)):
                    if old is _ABSENT:
                        table.pop(n, None)
                    else:
                        table[n] = old
        return out if done else None

    def _generate(self, node, depth: int, out: list) -> bool:
        if depth == len(node.generators):
            if isinstance(node, ast.DictComp):
                out.append((self.eval(node.key), self.eval(node.value)))
            else:
                out.append(self.eval(node.elt))
            return True
        gen = node.generators[depth]
        iterable = self.eval(gen.iter)
        if isinstance(iterable, (list, tuple, dict)):
            items = list(iterable)
        elif is_static(iterable):
            items = pyvalues._materialise(iterable)
        else:
            items = None
        if items is None or self.iterations + len(items) > MAX_STATIC_ITERATIONS or self.spent():
            return False
        self.iterations += len(items)
        for item in items:
            self.steps += 1
            self.assign(gen.target, item, None)
            keep = True
            for cond in gen.ifs:
                value = self.eval(cond)
                if not is_static(value) or isinstance(value, Sym):
                    return False
                keep = keep and bool(value)
            if keep and not self._generate(node, depth + 1, out):
                return False
        return True

    def eval_NamedExpr(self, node):
        value = self.eval(node.value)
        self.bind_name(node.target.id, value, node.target)
        return value

    def eval_Await(self, node):
        return UNKNOWN

    eval_Yield = eval_YieldFrom = eval_Await

    # -- operators ---------------------------------------------------------------------------
    def eval_BinOp(self, node):
        left, right = self.eval(node.left), self.eval(node.right)
        return self.binop(node, type(node.op).__name__, left, right, node.left, node.right)

    def binop(self, node, op: str, left, right, left_node=None, right_node=None):
        if isinstance(left, Tensor) or isinstance(right, Tensor):
            name = api.BINOP_NAMES.get(op)
            if name is None:
                return self.problem("PTO102", f"the operator {op} on tensors is not supported by pypto-ast", node)
            return self.tensor_binop(node, name, left, right, left_node, right_node)
        if left is UNKNOWN or right is UNKNOWN:
            # a symbolic operand keeps its lint metadata (what it was read from) through the unknown
            return UNKNOWN if self.building else self.sym_join(node, left, right)
        if isinstance(left, TorchSpec) or isinstance(right, TorchSpec):
            return torchhost.binop(op, left, right)
        if isinstance(left, (list, tuple)) or isinstance(right, (list, tuple)):
            if not (is_static(left) and is_static(right)):
                return self.sequence_binop(node, op, left, right)
        if isinstance(left, Sym) or isinstance(right, Sym):
            return self.sym_binop(node, op, left, right)
        if isinstance(left, ops.Element) or isinstance(right, ops.Element):
            a = left.value if isinstance(left, ops.Element) else left
            b = right.value if isinstance(right, ops.Element) else right
            return self.binop(node, op, a, b, left_node, right_node)
        if is_static(left) and is_static(right):
            return pyvalues.binop(op, left, right)
        return UNKNOWN

    def sequence_binop(self, node, op: str, left, right):
        """``+`` and ``*`` on lists and tuples holding tensors (or other values of the evaluation), as
        Python computes them: ``[t] * group``, ``parts + [tail]``.  The items are shared, not copied."""
        if op == "Add" and type(left) is type(right):
            if len(left) + len(right) > pyvalues.MAX_ITEMS:
                return UNKNOWN
            return left + right
        if op == "Mult":
            seq, count = (left, right) if isinstance(left, (list, tuple)) else (right, left)
            if isinstance(count, Sym):
                return self.problem("PTO105", f"a list repeated a symbolic number of times (`{count.text}`): Python "
                                              "needs a concrete integer at build time", node)
            if isinstance(count, int) and isinstance(seq, (list, tuple)):
                if len(seq) * max(count, 0) > pyvalues.MAX_ITEMS:
                    return UNKNOWN
                return seq * count
        return UNKNOWN

    def sym_binop(self, node, op: str, left, right):
        sop = _BIN.get(op)
        if sop is None or (not isinstance(left, (Sym, int, float)) or isinstance(left, bool) and False) or \
                not isinstance(right, (Sym, int, float)):
            if isinstance(left, (list, tuple)) or isinstance(right, (list, tuple)):
                return UNKNOWN
            return self.sym_join(node, left, right)
        a, b = ops.to_expr(left), ops.to_expr(right)
        if a is None or b is None:
            return self.sym_join(node, left, right)
        return self.make_sym(binexpr(sop, a, b), node, left, right)

    def make_sym(self, expr: ir.Expr, node, *parts) -> Any:
        """A Sym for ``expr`` whose lint metadata joins that of ``parts``; a constant stays a number."""
        if isinstance(expr, ir.Const):
            return expr.value
        kinds, reads, indices = frozenset(), frozenset(), frozenset()
        for p in parts:
            if isinstance(p, Sym):
                kinds, reads, indices = kinds | p.kinds, reads | p.reads, indices | p.indices
        return Sym(expr, kinds, reads, indices, node=node, source=self.source)

    def sym_join(self, node, *parts):
        """A symbolic value with no IR expression (lint only): the metadata of its parts."""
        syms = [p for p in parts if isinstance(p, Sym)]
        if not syms:
            return UNKNOWN
        if self.building:
            return self.problem("PTO105", "this symbolic expression cannot be computed by the control program", node)
        kinds, reads, indices = frozenset(), frozenset(), frozenset()
        for p in syms:
            kinds, reads, indices = kinds | p.kinds, reads | p.reads, indices | p.indices
        return Sym(None, kinds, reads, indices, node=node, source=self.source)

    def eval_UnaryOp(self, node):
        value = self.eval(node.operand)
        op = type(node.op).__name__
        if isinstance(value, Tensor):
            if op == "Not":
                self.tensor_test(node.operand, "not")
            if op == "USub":
                return self.tensor_binop(node, "neg", value, None, node.operand, None)
            if op == "UAdd":
                return value
            return self.problem("PTO102", f"the operator {op} on a tensor is not supported by pypto-ast", node)
        if isinstance(value, Sym):
            if op == "UAdd":
                return value
            if op in ("USub", "Not") and value.expr is not None:
                return self.make_sym(unexpr("-" if op == "USub" else "not", value.expr), node, value)
            return self.sym_join(node, value)
        if isinstance(value, TorchSpec):
            return value if op in ("USub", "UAdd", "Invert") else UNKNOWN
        if isinstance(value, ops.Element):
            value = value.value
        if is_static(value):
            return pyvalues.unary(op, value)
        return UNKNOWN

    def eval_Compare(self, node):
        values = [self.eval(node.left)] + [self.eval(c) for c in node.comparators]
        if any(isinstance(v, Tensor) for v in values):
            kind = type(node.ops[0]).__name__
            if len(node.ops) == 1 and kind in ("Is", "IsNot") and any(v is None for v in values):
                # ``w is not None`` on an optional tensor parameter: decided at build time
                return (values[0] is values[1]) if kind == "Is" else (values[0] is not values[1])
            name = api.CMPOP_NAMES.get(type(node.ops[0]).__name__)
            if name is None or len(node.ops) != 1:
                return self.problem("PTO102", "this comparison of tensors is not supported by pypto-ast", node)
            return self.tensor_binop(node, name, values[0], values[1], node.left, node.comparators[0])
        result: Any = True
        for op, a, b in zip(node.ops, values, values[1:]):
            name = type(op).__name__
            if isinstance(a, Sym) or isinstance(b, Sym):
                for s in (a, b):
                    self.sym_used(s, "compare")
                cop = _CMP.get(name)
                ea, eb = ops.to_expr(a), ops.to_expr(b)
                part = self.make_sym(binexpr(cop, ea, eb), node, a, b) if cop and ea is not None and eb is not None \
                    else self.sym_join(node, a, b)
            elif name in ("Is", "IsNot") and (a is None or b is None):
                part = (a is b) if name == "Is" else (a is not b)
            elif is_static(a) and is_static(b):
                part = pyvalues.compare(name, a, b)
            elif name in ("Is", "IsNot", "Eq", "NotEq") and isinstance(a, (ApiRef, DType, Marker, ops.EnumValue)) \
                    and isinstance(b, (ApiRef, DType, Marker, ops.EnumValue)):
                same = a == b
                part = same if name in ("Is", "Eq") else not same
            else:
                part = UNKNOWN
            result = self.logical_and(node, result, part)
            if result is False:
                return False
        return result

    def logical_and(self, node, a, b):
        if a is True:
            return b
        if a is False or b is False:
            return False
        if b is True:
            return a
        if isinstance(a, Sym) and isinstance(b, Sym) and a.expr is not None and b.expr is not None:
            return self.make_sym(binexpr("and", a.expr, b.expr), node, a, b)
        if isinstance(a, Sym) or isinstance(b, Sym):
            return self.sym_join(node, a, b)
        return UNKNOWN

    def eval_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        result = None
        for i, value_node in enumerate(node.values):
            value = self.eval(value_node)
            if isinstance(value, Tensor) and i < len(node.values) - 1:  # Python calls bool() on it
                self.tensor_test(value_node, "and" if is_and else "or")
            elif isinstance(value, Tensor):  # the last one is tested only by an `if` around it
                self.tensor_last[id(node)] = value_node
            if i == 0:
                result = value
            elif isinstance(result, Sym) or isinstance(value, Sym):
                ea, eb = ops.to_expr(result), ops.to_expr(value)
                result = self.make_sym(binexpr("and" if is_and else "or", ea, eb), node, result, value) \
                    if ea is not None and eb is not None else self.sym_join(node, result, value)
            elif result is UNKNOWN or value is UNKNOWN:
                result = UNKNOWN
            else:
                result = (result and value) if is_and else (result or value)
            if is_static(result) and not isinstance(result, Sym):
                if is_and and not result or not is_and and result:
                    return result  # short-circuit, as Python
        return result

    def eval_IfExp(self, node):
        test = self.eval(node.test)
        self._tested(node.test, "ifexp")
        if isinstance(test, Tensor):
            self.tensor_test(node.test, "ifexp")
        if is_static(test):
            return self.eval(node.body if test else node.orelse)
        symbolic = isinstance(test, Sym)
        if symbolic:
            if self.building:
                return self.problem("PTO105", "a conditional expression on a symbolic value has no single build-time "
                                              "value (pypto 0.2.0: `Not concrete value`); use pypto.min/pypto.max or "
                                              "pypto.where", node)
            self._branch_fact(node, "ifexp", test.kinds == frozenset({"loop_flag"}))
        out = []
        self._two_ways(lambda: out.append(self.eval(node.body)), lambda: out.append(self.eval(node.orelse)),
                       symbolic and test.kinds != frozenset({"loop_flag"}))
        return merge_values(out[0], out[1])

    # -- subscripts ----------------------------------------------------------------------------
    def eval_Subscript(self, node):
        base = self.eval(node.value)
        key = self.eval(node.slice)
        return self.subscript(node, base, key)

    def subscript(self, node, base, key):
        if isinstance(base, ApiRef):
            if base.qualname in api.TENSOR_CLASSES:
                return annotation_from_subscript(key)
            return UNKNOWN
        if isinstance(base, Tensor):
            return self.tensor_getitem(node, base, key)
        if isinstance(key, Sym) and isinstance(base, (list, tuple)):
            return self.rejected("PTO105", f"a symbolic value `{key.text}` cannot index a Python list (pypto 0.2.0: "
                                           "list indices must be integers); keep the values in a tensor", node)
        if isinstance(base, (list, tuple, str, range, dict)) and is_static(key):
            try:
                return pyvalues.ok(base[key])
            except Exception:
                return UNKNOWN
        return UNKNOWN

    # =========================================================================================
    # calls
    # =========================================================================================
    def eval_Call(self, node):
        func = self.eval(node.func)
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.eval(arg.value)
                items = pyvalues._materialise(inner) if is_static(inner) else (
                    list(inner) if isinstance(inner, (list, tuple)) else None)
                if items is None:
                    args.append(UNKNOWN)
                else:
                    args.extend(items)
            else:
                args.append(self.eval(arg))
        kwargs = {}
        for kw in node.keywords:
            value = self.eval(kw.value)
            if kw.arg is not None:
                kwargs[kw.arg] = value
            elif isinstance(value, dict):
                kwargs.update({k: v for k, v in value.items() if isinstance(k, str)})
        saved, self.node = self.node, node
        try:
            return self.call(node, func, args, kwargs)
        finally:
            self.node = saved

    def call(self, node, func, args, kwargs):
        if isinstance(func, ApiRef):
            q = func.qualname
            if q.startswith("pypto."):
                if self.check_signature(q, node):
                    return UNKNOWN
                return self.pypto_call(node, q[len("pypto."):], args, kwargs)
            if q.startswith("builtins."):
                return self.builtin_call(node, q[len("builtins."):], args, kwargs)
            if q.startswith("math."):
                return pyvalues.call_math(q[len("math."):], args, kwargs)
            if q.startswith("numpy."):
                return pyvalues.call_numpy(q[len("numpy."):], args, kwargs)
            if q.startswith("torch."):
                return self.torch_call(node, q, args, kwargs)
            if q == "dataclasses.field":
                factory = kwargs.get("default_factory")
                return FieldSpec(kwargs.get("default", UNKNOWN), factory)
            self._escape(args, kwargs, node)
            return UNKNOWN
        if isinstance(func, Method):
            return self.method_call(node, func, args, kwargs)
        if isinstance(func, StaticMethod):
            return pyvalues.call_method(func.obj, func.name, args, kwargs)
        if isinstance(func, FuncRef):
            return self.call_function(node, func, args, kwargs)
        if isinstance(func, BoundMethod):
            return self.call_function(node, func.func, [func.receiver] + list(args), kwargs)
        if isinstance(func, ClassVal):
            return self.instantiate(node, func, list(args), kwargs)
        self._escape(args, kwargs, node)
        return UNKNOWN

    def instantiate(self, node, cls: ClassVal, args: list, kwargs: dict):
        """``Cls(...)`` of a class of the analysed code, as Python builds it: ``__init__`` run on a
        new object (its ``self.x = ...`` binds the attributes); for a dataclass without its own
        ``__init__``, the fields bound from the arguments and the defaults (``field(default_factory=
        ...)`` called), then ``__post_init__``.  A class with a base the front end does not model and
        no ``__init__`` of its own is unknown."""
        maker = next((c for c in cls.mro() if "__init__" in c.attrs or c.dataclass), None)
        init = maker.attrs.get("__init__") if maker is not None else None
        if maker is not None and "__init__" in maker.attrs and not isinstance(init, FuncRef):
            return UNKNOWN
        if isinstance(init, FuncRef):
            if self.kernel is None and self.frame.context == "module" and not self.scope.may_inline(init):
                return UNKNOWN
            obj = Instance(cls)
            self.call_function(node, init, [obj] + args, kwargs)
            return obj
        if cls.opaque:
            self._escape(args, kwargs, node)
            return UNKNOWN
        obj = Instance(cls)
        if maker is not None:  # the __init__ @dataclass wrote
            names = maker.fields()
            if len(args) > len(names):
                return UNKNOWN  # TypeError in Python
            for i, name in enumerate(names):
                if i < len(args):
                    value = args[i]
                elif name in kwargs:
                    value = kwargs[name]
                else:
                    value = cls.lookup(name, UNKNOWN)
                    if isinstance(value, FieldSpec):
                        if value.factory is not None:
                            value = self.call(node, value.factory, [], {})
                        else:
                            value = value.default
                obj.fields[name] = value
            post = cls.lookup("__post_init__")
            if isinstance(post, FuncRef):
                self.call_function(node, post, [obj], {})
        elif args or kwargs:
            return UNKNOWN  # object() takes no arguments
        return obj

    def _escape(self, args, kwargs, node):
        """A tensor handed to code we cannot see may be written there: count it as written; a
        value read from a tensor handed there counts as used."""
        if self.kernel is None:
            return
        for value in list(args) + list(kwargs.values()):
            if isinstance(value, Tensor):
                self.write(value, node)
            else:
                self.sym_used(value, "operand")

    def builtin_call(self, node, name, args, kwargs):
        if name == "print":
            if self.kernel is not None and self.in_pypto_loop() and self.recording:
                self.kernel.prints.append(PrintFact(node, self.loop))
            return None
        if name == "range":
            if all(isinstance(a, int) and not isinstance(a, bool) for a in args) and 1 <= len(args) <= 3:
                return pyvalues.call_builtin("range", args, {})
            if any(isinstance(a, Sym) for a in args):
                sym = next(a for a in args if isinstance(a, Sym))
                if self.building or self.recording:
                    self.rejected("PTO105", f"symbolic value `{sym.text}` used where Python needs a concrete "
                                            "integer (range() unrolls at build time); use pypto.loop", node)
                start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
                return RangeVal(start, stop, step)
            if not self.building and 1 <= len(args) <= 3 and any(a is UNKNOWN for a in args):
                start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
                return RangeVal(start, stop, step)  # bounds we cannot read: still starts at ``start``
            return UNKNOWN
        if name == "len" and args:
            if isinstance(args[0], Tensor):
                if args[0].shape:
                    return self.dim_value(args[0].shape[0])
                return UNKNOWN
            if isinstance(args[0], (list, tuple, dict, str, range)):
                return len(args[0])
            return UNKNOWN
        if name in ("min", "max") and args:
            items = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
            if any(isinstance(v, Sym) for v in items):
                out = items[0]
                for item in items[1:]:
                    ea, eb = ops.to_expr(out), ops.to_expr(item)
                    out = self.make_sym(binexpr(name, ea, eb), node, out, item) if ea is not None and eb is not None \
                        else self.sym_join(node, out, item)
                return out
        if name == "isinstance" and len(args) == 2:
            classes = args[1] if isinstance(args[1], tuple) else (args[1],)
            if isinstance(args[0], Instance) and all(isinstance(c, ClassVal) for c in classes):
                return any(c in args[0].cls.mro() for c in classes)
            return UNKNOWN
        if name in ("getattr", "hasattr") and len(args) in (2, 3) and isinstance(args[1], str) and \
                isinstance(args[0], (Instance, ClassVal, Record)):
            if isinstance(args[0], Record):
                value = args[0].fields.get(args[1], _NO_ATTR)
            else:
                value = self.object_attribute(args[0], args[1], node)
            if name == "hasattr":
                return value is not _NO_ATTR
            return value if value is not _NO_ATTR else (args[2] if len(args) == 3 else UNKNOWN)
        if name == "setattr" and len(args) == 3 and isinstance(args[0], Instance) and isinstance(args[1], str):
            args[0].fields[args[1]] = args[2]
            return None
        if name == "super" and not args:
            func = self.frame.func
            owner = getattr(self.frame, "owner", None)
            receiver = self.frame.env.get(func.args.args[0].arg) if owner is not None and func is not None and \
                func.args.args else None
            return SuperVal(owner, receiver) if isinstance(receiver, (Instance, ClassVal)) else UNKNOWN
        if name in ("int", "float") and args and isinstance(args[0], Sym):
            return args[0] if name == "int" and not self.building else self.problem(
                "PTO105", f"{name}() of the symbolic value `{args[0].text}`: it has no build-time value", node)
        if name in ("map", "filter") and len(args) == 2:
            items = pyvalues._materialise(args[1]) if is_static(args[1]) else (
                list(args[1]) if isinstance(args[1], (list, tuple)) else None)
            if items is None:
                return UNKNOWN
            out = []
            for item in items:
                value = self.call(node, args[0], [item], {})
                if name == "map":
                    out.append(value)
                elif value is True or (is_static(value) and value):
                    out.append(item)
                elif not is_static(value):
                    return UNKNOWN
            return out
        if name == "sum" and args and isinstance(args[0], (list, tuple)) and not is_static(args[0]):
            # sum(tensors): start + t0 + t1 ..., as Python folds it (the tensors' own ``+``)
            total = args[1] if len(args) > 1 else kwargs.get("start", 0)
            for item in args[0]:
                total = self.binop(node, "Add", total, item)
            return total
        if name in ("tuple", "list") and args and isinstance(args[0], (list, tuple)):
            return (tuple if name == "tuple" else list)(args[0])
        if name in ("enumerate", "zip", "reversed", "sorted") and all(isinstance(a, (list, tuple)) for a in args):
            if name == "enumerate":
                start = kwargs.get("start", args[1] if len(args) > 1 else 0)
                return [(start + i, v) for i, v in enumerate(args[0])] if isinstance(start, int) else UNKNOWN
            if name == "zip":
                return [tuple(t) for t in zip(*args)]
            if name == "reversed":
                return list(reversed(args[0]))
        return pyvalues.call_builtin(name, args, kwargs)

    def torch_call(self, node, q, args, kwargs):
        """What host code builds with torch, as far as a kernel call's shapes need it (torchhost.py)."""
        return torchhost.call(q[len("torch."):], list(args), kwargs) if q.count(".") == 1 else UNKNOWN

    def method_call(self, node, method: Method, args, kwargs):
        obj, name = method.obj, method.name
        if isinstance(obj, Sym):
            other = args[0] if args else None
            ea, eb = ops.to_expr(obj), ops.to_expr(other)
            if ea is not None and eb is not None:
                return self.make_sym(binexpr(name, ea, eb), node, obj, other)
            return self.sym_join(node, obj, *args)
        if isinstance(obj, TorchSpec):
            return torchhost.method(obj, name, list(args), kwargs)
        if not isinstance(obj, Tensor):
            return UNKNOWN
        if self.check_signature(f"pypto.Tensor.{name}", node, receiver=True):
            return UNKNOWN
        if name == "move":
            if args and isinstance(args[0], Tensor):
                self.read(args[0], node.args[0])
            return self.tensor_setitem(node, obj, slice(None), args[0] if args else UNKNOWN, method=True)
        if name == "assemble":
            return self.assemble(node, list(args[:1]) + list(args[1:2]) + [obj], kwargs, receiver=True)
        if name == "fill_":
            full = self.op(node, "full", [list(obj.shape) if obj.shape is not None else None,
                                          args[0] if args else 0, obj.dtype], {}, [node])
            self.tensor_setitem(node, obj, slice(None), full, method=True)
            return obj
        if name in api.WRITE_METHODS:
            self.write(obj, node.func)
            if self.building:
                return self.problem("PTO102", f"the in-place method `{name}` is not supported by pypto-ast yet", node)
            return obj
        if name == "view":
            return self.view(node, [obj] + list(args), kwargs)
        if name in ("is_concrete", "concrete"):
            return UNKNOWN
        if name == "set_cache_policy":  # a GM cache hint (CachePolicy.NONE_CACHEABLE): no effect on values
            return None
        if name in api.ALL_OPS or ops.supported(name) or api.known(f"pypto.Tensor.{name}"):
            return self.op(node, name, [obj] + list(args), kwargs, [node.func.value] + list(node.args))
        return self.unknown_name(f"pypto tensors have no method `{name}`", node)

    # -- functions -----------------------------------------------------------------------------
    def call_function(self, node, func: FuncRef, args, kwargs):
        kind = self.scope.decorator_kind(func)
        if self.on_kernel_call is not None and self.kernel is None:  # a kernel, or a legacy body's function
            self.on_kernel_call(func, args, kwargs, node)
        if kind in ("jit", "pypto.jit"):
            if self.kernel is not None:
                self.rejected("PTO100", "calling a jit kernel from a kernel is not supported (pypto 0.2.0: "
                                        "input type is not currently supported); make it a "
                                        "@pypto.frontend.function helper", node)
            return None if self.kernel is None else UNKNOWN
        if kind == "function" and not self.building and self.kernel is not None and self.parsed_context() and \
                getattr(node, "keywords", None):
            self.rejected("PTO100", f"keyword arguments to the @pypto.frontend.function helper `{func.qualname}`: "
                                    "pypto raises \"Keyword arguments in nested function calls are not supported "
                                    "yet\"; pass them by position", node)
        if func.node in self.call_stack or len(self.call_stack) >= MAX_INLINE_DEPTH or self.spent():
            if self.building:
                return self.problem("PTO100", f"recursion in `{func.qualname}` is not supported in a kernel", node)
            self._escape(args, kwargs, node)
            return UNKNOWN
        context = "function" if kind == "function" else ("helper" if self.kernel is not None else "host")
        if self.kernel is None and self.frame.context == "module" and not self.scope.may_inline(func):
            return UNKNOWN
        frame = Frame(func.node, context, func.scope or self.frame.scope, func.source or self.source,
                      closure=func.closure)
        frame.owner = func.owner
        params = func.node.args
        positional = params.posonlyargs + params.args
        defaults = params.defaults
        first_default = len(positional) - len(defaults)
        for i, param in enumerate(positional):
            if i < len(args):
                value = args[i]
            elif param.arg in kwargs:
                value = kwargs[param.arg]
            elif i >= first_default:
                value = self.default_value(func, defaults[i - first_default])
            else:
                value = UNKNOWN
            frame.env[param.arg] = value
        for param, default in zip(params.kwonlyargs, params.kw_defaults):
            frame.env[param.arg] = kwargs.get(param.arg, self.default_value(func, default) if default else UNKNOWN)
        if params.vararg:
            frame.env[params.vararg.arg] = tuple(args[len(positional):])
        if params.kwarg:
            known = {p.arg for p in positional + params.kwonlyargs}
            frame.env[params.kwarg.arg] = {k: v for k, v in kwargs.items() if k not in known}
        self.call_stack.append(func.node)
        self.call_nodes.append(node)
        self.frames.append(frame)
        saved_tiles = None
        try:
            if self.kernel is not None and isinstance(func.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for deco in func.node.decorator_list:  # @pypto.options(...) scopes the helper's ops
                    if isinstance(deco, ast.Call):
                        value = self.eval(deco)
                        if isinstance(value, OptionsVal):
                            saved_tiles = saved_tiles or (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set)
                            self._enter_options(value)
            if isinstance(func.node, ast.Lambda):
                return self.eval(func.node.body)
            try:
                self.exec_block(func.node.body)
            except _Return as ret:
                return ret.value
        finally:
            self.frames.pop()
            self.call_stack.pop()
            self.call_nodes.pop()
            if saved_tiles is not None:
                self.vec_tile, self.vec_set, self.cube_tile, self.cube_set = saved_tiles
        if not frame.returns:
            return None
        result = frame.returns[0]
        for other in frame.returns[1:]:
            result = merge_values(result, other)
        return result

    def default_value(self, func: FuncRef, node):
        saved = self.frames
        self.frames = saved + [Frame(None, "module", func.scope or self.scope, func.source or self.source,
                                     closure=func.closure)]
        try:
            return self.eval(node)
        finally:
            self.frames = saved

    # =========================================================================================
    # pypto calls
    # =========================================================================================
    def pypto_call(self, node, name, args, kwargs):
        if name in ("loop", "loop_unroll"):
            return LoopIter(node, name, tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))
        if name == "cond":
            return BranchVal(args[0] if args else UNKNOWN)
        if name in ("is_loop_begin", "is_loop_end"):
            return self.loop_flag(node, name, args)
        if name == "set_vec_tile_shapes":
            return self.set_vec_tiles(node, args)
        if name == "set_cube_tile_shapes":
            return self.set_cube_tiles(node, args, kwargs)
        if name in ("options", "experimental.options"):
            return OptionsVal(kwargs.get("vec_tile_shapes"), kwargs.get("cube_tile_shapes"), node)
        if name == "set_options" and self.kernel is not None and (
                "vec_tile_shapes" in kwargs or "cube_tile_shapes" in kwargs):
            # set_options(vec_tile_shapes=...) is set_vec_tile_shapes: the same scope key in pypto
            vec, cube = kwargs.get("vec_tile_shapes"), kwargs.get("cube_tile_shapes")
            if isinstance(vec, (list, tuple)):
                self.set_vec_tiles(node, [list(vec)])
            elif vec is not None:
                self._enter_options(OptionsVal(UNKNOWN, None, node))
            if isinstance(cube, (list, tuple)) and len(cube) >= 3:
                self.set_cube_tiles(node, list(cube[:3]), {})
            elif cube is not None:
                self._enter_options(OptionsVal(None, UNKNOWN, node))
            return None
        if name in ("Tensor", "tensor"):
            if self.kernel is None:
                return annotation_from_call(args, kwargs)
            return self.local_tensor(node, args, kwargs)
        if name == "from_torch":
            if args and isinstance(args[0], TorchSpec):
                return args[0]
            return UNKNOWN
        if name in ("min", "max"):
            if any(isinstance(a, Tensor) for a in args):
                return self.op(node, name, list(args), kwargs, list(node.args))
            return self.builtin_call(node, name, args, kwargs)
        if name == "symbolic_scalar":
            return _symbolic_scalar(args[0] if args else kwargs.get("value", UNKNOWN))
        if name == "frontend.dynamic":
            label = args[0] if args and isinstance(args[0], str) else "dyn"
            return Sym(None, frozenset({"dynamic_dim"}), text=label)
        if name == "Element":
            return ops.Element(args[0] if args else None, args[1] if len(args) > 1 else UNKNOWN)
        if name == "bytes_of":
            return args[0].size if args and isinstance(args[0], DType) else UNKNOWN
        if name == "ceildiv" and len(args) == 2 and not kwargs and not any(isinstance(a, Tensor) for a in args):
            # pypto.ceildiv(a, b) is (a + b - 1) // b on (symbolic) scalars
            a, b = args
            return self.binop(node, "FloorDiv", self.binop(node, "Sub", self.binop(node, "Add", a, b), 1), b)
        if name == "view":
            return self.view(node, args, kwargs)
        if name == "assemble":
            return self.assemble(node, args, kwargs)
        if name in api.ALL_OPS or ops.supported(name):
            return self.op(node, name, list(args), kwargs, list(node.args))
        if name == "function":
            if self.kernel is not None:
                return self.problem("PTO100", "`pypto.function` nested in a kernel: pypto 0.2.0 raises "
                                              "`function nested is not allowed`", node)
            return UNKNOWN
        if name.startswith(("set_", "get_", "reset_", "experimental.set_", "experimental.get_")) or \
                name in ("frontend.jit", "frontend.function", "jit", "pass_verify_print", "pass_verify_save",
                         "set_verify_golden_data", "set_semantic_label"):
            return None
        qual = "pypto." + name
        if not api.known(qual):
            hint = api.suggestions(qual)
            more = f"; did you mean {', '.join(f'`{h}`' for h in hint)}?" if hint else ""
            return self.unknown_name(f"`{qual}` is not a pypto name{more}", node)
        kind = api.surface.NAMES.get(qual, ("",))[0]
        if self.kernel is not None and kind == "function":
            self._escape(args, kwargs, node)
            return self.problem("PTO102", f"`{qual}` is a pypto op that pypto-ast does not lower yet", node)
        self._escape(args, kwargs, node)
        return UNKNOWN

    def loop_flag(self, node, name, args):
        idx = args[0] if args else None
        if not isinstance(idx, Sym) or idx.loop is None:
            if self.building:
                return self.problem("PTO106", f"pypto.{name} needs the loop index itself (pypto 0.2.0: `not loop "
                                              "index`)", node)
            return Sym(None, frozenset({"loop_flag"}), node=node, source=self.source)
        ctx, copy = idx.loop, idx.copy
        if name == "is_loop_begin":
            if copy > 0:
                return False
            expr = binexpr("==", idx.expr, ops.to_expr(ctx.start))
        else:
            step = ops.const_of(ctx.step)
            span = binexpr("-", binexpr("-", ops.to_expr(ctx.stop), ops.to_expr(ctx.start)), ir.Const(1))
            last = binexpr("+", ops.to_expr(ctx.start), binexpr("*", binexpr("//", span, ir.Const(step)), ir.Const(step)))
            expr = binexpr("==", idx.expr, last)
        if isinstance(expr, ir.Const):
            return expr.value
        return Sym(expr, frozenset({"loop_flag"}), node=node, source=self.source)

    def local_tensor(self, node, args, kwargs):
        if args and isinstance(args[0], (int, float)) and not isinstance(args[0], bool):
            # ``pypto.tensor(127.0, DT_FP32)``: the first argument is the shape; pypto's Tensor.__init__
            # iterates it (``all(isinstance(s, int) for s in shape)``) and raises TypeError (0.2.0 and
            # the repository's tensor.py): refused, not modelled
            spelled = node.func.attr if isinstance(getattr(node, "func", None), ast.Attribute) else "tensor"
            message = (f"pypto.{spelled}({args[0]!r}, ...): the first argument is the shape (a list of ints or "
                       "symbolic scalars), not a value; pypto's Tensor.__init__ iterates it and raises TypeError")
            if self.building:
                return self.problem("PTO106", message, node)
            self.lint_refusal("signature", message, node)
            return UNKNOWN
        ann = annotation_from_call(args, kwargs)
        # ``pypto.tensor()``: a placeholder a later ``t.move(v)`` binds, of v's dtype (the build's
        # "placeholder"); pypto's FP32 default is not what it holds
        dtype = ann.dtype or (api.FP32 if args or kwargs else None)
        shape = ann.shape
        if shape is not None and any(isinstance(d, (Marker, ApiRef)) or d is Ellipsis for d in shape):
            shape = None
        name = args[2] if len(args) > 2 and isinstance(args[2], str) else kwargs.get("name", "")
        name = name if isinstance(name, str) else ""
        local = Tensor(tuple(shape) if shape is not None else None, dtype, "local", name)
        if self.recording and self.kernel is not None:
            self.kernel.local_decls[local.ident] = node
        if self.building:
            if not args and not kwargs:  # ``t = pypto.tensor()``: a placeholder a later ``t.move(v)`` binds
                return Tensor(None, None, "placeholder", name)
            if not local.known:
                return self.problem("PTO105", "pypto.tensor needs a shape known at build time", node)
            local.ref = ir.TensorRef(self.builder.local(name or f"local{len(self.builder.locals)}",
                                                        self.tensor_type(local.shape, dtype)))
            local.name = local.ref.name
        return local

    # -- tile shapes -----------------------------------------------------------------------------
    def set_vec_tiles(self, node, args):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = list(args[0])
        dims: Any = tuple(int_value(a) if not isinstance(a, Sym) else ops.const_of(a) for a in args)
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        if (starred and any(a is UNKNOWN for a in args)) or (
            len(args) == 1 and not isinstance(args[0], (int, Sym)) or not args
        ):
            dims = UNKNOWN  # ``*shapes`` / one opaque value (a list?): even the rank is unknown
        if self.building and (dims is UNKNOWN or None in dims):
            return self.problem("PTO105", "set_vec_tile_shapes needs ints known at build time", node)
        if self.recording and self.kernel is not None:
            fact = TileSetFact(node, "vec", dims, self.loop)
            self.kernel.tile_sets.append(fact)
        else:
            fact = None
        self.vec_tile, self.vec_set = dims, fact
        return None

    def set_cube_tiles(self, node, args, kwargs):
        parts = list(args[:3])
        for i, key in enumerate(("m", "k", "n")):
            if len(parts) <= i and key in kwargs:
                parts.append(kwargs[key])
        dims = []
        for part in parts:
            if isinstance(part, (list, tuple)):
                dims.append(tuple(int_value(v) for v in part))
            else:
                dims.append(None)
        value = tuple(dims) if len(dims) == 3 else UNKNOWN
        if self.building and (value is UNKNOWN or any(d is None or None in d for d in value)):
            return self.problem("PTO105", "set_cube_tile_shapes needs [mL0, mL1], [kL0, kL1], [nL0, nL1] known at "
                                          "build time", node)
        if self.recording and self.kernel is not None:
            fact = TileSetFact(node, "cube", value, self.loop)
            self.kernel.tile_sets.append(fact)
        else:
            fact = None
        self.cube_tile, self.cube_set = value, fact
        return None

    def _enter_options(self, opts: OptionsVal):
        if isinstance(opts.vec, (list, tuple)):
            self.vec_tile, self.vec_set = tuple(int_value(v) for v in opts.vec), None
        elif opts.vec is not None:
            self.vec_tile, self.vec_set = UNKNOWN, None
        if opts.cube is not None:
            self.cube_tile, self.cube_set = UNKNOWN, None

    # =========================================================================================
    # tensor ops (the op context the op table calls back into)
    # =========================================================================================
    def tensor_binop(self, node, op_name, left, right, left_node, right_node):
        args = [left] if right is None else [left, right]
        nodes = [left_node] if right is None else [left_node, right_node]
        if op_name == "matmul":
            kwargs = {}
            if isinstance(right, Tensor) and right.dtype is not None:
                kwargs["out_dtype"] = api.DTYPES["DT_INT32"] if right.dtype.name == "DT_INT8" else right.dtype
            return self.op(node, "matmul", args, kwargs, nodes)
        if op_name == "div" and not isinstance(left, Tensor):  # scalar / tensor
            return self.op(node, "mul", [self._nested("reciprocal", (right,), {}), left], {}, nodes)
        if op_name == "sub" and not isinstance(left, Tensor):  # scalar - tensor
            return self.op(node, "add", [self._nested("neg", (right,), {}), left], {}, nodes)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            return self.op(node, "floor", [self._nested("div", tuple(args), {})], {}, nodes)
        return self.op(node, op_name, args, {}, nodes)

    def _nested(self, name, args, kwargs):
        try:
            return ops.call(self, name, args, kwargs)
        except ops.OpError as exc:
            return self._op_failed(exc, name, args)

    def op(self, node, name, args, kwargs, arg_nodes):
        """A source-level op call: lint facts around it, the op table for its value."""
        inputs = []
        for i, value in enumerate(args):
            where = arg_nodes[i] if i < len(arg_nodes) else node
            if isinstance(value, Tensor):
                inputs.append(value)
                self.read(value, where)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, Tensor):
                        inputs.append(item)
                        self.read(item, where)
            elif isinstance(value, Sym):
                self.sym_used(value, "operand")
        for key, value in kwargs.items():
            if isinstance(value, Tensor):
                inputs.append(value)
                self.read(value, node)
        if name == "reshape" and kwargs.get("inplace") is True and self.loop is not None:
            self.loop.has_inplace_reshape = True
        try:
            out = ops.call(self, name, tuple(args), dict(kwargs))
        except ops.OpError as exc:
            out = self._op_failed(exc, name, args, node)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            # arguments of a form the op table does not read (an unknown where it wants a list)
            out = self._op_failed(ops.OpError(f"pypto.{name}: arguments pypto-ast cannot read at build time"),
                                  name, args, node)
        axis = None
        if name in api.REDUCE:
            axis = args[1] if len(args) > 1 else kwargs.get("dim", kwargs.get("axis"))
        self.record_op(node, name, out, inputs, axis)
        return out

    def op_refused(self, exc: ops.OpError, node=None):
        """PTO106 for an op pypto refuses; in a lint run a refusal of a known kind is a kernel fact
        (the lint finding says what the transpiler would: PTO026, PTO027)."""
        kind = getattr(exc, "kind", "")
        if kind and not self.building and self.recording and self.kernel is not None and self.in_kernel():
            self.kernel.op_errors.append((kind, str(exc), node if node is not None else self.node))
        return self.problem("PTO106", str(exc), node)

    def check_signature(self, qualname: str, node, receiver: bool = False) -> bool:
        """A call pypto's Python signature rejects (TypeError at trace time) is refused, not modelled
        without its stray argument: PTO106 when every release rejects it, and for the linter a
        PTO027 finding per release (``call@0.2.0``, ``call@head``) that ``--target`` picks.
        True when every release rejects it: the call has no value to model."""
        found = callcheck.rejections(qualname, node, receiver)
        if not found:
            return False
        everywhere = callcheck.rejected_everywhere(qualname, found)
        if self.building:
            if everywhere:
                self.problem("PTO106", found.get("0.2.0") or found["head"], node)
            return False
        for version, message in found.items():
            self.lint_refusal(f"call@{version}", message, node)
        return everywhere

    def lint_refusal(self, kind: str, message: str, node=None) -> None:
        """A lint-only kernel fact where the transpiler goes on (an assemble past its target)."""
        if not self.building and self.recording and self.kernel is not None and self.in_kernel():
            self.kernel.op_errors.append((kind, message, node if node is not None else self.node))

    def _op_failed(self, exc: ops.OpError, name, args, node=None):
        if isinstance(exc, ops.NotLowered):
            self.problem("PTO102", str(exc), node)
        else:
            self.op_refused(exc, node)
        first = next((a for a in args if isinstance(a, Tensor)), None)
        if name == "matmul":  # its dtype is out_dtype's, not the operands'
            return Tensor(None, None, "op")
        if name in api.REDUCE or name in ("view", "reshape", "transpose", "concat"):
            return Tensor(None, first.dtype if first is not None else None, "op")
        if first is not None and (name in api.VECTOR_OPS or name in api.LAYOUT):
            dtype = api.BOOL if name in api.COMPARE or name in api.UNARY_BOOL else first.dtype
            return Tensor(first.shape, dtype, "op")
        return UNKNOWN

    def record_op(self, node, name, out, inputs, axis=None):
        if self.kernel is None or not self.recording:
            return
        vector = name in api.VECTOR_OPS
        matmul = name in api.MATMUL
        if not (vector or matmul):
            return
        result = out[0] if isinstance(out, tuple) and out else out
        fact = OpFact(
            node, name, result if isinstance(result, Tensor) else None, tuple(inputs), self.loop,
            self.vec_tile, self.vec_set.node if self.vec_set else None,
            self.cube_tile, self.cube_set.node if self.cube_set else None,
            vector, self.multiplier, axis,
        )
        self.kernel.ops.append(fact)
        self.loop.ops.append(fact)
        if vector and self.vec_set is not None:
            self.vec_set.uses.append(fact)
        if matmul and self.cube_set is not None:
            self.cube_set.uses.append(fact)

    # -- the op table's callbacks ---------------------------------------------------------------
    def emit(self, opcode, operands, attrs, shape=None, dtype=None, *, tile="", results=1, valid=None, base=None):
        shape = tuple(shape) if isinstance(shape, (list, tuple)) else None
        dtype = dtype if isinstance(dtype, DType) else ops.dtype_of(dtype)
        if not self.building:
            if shape is None and results == 0:
                return None
            if opcode == "assemble" or opcode == "store_scalar":
                return None
            out = [Tensor(shape, dtype, "view" if opcode in ("view", "reshape") and base is not None else "op",
                          base=base if opcode in ("view", "reshape") else None, valid=valid) for _ in range(results)]
            return out[0] if results == 1 else tuple(out)
        if opcode in ("assemble", "store_scalar"):
            self.builder.op(opcode, tuple(ops.operand(x) for x in operands),
                            {k: ops.attr_value(v) for k, v in attrs.items() if v is not None}, (), None, None,
                            self.span())
            return None
        if shape is None or dtype is None or any(d is None for d in shape):
            raise ops.OpError(f"pypto.{opcode}: the shape or dtype of its result is not known at build time")
        ttype = self.tensor_type(shape, dtype)
        tile_shape = None
        cube = None
        if tile == "vec":
            tile_shape = tuple(self.vec_tile) if isinstance(self.vec_tile, tuple) else None
        elif tile == "cube":
            cube = self.cube_tile if isinstance(self.cube_tile, tuple) else None
        names = self.builder.op(opcode, tuple(ops.operand(x) for x in operands),
                                {k: ops.attr_value(v) for k, v in attrs.items() if v is not None},
                                (ttype,) * results, tile_shape, cube, self.span())
        out = [Tensor(shape, dtype, "view" if opcode in ("view", "reshape") and base is not None else "op",
                      base=base if opcode in ("view", "reshape") else None, ref=ir.Value(n), valid=valid)
               for n in names]
        return out[0] if results == 1 else tuple(out)

    def tensor_type(self, shape, dtype) -> ir.TensorType:
        return ir.TensorType(tuple(ops.to_expr(d) for d in shape), dtype.ir)

    def span(self) -> Optional[ir.Span]:
        node = self.node
        if node is None or not hasattr(node, "lineno"):
            return None
        col, end_col = self.source.char_cols(node)
        return ir.Span(node.lineno, col, node.end_lineno or node.lineno, end_col)

    def scalar(self, expr: ir.Expr):
        if isinstance(expr, ir.Const):
            return expr.value
        return Sym(expr)

    def combine(self, name, a, b):
        ea, eb = ops.to_expr(a), ops.to_expr(b)
        if ea is None or eb is None:
            return self.sym_join(self.node, a, b)
        return self.make_sym(binexpr(name, ea, eb), self.node, a, b)

    def read_scalar(self, tensor: Tensor, items):
        node = self.node
        self.read(tensor, node)
        indices = frozenset().union(*[i.indices for i in items if isinstance(i, Sym)])
        for i in items:
            self.sym_used(i, "offset")
        exprs = tuple(ops.to_expr(k) for k in items)
        expr = ir.Read(tensor.name, exprs) if tensor.named and None not in exprs else None
        if expr is None and self.building:
            raise ops.OpError("a scalar read needs indices known to the control program")
        return Sym(expr, frozenset({"tensor_read"}), frozenset({id(node)}), indices, node=node, source=self.source)

    def wrote(self, tensor: Tensor):
        if self.building and tensor.named and tensor.ref.name in self.builder.param_names:
            self.builder.outputs.add(tensor.ref.name)

    def check_slice_stop(self, axis, k: slice, start, value: Tensor):
        """``out[a:b] = v``: pypto assembles at ``a`` whatever ``b`` says; warn when they disagree."""
        extent = value.shape[axis] if value.shape is not None and axis < len(value.shape) else None
        es, eb, ee = ops.to_expr(start), ops.to_expr(k.stop), ops.to_expr(extent)
        if None in (es, eb, ee):
            return
        if binexpr("-", eb, es) != ee:
            self.warnings.append((f"the slice stop on axis {axis} does not match the value's extent "
                                  f"{extent if not isinstance(extent, Sym) else extent.text}; pypto writes the "
                                  "whole value at the start and ignores the stop", self.node, self.source))

    # -- indexing and views ------------------------------------------------------------------
    def tensor_getitem(self, node, base: Tensor, key):
        items = key if isinstance(key, tuple) else (key,)
        sliced = any(isinstance(i, slice) or i is Ellipsis or i is None for i in items)
        element = all(isinstance(i, (int, Sym)) and not isinstance(i, bool) for i in items) and not sliced
        if not sliced and not element and not any(isinstance(i, Tensor) for i in items):
            # an element read at an index we cannot read: not a view
            self.read(base, node)
            if self.building:
                return self.problem("PTO105", "a scalar read needs indices known to the control program", node)
            return UNKNOWN
        if not element:
            extents = tuple(Sym(None, frozenset(), _reads_in(i.stop) - _reads_in(i.start))
                            for i in items if isinstance(i, slice))
            offsets = tuple(i.start if isinstance(i, slice) else i for i in items)
            self.sym_used(offsets, "offset")
            self._view_fact(node, extents, offsets, False, slicing=True)
        try:
            out = ops.getitem(self, base, key)
        except ops.OpError as exc:
            self.op_refused(exc, node)
            return UNKNOWN if element else Tensor(None, base.dtype, "view", base=base)
        if isinstance(out, Tensor) and out is not base and out.base is None:
            out.base = base
        if isinstance(out, Tensor) and out is not base and not element and self.kernel is not None:
            self.sliced.add(out.ident)
        return out

    def tensor_setitem(self, node, base: Tensor, key, value, stmt=None, method=False):
        value_node = getattr(stmt, "value", None)
        if isinstance(value, Tensor):
            self.read(value, value_node or node)
        elif isinstance(value, Sym):
            self.sym_used(value, "operand")
        self.write(base, node if not method else node.func)
        if self.kernel is not None and self.recording and isinstance(value, Tensor):
            self._move_fact(node, base, value, stmt, method)
        self.sym_used(key, "offset")
        if value is UNKNOWN:
            return self.problem("PTO105", "the value written is not known at build time", node)
        whole = ops.is_full_key(base, key) or base.origin == "placeholder" and (method or key == slice(None))
        stored = base.origin in ("param", "local")  # a tensor pypto stores into (named when building)
        if whole and not self.building and isinstance(value, Tensor) and stored:
            self._whole_write_shape(base, value, node)
        if self.building and not base.named and isinstance(value, Tensor) and whole:
            receiver = node.func.value if method else getattr(node, "value", None)
            if isinstance(receiver, ast.Name):
                return self.rebind_computed(receiver, base, value, node)
        saved, self.node = self.node, node  # the assemble is located at the target (``out[:]``)
        try:
            ops.setitem(self, base, key, value)
            if self.building and base.named and whole and isinstance(value, Tensor):
                receiver = node.func.value if method else getattr(node, "value", None)
                if isinstance(receiver, ast.Name):
                    self.rebind_moved(receiver, base, value)
        except ops.OpError as exc:
            self.op_refused(exc, node)
        finally:
            self.node = saved
        if not self.building and whole and not stored and isinstance(value, Tensor):
            # lint runs follow the build's rebind_computed: the name now holds ``value`` (its dtype
            # and shape), so a later assemble of it is checked with what pypto has there
            receiver = node.func.value if method else getattr(node, "value", None)
            if isinstance(receiver, ast.Name) and self.frame.env.get(receiver.id) is base:
                self.frame.env[receiver.id] = value
        return None

    def _move_fact(self, node, base: Tensor, value: Tensor, stmt, method: bool):
        """``t[:] = v`` (every index an empty slice) / ``t.move(v)``: a MoveFact (PTO016, PTO023)."""
        if method:
            value_node = node.args[0] if getattr(node, "args", None) else None
        else:
            key = node.slice
            items = key.elts if isinstance(key, ast.Tuple) else [key]
            if not items or not all(isinstance(k, ast.Slice) and k.lower is None and k.upper is None and k.step is None
                                    for k in items):
                return
            value_node = getattr(stmt, "value", None)
            if isinstance(stmt, ast.AugAssign):
                return
        root = value.root()
        kind = ""
        if root is not base.root():
            if value.origin == "param":
                kind = "input"
            elif root.origin == "param" and _plain_slices(value, self.sliced):
                kind = "slice"
            elif value.origin == "op" and isinstance(value_node, ast.Name):
                kind = "temp"
        self.kernel.moves.append(MoveFact(node, stmt, base, value, value_node, method, kind, self.next_order(),
                                          self.pypto_loops(), self.frame.context))
        self.moved.add(base.ident)
        self.moved.add(base.root().ident)
        if root is not base.root():  # pypto's Move hands the value over: its later reads are UseFacts (PTO023)
            self.moved.add(value.ident)

    def _whole_write_shape(self, base: Tensor, value: Tensor, node) -> None:
        """Lint runs: ``out[:] = v`` / ``out.move(v)`` with two static shapes of one rank that differ
        (pypto 0.2.0 stores it without a check: a (32, 64) result into a (32, 32) output)."""
        a, b = base.shape, value.shape
        if a is None or b is None or len(a) != len(b):
            return
        ca, cb = [ops.const_of(d) for d in a], [ops.const_of(d) for d in b]
        if None in ca or None in cb or ca == cb:
            return
        self.lint_refusal("shape", f"writing a value of shape {ops.shape_text(b)} into {ops._label(base)} "
                                   f"{ops.shape_text(a)}: the shapes differ (pypto 0.2.0 stores it without a check)",
                          node)

    def rebind_moved(self, name_node: ast.Name, base: Tensor, value: Tensor):
        """``t[:] = v`` / ``t.move(v)`` on a tensor of dynamic shape with ``v`` of a static one:
        pypto's move makes the name ``t`` hold ``v``, static shape and all (a later op on ``t`` is
        not one on a dynamic tensor).  The data was assembled into ``@t`` at the origin, so from
        here ``t`` is the static view of that region."""
        static = value.shape is not None and all(isinstance(d, int) for d in value.shape)
        if not static or base.shape is None or len(base.shape) != len(value.shape) \
                or all(isinstance(d, int) for d in base.shape) or self.frame.env.get(name_node.id) is not base:
            return
        self.frame.env[name_node.id] = ops.make_view(self, base, list(value.shape), [0] * len(value.shape))

    def rebind_computed(self, name_node: ast.Name, base: Tensor, value: Tensor, node):
        """``t.move(v)`` / ``t[:] = v`` on a computed tensor (a view, an op's result): pypto binds
        the tensor to ``v``'s producer, so from here the name ``t`` holds ``v`` (the tensor it was
        viewed from is not written); its shape and dtype become ``v``'s, as pypto's move does."""
        if value.named and value.shape is not None:  # a parameter: the copy pypto makes
            saved, self.node = self.node, node
            try:
                value = ops.make_view(self, value, list(value.shape), [0] * len(value.shape))
            finally:
                self.node = saved
        self.frame.env[name_node.id] = value
        return None

    def view(self, node, args, kwargs):
        base = args[0] if args else UNKNOWN
        shape = args[1] if len(args) > 1 else kwargs.get("shape")
        offsets = args[2] if len(args) > 2 else kwargs.get("offsets")
        has_valid = "valid_shape" in kwargs
        if has_valid:
            self.sym_used(kwargs["valid_shape"], "valid_shape")
        if offsets is not None:
            self.sym_used(offsets, "offset")
        self._view_fact(node, shape, offsets, has_valid, slicing=False, valid_shape=kwargs.get("valid_shape"))
        if not isinstance(base, Tensor):
            return self.problem("PTO106", "pypto.view needs a tensor", node)
        self.read(base, node)
        if kwargs.get("dtype") is not None and not self.building:
            return Tensor(base.shape, kwargs["dtype"] if isinstance(kwargs["dtype"], DType) else None, "view", base=base)
        try:
            out = ops.call(self, "view", (base,) + tuple(args[1:]), kwargs)
        except ops.OpError as exc:
            return self._op_failed(exc, "view", [base], node)
        if isinstance(out, Tensor):
            out.origin, out.base = "view", base
        return out

    def _view_fact(self, node, shape, offsets, has_valid, slicing, valid_shape=None):
        if self.kernel is None or not self.recording:
            return
        shape_reads = _reads_in(shape)
        index_ids = _indices_in(offsets)
        live = None
        for sym, read_node in reversed(self.live_reads):
            if sym.indices & index_ids:
                live = (sym, read_node)
                break
        fact = ViewFact(node, has_valid, bool(shape_reads), live is not None,
                        live[1] if live else None, slicing, self.loop)
        fact.read_ids = frozenset(live[0].reads) if live else frozenset()
        fact.shape_read_ids = shape_reads
        fact.offset_read_ids = _reads_in(offsets)
        fact.valid_read_ids = _reads_in(valid_shape)
        fact.layout = _layout(shape, offsets)
        direct_ids = _indices_in(offsets, direct=True)  # loop indices not reached through a tensor read
        loop = self.loop
        while loop is not None:
            if id(loop) in direct_ids:
                fact.tail_read_ids |= loop.tail_reads
            elif id(loop) in index_ids:
                fact.indirect_tail_read_ids |= loop.tail_reads
            loop = loop.parent
        self.kernel.views.append(fact)

    def assemble(self, node, args, kwargs, receiver=False):
        """pypto.assemble(part, offsets, out) / pypto.assemble([(part, off), ...], out)."""
        target = None
        parts = []
        if args and isinstance(args[0], (list, tuple)) and len(args) >= 2 and not receiver and args[0] and \
                isinstance(args[0][0], (list, tuple)):
            target = args[1]
            for item in args[0]:
                if isinstance(item, (list, tuple)) and item:
                    parts.append(item[0])
        else:
            parts = args[:1]
            target = args[2] if len(args) > 2 else kwargs.get("out")
            if len(args) > 1:
                self.sym_used(args[1], "offset")
        arg_nodes = list(node.args)
        for part in parts:
            if isinstance(part, Tensor):
                self.read(part, arg_nodes[0] if arg_nodes else node)
        if isinstance(target, Tensor):
            self.write(target, node)
            if not receiver and len(node.args) >= 2:
                last = node.args[-1]
                if isinstance(last, ast.Name):
                    self.eval_no_read(last)
        else:
            return self.problem("PTO106", "pypto.assemble needs the tensor to write into", node)
        try:
            ops.call(self, "assemble", tuple(args), kwargs)
        except ops.OpError as exc:
            self.op_refused(exc, node)
        return None

    def eval_no_read(self, node):
        """Evaluate a write target's base: a name load there is not a read of the parameter."""
        if isinstance(node, ast.Name):
            if self.kernel_frame() and self.frame.bindings.get(node.id) == "param":
                self.kernel.outputs.add(node.id)
            return self.lookup(node.id, node)
        return self.eval(node)

    # -- tensor accesses (lint) ----------------------------------------------------------------
    def read(self, tensor: Tensor, node) -> None:
        if self.kernel is None or not self.recording:
            return
        root = tensor.root()
        if self.moved and (tensor.ident in self.moved or root.ident in self.moved):
            self.kernel.moved_uses.append(UseFact(node, tensor, self.next_order(), self.pypto_loops()))
        if root.origin == "local":
            self.kernel.accesses.append(AccessFact(node, root, False, self.next_order(), self.pypto_loops(),
                                                   tuple(self.call_nodes)))

    def write(self, tensor: Tensor, node) -> None:
        if self.kernel is None:
            return
        root = tensor.root()
        if root.origin == "local":
            if self.recording:
                self.kernel.accesses.append(AccessFact(node, root, True, self.next_order(), self.pypto_loops()))
        elif root.origin == "param":
            for name, value in self.kernel.params.items():
                if value is root:
                    self.kernel.outputs.add(name)

    def sym_used(self, value, how):
        if isinstance(value, Sym):
            for read in value.reads:
                self.read_uses.setdefault(read, set()).add(how)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self.sym_used(item, how)
        elif isinstance(value, slice):
            self.sym_used(value.start, how)
            self.sym_used(value.stop, how)

    # =========================================================================================
    # statements
    # =========================================================================================
    def spent(self) -> bool:
        """Whether a lint run has used its LINT_STEPS (then nothing more is inlined or unrolled)."""
        return not self.building and self.steps > LINT_STEPS

    def exec_block(self, stmts) -> None:
        for stmt in stmts:
            self.steps += 1
            if self.building and self.steps > MAX_STEPS:
                self.problem("PTO105", f"building the kernel executes more than {MAX_STEPS} statements (helpers "
                                       "inlined, Python loops unrolled)", stmt)
            method = getattr(self, "exec_" + type(stmt).__name__, None)
            saved, self.node = self.node, stmt
            try:
                if method is not None:
                    method(stmt)
                else:
                    self.unsupported_statement(stmt)
            finally:
                self.node = saved

    def unsupported_statement(self, stmt):
        if self.building and self.in_kernel():
            self.problem("PTO100", f"`{type(stmt).__name__}` statements are not supported in a kernel", stmt)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.eval(child)

    def parsed_context(self) -> bool:
        """In a body pypto parses (jit / frontend.function), not one Python runs (helper, legacy)."""
        return self.frame.context in ("jit", "function")

    def exec_Expr(self, stmt):
        self.eval(stmt.value)

    def exec_Pass(self, stmt):
        pass

    def exec_Assign(self, stmt):
        value = self.eval(stmt.value)
        simple = len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
        for target in stmt.targets:
            self.assign(target, value, stmt, simple=simple)

    def exec_AnnAssign(self, stmt):
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value), stmt)

    def assign(self, target, value, stmt, simple=False):
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value, target, stmt, simple=simple)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, value, stmt)
        elif isinstance(target, ast.Subscript):
            self.store_subscript(target, value, stmt)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, stmt)
        elif isinstance(target, ast.Attribute):
            base = self.eval(target.value)
            if isinstance(base, Instance):
                if isinstance(value, Tensor):
                    self.read(value, getattr(stmt, "value", None) or target)
                base.fields[target.attr] = value  # ``self.tile = 128``
            elif isinstance(base, ClassVal):
                base.attrs[target.attr] = value

    def unpack(self, target, value, stmt):
        elts = target.elts
        items = None
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif is_static(value) and not isinstance(value, (int, float, bool, type(None))):
            items = pyvalues._materialise(value)
        starred = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
        if items is not None and starred and len(items) >= len(elts) - 1:
            i = starred[0]
            tail = len(elts) - i - 1
            items = items[:i] + [items[i:len(items) - tail]] + items[len(items) - tail:]
        if items is None or len(items) != len(elts):
            if self.building and value is not UNKNOWN and self.in_kernel():
                self.problem("PTO105", "this value cannot be unpacked at build time", stmt)
            items = [UNKNOWN] * len(elts)
        for elt, item in zip(elts, items):
            if isinstance(elt, ast.Starred):
                self.assign(elt.value, item, stmt)
            else:
                self.assign(elt, item, stmt)

    def store_subscript(self, target: ast.Subscript, value, stmt):
        base = self.eval_no_read(target.value)
        key = self.eval(target.slice)
        if isinstance(base, Tensor):
            return self.tensor_setitem(target, base, key, value, stmt)
        if isinstance(value, Tensor):
            self.read(value, getattr(stmt, "value", None) or target)
        if isinstance(base, list) and isinstance(key, int):
            try:
                base[key] = value
            except IndexError:
                pass
        elif isinstance(base, dict) and is_static(key):
            try:
                base[key] = value
            except TypeError:
                pass
        self.sym_used(key, "offset")
        return None

    def exec_AugAssign(self, stmt):
        target = stmt.target
        op = type(stmt.op).__name__
        if isinstance(target, ast.Name):
            current = self.eval(target)
            rhs = self.eval(stmt.value)
            value = self.binop(stmt, op, current, rhs, target, stmt.value)
            if isinstance(current, list) and op == "Add" and isinstance(rhs, (list, tuple)):
                current.extend(rhs)  # list += ...: in place, as Python
                value = current
            self.bind_name(target.id, value, target, stmt, aug=True)
        elif isinstance(target, ast.Subscript):
            current = self.eval(target)
            rhs = self.eval(stmt.value)
            value = self.binop(stmt, op, current, rhs, target, stmt.value)
            self.store_subscript(target, value, stmt)
        elif isinstance(target, ast.Attribute):
            current = self.eval(target)
            rhs = self.eval(stmt.value)
            self.assign(target, self.binop(stmt, op, current, rhs, target, stmt.value), stmt)
        else:
            self.eval(stmt.value)

    def exec_Return(self, stmt):
        if (self.building and stmt.value is not None and self.frame.context in ("jit", "function")
                and not self.frame.allows_return):
            self.problem("PTO100", "`return` in a pypto kernel: pypto refuses it (\"Return statements are not "
                                   "allowed\"); write the result into an output parameter (`out[:] = ...` or "
                                   "`out.move(...)`), or decorate with @pypto_ast.jit to return it", stmt)
        value = self.eval(stmt.value) if stmt.value is not None else None
        if self.frame.context in ("jit", "legacy") and self.building and stmt.value is not None:
            self.kernel_return(stmt, value)
        self.frame.returns.append(value)
        raise _Return(value)

    def exec_Delete(self, stmt):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                self.frame.env.pop(target.id, None)

    def exec_FunctionDef(self, stmt):
        if self.frame.context == "class":  # a method: the class body's names are not its closure
            func = FuncRef(stmt, stmt.name, self.frame.scope, self.frame.closure, self.source, self.frame.owner)
            value: Any = func
            for deco in stmt.decorator_list:
                target = self.eval(deco)
                kind = getattr(target, "qualname", "")
                if kind in ("builtins.property", "functools.cached_property"):
                    value = Descriptor("property", func)
                elif kind in ("builtins.staticmethod", "builtins.classmethod"):
                    value = Descriptor(kind.split(".")[1], func)
                elif not (isinstance(target, ApiRef) and target.qualname.startswith(("functools.", "typing.", "abc."))):
                    value = UNKNOWN  # ``@x.setter``, a decorator of the analysed code
            if value is UNKNOWN and stmt.name in self.frame.env:
                return  # a property's setter: the getter stays
            self.frame.env[stmt.name] = value
            return
        closure = self.frame if self.frame.context != "module" else None
        self.frame.env[stmt.name] = FuncRef(stmt, stmt.name, self.frame.scope, closure, self.source)

    exec_AsyncFunctionDef = exec_FunctionDef

    def exec_ClassDef(self, stmt):
        """A ``class`` statement: its body run in a class frame (names read through the enclosing
        function, as Python's class scope does), its bindings the class attributes."""
        bases = tuple(self.eval(b) for b in stmt.bases)
        flagged = False
        for deco in stmt.decorator_list:
            target = self.eval(deco.func if isinstance(deco, ast.Call) else deco)
            if isinstance(target, ApiRef) and target.qualname in ("dataclasses.dataclass", "pydantic.dataclasses.dataclass"):
                flagged = True
            elif target is not UNKNOWN and not isinstance(target, ApiRef):
                self.frame.env[stmt.name] = UNKNOWN  # a decorator of the analysed code: it may return anything
                return
        closure = self.frame if self.frame.context not in ("module", "class") else self.frame.closure
        frame = Frame(None, "class", self.frame.scope, self.source, closure=closure)
        annotated = tuple(s.target.id for s in stmt.body if isinstance(s, ast.AnnAssign)
                          and isinstance(s.target, ast.Name) and s.simple)
        qual = stmt.name if self.frame.context == "module" else f"{self.frame.func.name if self.frame.func else ''}.{stmt.name}"
        cls = ClassVal(stmt, qual.lstrip("."), frame.env, bases, flagged, annotated)
        frame.owner = cls
        self.frames.append(frame)
        try:
            self.exec_block(stmt.body)
        except (_Return, _Break, _Continue):
            pass
        finally:
            self.frames.pop()
        for name, value in list(frame.env.items()):
            if isinstance(value, FuncRef) and value.owner is None:
                value.owner = cls
            elif isinstance(value, Descriptor) and value.func.owner is None:
                value.func.owner = cls
        self.frame.env[stmt.name] = cls

    def exec_Import(self, stmt):
        for alias in stmt.names:
            top = alias.asname or alias.name.split(".")[0]
            self.frame.env[top] = self.frame.scope.import_value(alias.name if alias.asname else top)

    def exec_ImportFrom(self, stmt):
        for alias in stmt.names:
            if alias.name != "*":
                self.frame.env[alias.asname or alias.name] = self.frame.scope.import_from(stmt, alias.name)

    def exec_Global(self, stmt):
        if self.building and self.in_kernel():
            self.problem("PTO100", "`global` is not supported in a kernel", stmt)

    exec_Nonlocal = exec_Global

    def exec_Assert(self, stmt):
        self.eval(stmt.test)

    def exec_Raise(self, stmt):
        if self.building and self.in_kernel():
            self.problem("PTO100", "`raise` in a kernel: pypto would stop building here", stmt)
        raise _Return(UNKNOWN)

    def exec_Break(self, stmt):
        if self.loop_vars and self.building:
            self.problem("PTO100", "`break` inside a pypto loop is not supported: a pypto loop body always runs to "
                                   "its end", stmt)
        if self.parsed_context() and self.building:
            self.problem("PTO100", "`break` is not supported in a kernel body (pypto 0.2.0: Break is not "
                                   "supported by the PTO parser yet)", stmt)
        raise _Break()

    def exec_Continue(self, stmt):
        if self.loop_vars and self.building:
            self.problem("PTO100", "`continue` inside a pypto loop is not supported: a pypto loop body always runs "
                                   "to its end", stmt)
        if self.parsed_context() and self.building:
            self.problem("PTO100", "`continue` is not supported in a kernel body", stmt)
        raise _Continue()

    def exec_Try(self, stmt):
        if self.parsed_context() and self.building:
            self.problem("PTO100", "`try` is not supported in a kernel body (pypto 0.2.0: Try is not supported "
                                   "by the PTO parser yet)", stmt)
        self.exec_block(stmt.body)
        self.exec_block(stmt.orelse)
        self.exec_block(stmt.finalbody)

    exec_TryStar = exec_Try

    def exec_While(self, stmt):
        if self.parsed_context() and self.building:
            self.problem("PTO100", "`while` is not supported in a kernel body (pypto 0.2.0: While is not supported "
                                   "by the PTO parser yet); use pypto.loop", stmt)
        for _ in range(MAX_WHILE):
            test = self.eval(stmt.test)
            if not is_static(test) or self.spent():
                if self.building and self.in_kernel():
                    self.problem("PTO105", "a `while` condition that is not known at build time", stmt)
                self.exec_block(stmt.body)
                return
            if not test:
                self.exec_block(stmt.orelse)
                return
            try:
                self.exec_block(stmt.body)
            except _Break:
                return
            except _Continue:
                continue
        if self.building:
            self.problem("PTO105", f"a `while` loop ran more than {MAX_WHILE} times at build time", stmt)

    def exec_With(self, stmt):
        saved = None
        for item in stmt.items:
            value = self.eval(item.context_expr)
            if isinstance(value, OptionsVal):
                saved = (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set)
                self._enter_options(value)
            elif self.parsed_context() and self.building:
                self.problem("PTO100", "`with` is not supported in a kernel body (pypto 0.2.0: With is not "
                                       "supported by the PTO parser yet)", stmt)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, UNKNOWN, None)
        self.exec_block(stmt.body)
        if saved is not None:
            self.vec_tile, self.vec_set, self.cube_tile, self.cube_set = saved

    def exec_Match(self, stmt):
        self.unsupported_statement(stmt)

    # -- if ---------------------------------------------------------------------------------
    def exec_If(self, stmt):
        test = self.eval(stmt.test)
        self._tested(stmt.test, "if")
        if isinstance(test, BranchVal) and self.parsed_context():
            self.tensor_test(stmt, "explicit-cond")
        if isinstance(test, BranchVal):
            inner = test.test
            if is_static(inner):
                self.exec_block(stmt.body if inner else stmt.orelse)
                return
            kind = "cond"
        else:
            inner = test
            if is_static(test):
                self.exec_block(stmt.body if test else stmt.orelse)
                return
            kind = "if"
        symbolic = isinstance(inner, Sym)
        flag = symbolic and inner.kinds == frozenset({"loop_flag"})
        if isinstance(inner, Tensor):
            self.tensor_test(stmt.test.args[0] if kind == "cond" and getattr(stmt.test, "args", None) else stmt.test,
                             kind)
        if symbolic and self.recording and self.kernel is not None:
            self._branch_fact(stmt, kind, flag)
        if self.building:
            if isinstance(inner, Tensor):
                self.problem("PTO105", "a tensor has no truth value: a Python `if` needs a scalar; compare scalars "
                                       "read from the tensor, or use pypto.where for element-wise selection", stmt.test)
            if not symbolic:
                self.problem("PTO105", "the condition of this `if` is not known at build time", stmt.test)
            if inner.expr is None:
                self.problem("PTO105", "the control program cannot compute this condition", stmt.test)
            self.build_branch(stmt, inner)
            return
        self._two_ways(lambda: self.exec_block(stmt.body), lambda: self.exec_block(stmt.orelse),
                       symbolic and not flag)

    def _tested(self, test, how: str):
        """``if a and t:``: the BoolOp's last operand ``t`` is a tensor the ``if`` tests."""
        if isinstance(test, ast.BoolOp) and id(test) in self.tensor_last:
            self.tensor_test(self.tensor_last[id(test)], how)

    def tensor_test(self, node, how: str):
        """A tensor used as a truth value (``if a > b:``, ``a and b``, ``not t``): PTO022."""
        if self.kernel is not None and self.recording:
            self.kernel.tensor_tests.append((node, how, self.frame.context))

    def _branch_fact(self, node, kind, flag):
        fact = BranchFact(node, kind, True, flag, self.loop, self.frame.context)
        self.kernel.branches.append(fact)
        self.loop.branches.append(fact)
        if flag:
            self.loop.flag_branches += 1

    def _two_ways(self, first, second, counts_paths: bool):
        """Run both sides of a branch from the same state, then merge what they bound (lint)."""
        env_before = dict(self.frame.env)
        tiles_before = (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set)
        paths_before = self.paths
        self.paths = 1
        self._run_arm(first)
        env_a, tiles_a, paths_a = dict(self.frame.env), (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set), self.paths
        _replace(self.frame.env, env_before)  # in place: a module's env is its scope's names
        self.vec_tile, self.vec_set, self.cube_tile, self.cube_set = tiles_before
        self.paths = 1
        self._run_arm(second)
        env_b, paths_b = dict(self.frame.env), self.paths
        merged = {}
        for name in set(env_a) | set(env_b):
            if name in env_a and name in env_b:
                merged[name] = merge_values(env_a[name], env_b[name])
            else:
                merged[name] = env_a.get(name, env_b.get(name))
        _replace(self.frame.env, merged)
        if tiles_a[0] != self.vec_tile:
            self.vec_tile, self.vec_set = UNKNOWN, None
        if tiles_a[2] != self.cube_tile:
            self.cube_tile, self.cube_set = UNKNOWN, None
        if counts_paths:
            self.paths = paths_before * (paths_a + paths_b)
        else:
            self.paths = paths_before * max(paths_a, paths_b)

    def _run_arm(self, run):
        try:
            run()
        except (_Break, _Continue):
            pass

    def build_branch(self, stmt, cond: Sym):
        """Both arms of a symbolic ``if`` into one ``ir.Branch``; names the arms bind to different
        tensors continue through a workspace both arms write (docs/design.md §5)."""
        env_before = dict(self.frame.env)
        tiles_before = (self.vec_tile, self.vec_set, self.cube_tile, self.cube_set)
        arms = []
        counter_start, ends = self.builder.counter, []
        for body in (stmt.body, stmt.orelse):
            _replace(self.frame.env, env_before)
            self.vec_tile, self.vec_set, self.cube_tile, self.cube_set = tiles_before
            self.builder.counter = counter_start  # each arm numbers its values from the same point
            with self.builder.region() as region:
                self.exec_block(body)
                env = dict(self.frame.env)
            arms.append((region, env))
            ends.append(self.builder.counter)
        self.builder.counter = max(ends)
        (then_region, env_a), (else_region, env_b) = arms
        merged = {}
        workspaces = []
        used = self.read_outside(stmt)
        for name in list(env_a) + [n for n in env_b if n not in env_a]:
            a, b = env_a.get(name, _MISSING), env_b.get(name, _MISSING)
            if a is b:
                merged[name] = a
                continue
            if name not in used:
                continue  # never read outside the arms: nothing continues past the branch
            if a is _MISSING or b is _MISSING:
                continue  # bound in one arm only: unbound after the branch
            if isinstance(a, Tensor) and isinstance(b, Tensor):
                workspaces.append((name, a, b))
                continue
            if is_static(a) and is_static(b) and _same_static(a, b):
                merged[name] = a
                continue
            merged[name] = Conflict(name, stmt)
        for name, a, b in workspaces:
            if a.shape is None or b.shape is None or len(a.shape) != len(b.shape) or a.dtype != b.dtype or \
                    any(ops.same_dim(x, y) is not True for x, y in zip(a.shape, b.shape)):
                merged[name] = Conflict(name, stmt)
                continue
            ttype = self.tensor_type(a.shape, a.dtype)
            ws = Tensor(a.shape, a.dtype, "local", f"{name}_phi")
            ws.ref = ir.TensorRef(self.builder.local(f"{name}_phi", ttype))
            ws.name = ws.ref.name
            for region, value in ((then_region, a), (else_region, b)):
                with self.builder.region() as tail:
                    saved, self.node = self.node, stmt
                    try:
                        ops.write(self, value, ws, [0] * len(a.shape))
                    finally:
                        self.node = saved
                region.extend(tail)
            merged[name] = ws
        _replace(self.frame.env, merged)
        self.vec_tile, self.vec_set, self.cube_tile, self.cube_set = tiles_before
        test = stmt.test
        col, end_col = self.source.char_cols(test)
        from .builder import group

        self.builder.add(ir.Branch(cond.expr, group(then_region), group(else_region),
                                   ir.Span(test.lineno, col, test.end_lineno or test.lineno, end_col)))

    def read_outside(self, stmt) -> set:
        """Names the code around ``stmt`` reads (anywhere in its function outside ``stmt``): the
        only names whose values may continue past a branch.  Conservative, and cached."""
        func = self.frame.func
        key = (id(func), id(stmt))
        cache = self.__dict__.setdefault("_reads_cache", {})
        if key not in cache:
            inside = {id(n) for n in ast.walk(stmt)}
            root = func if func is not None else self.source.tree
            cache[key] = {n.id for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                          and id(n) not in inside}
        return cache[key]

    def kernel_return(self, stmt, value):
        values = value if isinstance(value, tuple) else (value,)
        if self.loop_vars:
            self.problem("PTO100", "`return` inside a pypto loop is not supported: a pypto loop body always runs "
                                   "to its end", stmt)
        refs = []
        for v in values:
            if not isinstance(v, Tensor) or v.ref is None:
                self.problem("PTO106", "a kernel may only return tensors", stmt)
            if v.named:
                self.problem("PTO106", f"returning the parameter @{v.ref.name} itself; return a computed tensor", stmt)
            refs.append(v.ref)
        self.returned = tuple(refs)

    # -- for ----------------------------------------------------------------------------------
    def exec_For(self, stmt):
        iterable = self.eval(stmt.iter)
        if isinstance(iterable, LoopIter):
            if self.kernel is None:
                return  # host code: nothing to build
            self.pypto_loop(stmt, iterable)
            return
        items = None
        if isinstance(iterable, (list, tuple)):
            items = list(iterable)
        elif is_static(iterable):
            items = pyvalues._materialise(iterable)
        if items is None and isinstance(iterable, Tensor):
            if self.building:
                self.problem("PTO105", "iterating over a tensor is not supported in a kernel; use pypto.loop", stmt.iter)
        elif items is None and self.building and self.in_kernel():
            what = "range over a symbolic value" if isinstance(iterable, RangeVal) else "this value"
            self.problem("PTO105", f"a Python `for` unrolls at build time and cannot iterate {what}; use pypto.loop",
                         stmt.iter)
        limit = LINT_UNROLL if not self.building else MAX_STATIC_ITERATIONS
        if items is not None and len(items) <= limit and self.iterations + len(items) <= MAX_STATIC_ITERATIONS \
                and not self.spent():
            self.iterations += len(items)
            for item in items:
                self.assign(stmt.target, item, None)
                try:
                    self.exec_block(stmt.body)
                except _Continue:
                    continue
                except _Break:
                    return
            self.exec_block(stmt.orelse)
            return
        if self.building and items is not None:
            self.problem("PTO105", f"a Python `for` over {len(items)} items unrolls too far at build time", stmt.iter)
        count = len(items) if items is not None else 1
        saved = self.multiplier
        first = items[0] if items else (iterable.start if isinstance(iterable, RangeVal) and
                                         isinstance(iterable.start, int) else _ABSENT)
        if first is not _ABSENT and self.kernel is not None and not self.spent():
            # the loop unrolls at build time: its first iteration runs before the others and
            # may produce what they read (``if i == 0: acc = x`` ... ``else: acc = acc + x``)
            self.assign(stmt.target, first, None)
            try:
                self.exec_block(stmt.body)
            except _Continue:
                pass
            except _Break:
                return
            count = max(count - 1, 1)
        self.assign(stmt.target, UNKNOWN, None)
        self.multiplier *= max(count, 1)
        try:
            self.exec_block(stmt.body)
        except (_Break, _Continue):
            pass
        self.multiplier = saved
        self.exec_block(stmt.orelse)

    def pypto_loop(self, stmt: ast.For, it: LoopIter):
        args = list(it.args)
        kwv = dict(it.kwargs)
        for value in args + list(kwv.values()):
            # a count of whole blocks applies the value; a rounded-up count leaves a partial tail
            self.sym_used(value, "extent" if _is_rounded_up(value) else "trip")
        start, stop, step = 0, UNKNOWN, 1
        if len(args) == 1:
            stop = args[0]
        elif len(args) >= 2:
            start, stop = args[0], args[1]
            if len(args) >= 3:
                step = args[2]
        unroll: tuple = ()
        unroll_known = True
        if "unroll_list" in kwv:
            ul = kwv["unroll_list"]
            if isinstance(ul, (list, tuple)) and all(int_value(v) is not None for v in ul):
                unroll = tuple(int_value(v) for v in ul)
            else:
                unroll_known = False
        factors = unroll
        if it.kind == "loop_unroll":
            factors = tuple(sorted(set(unroll) | {1}, reverse=True))
        idx = kwv.get("idx_name")
        idx_name = idx if isinstance(idx, str) else None
        a, b, s = int_value(start), int_value(stop), int_value(step)
        trip = pyvalues.range_length(a, b, s) if None not in (a, b, s) and s != 0 else None
        submit_flag = kwv.get("submit_before_loop") is True
        fact = None
        if self.recording:
            fact = LoopFact(
                stmt, it.kind, parent=self.loop, function=self.frame.func, unroll=factors,
                unroll_known=unroll_known, idx_name=idx_name, targets=tuple(_target_names(stmt.target)),
                trip=trip, submit_before_loop=submit_flag,
            )
            fact.is_loop1 = (
                it.kind == "loop" and (a, b, s) == (0, 1, 1) and not unroll and unroll_known and not submit_flag
            )
            if _is_rounded_up(stop):
                fact.tail_reads = stop.reads
            self.kernel.loops.append(fact)
            self.loop.children.append(fact)
        self.loop_counter += 1
        var = idx_name or f"loop_idx_{self.loop_counter}"
        if self.building:
            self.build_loop(stmt, it, fact, var, start, stop, step, unroll, submit_flag, kwv.get("name"))
            return
        index = Sym(ir.Var(var), frozenset({"loop_index"}), frozenset(), frozenset({id(fact)}),
                    loop=LoopContext(var, start, stop, step), text=idx_name or _first_name(stmt.target) or "idx")
        if it.kind == "loop_unroll" and isinstance(stmt.target, (ast.Tuple, ast.List)) and len(stmt.target.elts) == 2:
            self.assign(stmt.target.elts[0], index, None)
            self.assign(stmt.target.elts[1], UNKNOWN, None)  # the factor: a build-time int per trace
        else:
            self.assign(stmt.target, index, None)
        saved = (self.loop, self.vec_tile, self.vec_set, self.cube_tile, self.cube_set,
                 self.multiplier, self.paths, len(self.live_reads))
        self.loop = fact
        self.paths = 1
        if it.kind == "loop" and unroll:
            self.multiplier = max(unroll)  # one compute block per traced copy
        else:
            self.multiplier = 1
        self.loop_vars.append(var)
        try:
            self.exec_block(stmt.body)
        except (_Break, _Continue):
            pass
        finally:
            self.loop_vars.pop()
        fact.body_paths = self.paths
        vec_after, cube_after = self.vec_tile, self.cube_tile
        (self.loop, self.vec_tile, self.vec_set, self.cube_tile, self.cube_set,
         self.multiplier, self.paths, n_live) = saved
        del self.live_reads[n_live:]
        if vec_after != self.vec_tile:
            self.vec_tile, self.vec_set = UNKNOWN, None
        if cube_after != self.cube_tile:
            self.cube_tile, self.cube_set = UNKNOWN, None

    def build_loop(self, stmt, it: LoopIter, fact, var, start, stop, step, unroll, submit, name):
        """pypto's expansion of a loop into IR: one ir.Loop per unroll factor, the body evaluated
        once per copy (``pypto.loop``) or once per factor (``loop_unroll``)."""
        node = it.call
        step_c = ops.const_of(step)
        if step_c is None or step_c == 0 or not isinstance(step_c, int):
            self.problem("PTO105", f"pypto.{it.kind}: the step must be a non-zero build-time int", node)
        if var in self.loop_vars:
            self.problem("PTO106", f"nested loops reuse idx_name {var!r} (pypto 0.2.0 logs F21007 and segfaults); "
                                   "give each nested loop its own idx_name", node)
        for bound in (start, stop):
            if ops.to_expr(bound) is None:
                self.problem("PTO105", f"pypto.{it.kind}: a bound that is not known to the control program", node)
        for what, value in (("start", start), ("stop", stop), ("step", step)):
            value = ops.const_of(value)
            if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
                self.problem("PTO106", f"pypto.{it.kind}: the {what} {format_count(value)} does not fit in "
                                       "int64, the type of pypto's loop bounds", node)
        name = name if isinstance(name, str) and name else f"loop_{self.loop_counter}"
        if it.kind == "loop_unroll":
            factors = sorted(set(unroll or ()) | {1}, reverse=True)
        else:
            factors = sorted(set(unroll), reverse=True) if unroll else [1]
        if any(not isinstance(k, int) or k < 1 for k in factors):
            self.problem("PTO106", f"unroll_list must hold positive ints, got {list(unroll)!r}", node)
        copies = len(factors) if it.kind == "loop_unroll" else sum(factors)
        if self.iterations + copies > MAX_STATIC_ITERATIONS:  # each copy of the body is traced
            self.problem("PTO106", f"unroll_list {list(unroll)!r} copies the loop body {copies} times at build time, "
                                   f"more than the {MAX_STATIC_ITERATIONS} pypto-ast traces", node)
        self.iterations += copies
        ctx = LoopContext(var, start, stop, step)
        self.carry_moved(stmt)
        col, end_col = self.source.char_cols(node)
        span = ir.Span(node.lineno, col, node.end_lineno or node.lineno, end_col)
        cur = ops.to_expr(start)
        stop_e = ops.to_expr(stop)
        first = True
        for i, k in enumerate(factors):
            stride = k * step_c
            if i < len(factors) - 1:
                count = binexpr("//", binexpr("-", stop_e, cur), ir.Const(stride))
                seg_stop = binexpr("+", cur, binexpr("*", count, ir.Const(stride)))
            else:
                seg_stop = stop_e
            if isinstance(cur, ir.Const) and isinstance(seg_stop, ir.Const) and (
                    (step_c > 0 and cur.value >= seg_stop.value) or (step_c < 0 and cur.value <= seg_stop.value)):
                cur = seg_stop
                continue
            body = self.loop_body(stmt, it, fact, ctx, k, step_c, first)
            first = False
            self.builder.add(ir.Loop(var, cur, seg_stop, ir.Const(stride), tuple(body), name,
                                     "loop_unroll" if it.kind == "loop_unroll" else "loop", k, bool(submit), span))
            cur = seg_stop

    def carry_moved(self, stmt):
        """pypto's move (``t[:] = v``, ``t.move(v)``) writes the tensor object, the slot its
        loops carry: inside a loop body, on a computed tensor bound before the loop, the next
        iteration and the code after the loop read what the last move put there.  Such a name
        continues as a workspace local ``{name}_carry`` holding its value, so the body's moves
        write it in place (docs/design.md, loop-carried moves)."""
        for name in _moved_names(stmt.body):
            value = self.frame.env.get(name)
            if not isinstance(value, Tensor) or value.named or value.shape is None or value.dtype is None \
                    or any(not isinstance(d, int) or isinstance(d, bool) for d in value.shape):
                continue
            ttype = self.tensor_type(value.shape, value.dtype)
            ws = Tensor(value.shape, value.dtype, "local", f"{name}_carry")
            ws.ref = ir.TensorRef(self.builder.local(f"{name}_carry", ttype))
            ws.name = ws.ref.name
            saved, self.node = self.node, stmt
            try:
                ops.write(self, value, ws, [0] * len(value.shape))
            except ops.OpError as exc:
                self.problem("PTO106", str(exc), stmt)
                continue
            finally:
                self.node = saved
            self.frame.env[name] = ws

    def loop_body(self, stmt, it, fact, ctx, k, step, first_segment):
        saved = (self.loop, self.vec_tile, self.vec_set, self.cube_tile, self.cube_set, self.recording,
                 len(self.live_reads))
        if fact is not None:
            self.loop = fact
        self.loop_vars.append(ctx.var)
        from .builder import group

        try:
            with self.builder.region() as region:
                copies = 1 if it.kind == "loop_unroll" else k
                for j in range(copies):
                    self.recording = saved[5] and first_segment and j == 0
                    index = Sym(binexpr("+", ir.Var(ctx.var), ir.Const(j * step)), frozenset({"loop_index"}),
                                frozenset(), frozenset({id(fact)}), loop=ctx, copy=j,
                                text=(_first_name(stmt.target) or ctx.var) if j == 0 else None)
                    if it.kind == "loop_unroll" and isinstance(stmt.target, (ast.Tuple, ast.List)) and \
                            len(stmt.target.elts) == 2:
                        self.assign(stmt.target.elts[0], index, None)
                        self.assign(stmt.target.elts[1], k, None)
                    else:
                        self.assign(stmt.target, index, None)
                    self.exec_block(stmt.body)
        except _Return:
            raise FrontendError("PTO100", "`return` inside a pypto loop is not supported: a pypto loop body always "
                                          "runs to its end", stmt, self.source) from None
        except (_Break, _Continue):
            raise FrontendError("PTO100", "`break` or `continue` inside a pypto loop is not supported: a pypto loop "
                                          "body always runs to its end", stmt, self.source) from None
        finally:
            self.loop_vars.pop()
            (self.loop, self.vec_tile, self.vec_set, self.cube_tile, self.cube_set, self.recording, n_live) = saved
            del self.live_reads[n_live:]
        return group(region)


# =============================================================================================
_MISSING = object()


def _moved_names(body) -> list:
    """Names a loop body moves a tensor into: ``name[:] = v`` (every index a bare ``:``, as
    pypto's ``_is_empty_slice``) and ``name.move(v)``, outside nested functions, in order."""
    out: list = []

    def full(key) -> bool:
        items = key.elts if isinstance(key, ast.Tuple) else [key]
        return all(isinstance(k, ast.Slice) and k.lower is None and k.upper is None and k.step is None
                   for k in items)

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        target = None
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and full(t.slice):
                    target = t.value.id
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "move" \
                and isinstance(node.func.value, ast.Name):
            target = node.func.value.id
        if target is not None and target not in out:
            out.append(target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return out
def _plain_slices(value: Tensor, sliced: set) -> bool:
    """``value`` is a parameter reached through plain slices only (``x[0:16, :]``, ``x[:, 8:][2:4]``)."""
    t = value
    while t.base is not None:
        if t.ident not in sliced:
            return False
        t = t.base
    return t.origin == "param"


def _replace(env: dict, values: dict) -> None:
    """Set a frame's names to ``values`` keeping the dict itself (a module frame's env is its scope's)."""
    env.clear()
    env.update(values)


def _symbolic_scalar(value):
    """``pypto.symbolic_scalar(v)``: a scalar of the control program; a number stays one in the
    expressions it enters (``Sym`` of a constant, so ``.min``/``.max`` work on it)."""
    if isinstance(value, Sym):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Sym(ir.Const(value), frozenset({"symbolic_scalar"}), text=str(value))
    if isinstance(value, str):
        return Sym(None, frozenset({"dynamic_dim"}), text=value)
    return UNKNOWN


def _same_static(a, b) -> bool:
    try:
        return type(a) is type(b) and a == b
    except Exception:
        return False


def merge_values(a, b):
    """The value of a name after two branches assigned ``a`` and ``b`` (lint)."""
    if a is b:
        return a
    if is_static(a) and is_static(b) and _same_static(a, b):
        return a
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        shape = a.shape if a.shape == b.shape else None
        dtype = a.dtype if a.dtype == b.dtype else None
        return Tensor(shape, dtype, "op")
    if isinstance(a, Sym) or isinstance(b, Sym):
        s = a if isinstance(a, Sym) else b
        return Sym(None, s.kinds, s.reads, s.indices, text=s.text)
    return UNKNOWN


def annotation_from_call(args, kwargs) -> TensorAnnotation:
    """``pypto.Tensor(shape, dtype, name)`` (and ``pypto.tensor``): ``Tensor()``, ``Tensor([])`` and
    ``Tensor(())`` bind every dim at the call; a dtype left out (or ``dtype=None``) is bound at the
    call too, as pypto does (its ``Tensor`` records ``explicit_dtype`` and converts and checks the
    argument by it only when given).  A local ``pypto.tensor`` declaration defaults to FP32 in
    ``local_tensor``."""
    shape = args[0] if args else kwargs.get("shape")
    dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
    name = args[2] if len(args) > 2 else kwargs.get("name", "")
    dims = _annotation_dims(shape)
    dtype = dtype if isinstance(dtype, DType) else None
    object_dtype = dtype if dtype is not None or not (args or "shape" in kwargs) else api.FP32
    return TensorAnnotation(dims, dtype, name if isinstance(name, str) else "", _open_rank(shape), object_dtype)


def annotation_from_subscript(key) -> TensorAnnotation:
    """``pypto.Tensor[[64, 64], dt]`` / ``Tensor[...]``: positional parts by type."""
    items = key if isinstance(key, tuple) else (key,)
    shape: Any = None
    dtype = None
    name = ""
    open_rank = False
    for item in items:
        if isinstance(item, (list, tuple)):
            shape = _annotation_dims(list(item))
            open_rank = _open_rank(item)
        elif item is Ellipsis:
            shape = None
        elif isinstance(item, DType):
            dtype = item
        elif isinstance(item, str):
            name = item
        elif isinstance(item, dict):
            if "shape" in item:
                shape, open_rank = _annotation_dims(item.get("shape")), _open_rank(item.get("shape"))
            dtype = item.get("dtype", dtype) if isinstance(item.get("dtype"), DType) else dtype
    return TensorAnnotation(shape, dtype, name, open_rank and shape is not None)


def _open_rank(shape) -> bool:
    """pypto's "status shape" (``Tensor._validate_status_shape``): a non-empty *list* of
    STATIC/DYNAMIC markers and ints, at least one marker, no ``...`` (that form already leaves the
    rest to the call).  The argument may have more dims than the list names (entry.py checks
    ``len(arg.shape) < len(def.shape)`` for it, ``!=`` for a static or symbolic shape)."""
    if not isinstance(shape, list) or not shape:
        return False
    if not all(isinstance(d, Marker) or (isinstance(d, int) and not isinstance(d, bool)) for d in shape):
        return False
    return any(isinstance(d, Marker) for d in shape)


def _annotation_dims(shape) -> Optional[tuple]:
    if not isinstance(shape, (list, tuple)) or len(shape) == 0:
        return None  # Tensor(), Tensor([]), Tensor(()), an unknown value: the shape comes from the call
    dims = []
    for d in shape:
        if isinstance(d, int) and not isinstance(d, bool):
            dims.append(d)
        elif isinstance(d, (Marker, Sym)) or d is Ellipsis:
            dims.append(d)
        elif isinstance(d, ApiRef) and not d.qualname.startswith(("pypto.", "builtins.")):
            dims.append(d)  # a name imported from a module that was not found: the message names it
        else:
            dims.append(None)
    return tuple(dims)


def _layout(shape, offsets) -> Optional[str]:
    """A view's shape and offsets as one comparable text (symbolic parts by their expression), or
    None when a part is not a known int or symbol."""
    def part(value):
        if isinstance(value, Sym) and value.expr is not None:
            return repr(value.expr)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, (list, tuple)):
            items = [part(v) for v in value]
            return None if None in items else "[" + ", ".join(items) + "]"
        return None

    shape_text, offsets_text = part(shape), part(offsets)
    return None if shape_text is None or offsets_text is None else f"{shape_text} @ {offsets_text}"


def _reads_in(value) -> frozenset:
    if isinstance(value, Sym):
        return value.reads
    if isinstance(value, (list, tuple)):
        out = frozenset()
        for item in value:
            out |= _reads_in(item)
        return out
    return frozenset()


def _is_rounded_up(value) -> bool:
    """A block count rounded up: ``(n + B - 1) // B`` (or ``pypto.ceil_div``-style calls), read
    from the expression the value was computed by."""
    if not isinstance(value, Sym):
        return False
    node = value._node
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        return isinstance(node.left, ast.BinOp) and isinstance(node.left.op, (ast.Add, ast.Sub))
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return "ceil" in name.lower()
    return False


def _indices_in(value, direct: bool = False) -> frozenset:
    """The loop indices ``value`` uses; ``direct``: only those not reached through a value read
    from a tensor (``j * 16``, not ``table[b, j] * 16``)."""
    if isinstance(value, Sym):
        return frozenset() if direct and "tensor_read" in value.kinds else value.indices
    if isinstance(value, slice):
        return _indices_in(value.start, direct) | _indices_in(value.stop, direct)
    if isinstance(value, (list, tuple)):
        out = frozenset()
        for item in value:
            out |= _indices_in(item, direct)
        return out
    return frozenset()


def _target_names(target) -> list:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _first_name(target) -> Optional[str]:
    names = _target_names(target)
    return names[0] if names else None


@contextlib.contextmanager
def _nothing():
    yield


__all__ = ["Evaluator", "Frame", "merge_values", "annotation_from_call", "annotation_from_subscript", "_traces"]
