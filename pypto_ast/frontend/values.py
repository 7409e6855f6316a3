"""The values of the static evaluation (the front end's one value domain).

Build-time Python values are themselves: ``int``, ``float``, ``bool``, ``str``, ``None``,
``tuple``, ``list``, ``dict``, ``range``, ``slice``, ``Ellipsis`` -- the evaluator computes on
them with Python's own operators (guarded against huge results).  Everything else is one of the
classes below: runtime scalars (``Sym``), tensors (``Tensor``), references to API names
(``ApiRef``), functions of the analysed code (``FuncRef``), and ``UNKNOWN`` for what cannot be
known without running the code.  Rules only fire on known facts.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import ir


class _Unknown:
    """What cannot be known statically: falsy, one instance, never equal to a real value."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_Unknown, ())


UNKNOWN: Any = _Unknown()


@dataclass(frozen=True)
class DType:
    name: str  # e.g. "DT_FP16"
    size: int  # bytes per element (bytes_of)

    def __str__(self) -> str:
        return self.name

    @property
    def ir(self) -> str:
        """The IR's dtype string ("fp16", "int32", ...)."""
        return IR_DTYPES.get(self.name, self.name.lower().removeprefix("dt_"))


IR_DTYPES = {
    "DT_FP32": "fp32", "DT_FP16": "fp16", "DT_BF16": "bf16", "DT_INT8": "int8", "DT_UINT8": "uint8",
    "DT_INT16": "int16", "DT_UINT16": "uint16", "DT_INT32": "int32", "DT_UINT32": "uint32",
    "DT_INT64": "int64", "DT_UINT64": "uint64", "DT_BOOL": "bool", "DT_DOUBLE": "double",
}


class Sym:
    """A symbolic scalar: a value the control program knows only at run time.

    ``expr`` is its IR expression.  ``kinds`` says where it comes from ("loop_index",
    "tensor_read", "param", "dynamic_dim", "loop_flag"); ``reads`` holds the ids of the tensor
    reads it depends on, ``indices`` the ids of the loops whose index it uses.  A loop index
    also knows its loop (``loop``) and which unrolled copy of the body it belongs to (``copy``),
    for ``is_loop_begin``/``is_loop_end``.  ``text`` is the source text it was written as
    (taken lazily from ``node``), else a rendering of the expression.
    """

    __slots__ = ("expr", "kinds", "reads", "indices", "loop", "copy", "_text", "_node", "_source")

    def __init__(self, expr: Optional[ir.Expr], kinds=frozenset(), reads=frozenset(), indices=frozenset(),
                 loop=None, copy: int = 0, text: Optional[str] = None, node=None, source=None):
        self.expr = expr
        self.kinds, self.reads, self.indices = frozenset(kinds), frozenset(reads), frozenset(indices)
        self.loop, self.copy = loop, copy
        self._text, self._node, self._source = text, node, source

    @property
    def text(self) -> str:
        if self._text is None:
            if self._node is not None and self._source is not None:
                self._text = self._source.segment(self._node)
            else:
                self._text = describe(self.expr) if self.expr is not None else "?"
        return self._text

    def __repr__(self) -> str:
        return f"Sym({self.text})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Sym) and self.expr is not None and self.expr == other.expr

    def __hash__(self) -> int:
        return hash(self.expr)


def describe(expr: Optional[ir.Expr]) -> str:
    """Short human text of an expression, for messages."""
    if expr is None:
        return "?"
    if isinstance(expr, ir.Const):
        return repr(expr.value)
    if isinstance(expr, ir.Var):
        return expr.name
    if isinstance(expr, ir.ShapeOf):
        return f"{expr.tensor}.shape[{expr.axis}]"
    if isinstance(expr, ir.Read):
        return f"{expr.tensor}[{', '.join(describe(i) for i in expr.index)}]"
    if isinstance(expr, ir.UnExpr):
        return f"{expr.op} {describe(expr.a)}" if expr.op == "not" else f"-{describe(expr.a)}"
    if expr.op in ("min", "max"):
        return f"{expr.op}({describe(expr.a)}, {describe(expr.b)})"
    return f"({describe(expr.a)} {expr.op} {describe(expr.b)})"


_tensor_ids = itertools.count(1)


@dataclass(eq=False)
class Tensor:
    """A tensor during evaluation.  Identity matters (``is``): views make new values.

    ``shape`` is a tuple of dims (``int``, ``Sym`` or ``None`` for unknown) or ``None`` when even
    the rank is unknown; ``ref`` is the IR reference (``@name`` for parameters and locals, ``%n``
    for op results) when the evaluation builds IR.
    """

    shape: Optional[tuple]
    dtype: Optional[DType]
    origin: str  # "param", "local" (pypto.tensor, no producer), "op", "view", "host"
    name: str = ""
    base: Optional["Tensor"] = None  # the tensor a view/slice reads from
    ref: Any = None  # ir.TensorRef | ir.Value | None
    valid: Optional[tuple] = None  # valid_shape carried by views
    bound: frozenset = frozenset()  # axes of a parameter whose static extent the call gave (pypto.STATIC, `...`)
    view_at: Optional[tuple] = None  # a view's offsets into ``base`` (pypto.view)
    ident: int = field(default_factory=lambda: next(_tensor_ids))

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    @property
    def named(self) -> bool:
        return isinstance(self.ref, ir.TensorRef)

    @property
    def known(self) -> bool:
        """Shape, every dim and the dtype are known (the tensor can be lowered)."""
        return self.shape is not None and self.dtype is not None and all(d is not None for d in self.shape)

    def root(self) -> "Tensor":
        t = self
        while t.base is not None:
            t = t.base
        return t

    def __repr__(self) -> str:
        dims = "?" if self.shape is None else ", ".join("?" if d is None else str(d if isinstance(d, int) else d.text)
                                                         for d in self.shape)
        return f"<tensor {self.name or self.origin} [{dims}] {self.dtype}>"


@dataclass(frozen=True)
class ApiRef:
    """A name reached through an import: a module, function, class or constant by qualified name."""

    qualname: str


@dataclass(frozen=True)
class Marker:
    """``pypto.DYNAMIC`` / ``DYN`` / ``STATIC`` used as a dimension."""

    kind: str  # "DYNAMIC" | "STATIC"


@dataclass(frozen=True)
class TensorAnnotation:
    """The value of ``pypto.Tensor(...)`` / ``pypto.Tensor[...]`` / ``pypto.tensor(...)`` at module
    or host level.  ``shape`` is None when the annotation binds the shape at the call
    (``Tensor()``, ``Tensor([])``, ``Tensor(())``, ``Tensor[[...], dt]`` with ``...``)."""

    shape: Optional[tuple]  # dims: int | Marker | Sym | None (unknown) | Ellipsis (rest static)
    dtype: Optional[DType]  # None: the argument's dtype, bound at the call
    name: str = ""
    # a *list* of STATIC/DYNAMIC markers and ints (pypto's "status shape"): pypto checks only that the
    # argument has at least that many dims; the dims past the list are static (its from_torch marks
    # only the listed DYNAMIC axes dynamic)
    open_rank: bool = False
    # the dtype of the pypto Tensor object itself (FP32 when a shape was given without one): what a
    # legacy host-level ``pypto.tensor(shape)`` holds, never what an annotation checks
    object_dtype: Optional[DType] = None


@dataclass(eq=False)
class FuncRef:
    """A function of the analysed code: its ``def`` and the scope it was defined in."""

    node: ast.AST  # FunctionDef | AsyncFunctionDef | Lambda
    qualname: str
    scope: Any = None  # the ModuleScope whose globals it reads
    closure: Optional[dict] = None  # enclosing function's bindings when defined inside a function
    source: Any = None  # the SourceFile holding ``node``
    owner: Any = None  # the ClassVal whose body defined it (a method: zero-argument ``super()``)


@dataclass(frozen=True)
class LoopIter:
    """``pypto.loop(...)`` / ``loop_unroll(...)`` before a ``for`` consumes it."""

    call: ast.Call
    kind: str  # "loop" | "loop_unroll"
    args: tuple
    kwargs: tuple  # sorted (name, value) pairs


@dataclass(frozen=True)
class BranchVal:
    """The value of ``pypto.cond(expr)``."""

    test: Any


@dataclass(frozen=True)
class OptionsVal:
    """``pypto.options(...)``: a config scope (context manager or decorator)."""

    vec: Any
    cube: Any
    node: Optional[ast.AST] = None


@dataclass(frozen=True)
class TorchSpec:
    """A torch tensor built statically by a module's own code (``torch.randn(shape, dtype=...)``):
    what the shapes of a kernel call can be read from."""

    shape: tuple
    dtype: Optional[str]  # IR dtype string, None when not known
    param: Optional[str] = None  # the host function's parameter it arrived as (a call's argument)


@dataclass(frozen=True, eq=False)
class Record:
    """A live object read by attribute (a dataclass instance or namespace a kernel receives as a
    build-time argument, ``config.eps``): its fields as front-end values."""

    type_name: str
    fields: dict
    # (source path, qualname) of the object's class when it is a class of the user's code: its
    # methods and properties are read from that class statement, over these fields
    origin: Optional[tuple] = None

    def __repr__(self) -> str:
        return f"<{self.type_name} {', '.join(sorted(self.fields))}>"


class ClassVal:
    """A class of the analysed code (a ``class`` statement evaluated): the bindings of its body
    (``attrs``: class attributes, methods as ``FuncRef``, ``Descriptor`` for properties, static and
    class methods), its bases (``ClassVal`` of the analysed code, or what an import gave), whether
    ``@dataclass`` decorates it and the names its body annotates (the dataclass fields, in order)."""

    __slots__ = ("node", "qualname", "attrs", "bases", "dataclass", "annotated")

    def __init__(self, node, qualname: str, attrs: dict, bases: tuple, dataclass: bool, annotated: tuple):
        self.node, self.qualname, self.attrs, self.bases = node, qualname, attrs, bases
        self.dataclass, self.annotated = dataclass, annotated

    def mro(self) -> list:
        """The class and its analysed bases, depth first, left to right, each once (Python's C3
        order for the single-inheritance and diamond-free hierarchies configs use)."""
        out, todo = [], [self]
        while todo:
            cls = todo.pop(0)
            if cls not in out:
                out.append(cls)
                todo[:0] = [b for b in cls.bases if isinstance(b, ClassVal)]
        return out

    @property
    def opaque(self) -> bool:
        """A base the front end does not model (an import: ``enum.Enum``, ``torch.nn.Module``,
        ``typing.NamedTuple``): the class's own attributes may not be what Python gives."""
        return any(not isinstance(b, ClassVal) and getattr(b, "qualname", "") != "builtins.object"
                   for cls in self.mro() for b in cls.bases)

    def lookup(self, name: str, default: Any = None) -> Any:
        for cls in self.mro():
            if name in cls.attrs:
                return cls.attrs[name]
        return default

    def fields(self) -> list:
        """The dataclass fields: annotated names of the analysed bases first, as ``dataclasses`` orders them."""
        out: list = []
        for cls in reversed(self.mro()):
            for name in cls.annotated:
                if name not in out:
                    out.append(name)
        return out

    def __repr__(self) -> str:
        return f"<class {self.qualname}>"


class Instance:
    """An object of a ``ClassVal`` built by the analysed code (``Rope2dTileConfig([1, 64], ...)``,
    ``TileConfig()`` whose ``__init__`` sets ``self.tile = 128``): its instance attributes, which
    methods of the class may change (identity matters, as in Python)."""

    __slots__ = ("cls", "fields")

    def __init__(self, cls: ClassVal, fields: Optional[dict] = None):
        self.cls = cls
        self.fields = fields if fields is not None else {}

    def __repr__(self) -> str:
        return f"<{self.cls.qualname} object {', '.join(sorted(self.fields))}>"


class Descriptor:
    """A decorated method in a class body: ``kind`` is "property", "staticmethod" or "classmethod"."""

    __slots__ = ("kind", "func")

    def __init__(self, kind: str, func: "FuncRef"):
        self.kind, self.func = kind, func


class BoundMethod:
    """``obj.method`` of an ``Instance`` (or ``Cls.method`` of a classmethod) before it is called."""

    __slots__ = ("func", "receiver")

    def __init__(self, func: "FuncRef", receiver: Any):
        self.func, self.receiver = func, receiver


class FieldSpec:
    """``dataclasses.field(default=..., default_factory=...)`` in a dataclass body."""

    __slots__ = ("default", "factory")

    def __init__(self, default: Any, factory: Any):
        self.default, self.factory = default, factory


class Method:
    """``obj.name`` before it is called (tensor methods, ``sym.min``)."""

    __slots__ = ("obj", "name", "node")

    def __init__(self, obj, name, node):
        self.obj, self.name, self.node = obj, name, node


def is_static(value: Any) -> bool:
    """A plain build-time Python value (what the evaluator computes on directly)."""
    if value is None or value is Ellipsis:
        return True
    if isinstance(value, (bool, int, float, complex, str, bytes, range, slice)):
        return True
    if isinstance(value, (tuple, list)):
        return all(is_static(v) for v in value)
    if isinstance(value, dict):
        return all(is_static(k) and is_static(v) for k, v in value.items())
    return False


def int_value(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_symbolic(value: Any) -> bool:
    if isinstance(value, Sym):
        return True
    if isinstance(value, (tuple, list)):
        return any(is_symbolic(v) for v in value)
    return False


# -- the user's own modules, read from disk by scope.py -------------------------------------
class UserModule:
    """A module of the user's own code, read from disk: ``mod.NAME`` reads its scope."""

    __slots__ = ("scope",)

    def __init__(self, scope):  # a scope.ModuleScope
        self.scope = scope


class LazyImport:
    """``from helpers import SHAPE``: resolved the first time the name is looked up."""

    __slots__ = ("load", "name")

    def __init__(self, load, name: str):
        self.load, self.name = load, name

    def resolve(self) -> Any:
        scope = self.load()
        if scope is None:
            return UNKNOWN
        return scope.lookup(self.name)


__all__ = [
    "UNKNOWN", "ApiRef", "BoundMethod", "BranchVal", "ClassVal", "Descriptor", "FieldSpec", "Instance", "DType", "FuncRef", "LoopIter", "Marker", "Method", "OptionsVal", "Record", "Sym",
    "Tensor", "TensorAnnotation", "TorchSpec", "LazyImport", "UserModule", "describe", "int_value", "is_static", "is_symbolic",
]

