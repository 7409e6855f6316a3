"""Abstract values of the static interpretation of kernel code.

What cannot be known is ``UNKNOWN`` (or a ``None`` field): rules only fire on facts.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Any, Optional, Union


class _Unknown:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN: Any = _Unknown()


@dataclass(frozen=True)
class Const:
    """A value known at build time: int, float, bool, str, None."""

    value: Any


@dataclass(frozen=True)
class Sym:
    """A symbolic scalar (runtime value). ``kinds`` says where it comes from.

    kinds: "loop_index", "tensor_read" (value read from a tensor), "param" (a runtime
    scalar parameter), "dynamic_dim", "loop_flag" (is_loop_begin/end result).
    ``reads`` holds the ids of tensor reads it depends on; ``indices`` the loop indices.
    """

    text: str
    kinds: frozenset = frozenset()
    reads: frozenset = frozenset()
    indices: frozenset = frozenset()

    def combine(self, other: "Sym", text: str) -> "Sym":
        return Sym(text, self.kinds | other.kinds, self.reads | other.reads, self.indices | other.indices)


Dim = Union[int, Sym, None]  # None: unknown


from .frontend.values import DType  # noqa: E402  (one DType for both readers)


_tensor_ids = itertools.count(1)


@dataclass(eq=False)
class TensorVal:
    """A tensor during interpretation. Identity matters (``is``): views make new values."""

    shape: Optional[tuple]  # tuple[Dim, ...] or None when even the rank is unknown
    dtype: Optional[DType]
    origin: str  # "param", "local" (pypto.tensor, no producer), "op", "view", "host"
    name: str = ""
    base: Optional["TensorVal"] = None  # the tensor a view/slice reads from
    ident: int = field(default_factory=lambda: next(_tensor_ids))

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    def root(self) -> "TensorVal":
        t = self
        while t.base is not None:
            t = t.base
        return t


@dataclass(frozen=True)
class TupleVal:
    items: tuple


@dataclass(frozen=True)
class ModuleRef:
    """An imported module or package, by qualified name (``pypto``, ``pypto.frontend``, ``torch``)."""

    qualname: str


@dataclass(frozen=True)
class ApiRef:
    """An attribute of an imported module: a function, class or constant by qualified name."""

    qualname: str


@dataclass(frozen=True)
class Marker:
    """``pypto.DYNAMIC`` / ``DYN`` / ``STATIC`` used as a dimension."""

    kind: str


@dataclass(frozen=True)
class FuncRef:
    """A function defined in the analysed module (kernels and plain helpers)."""

    node: ast.FunctionDef
    qualname: str


@dataclass(frozen=True)
class TensorAnnotation:
    """The value of ``pypto.Tensor(...)`` / ``pypto.Tensor[...]`` in an annotation."""

    shape: Optional[tuple]
    dtype: Optional[DType]


@dataclass(frozen=True)
class LoopIter:
    """The value of a ``pypto.loop(...)``/``loop_unroll(...)`` call before ``for`` consumes it."""

    call: ast.Call
    kind: str  # "loop" | "loop_unroll"


@dataclass(frozen=True)
class BranchVal:
    """The value of ``pypto.cond(expr)``."""

    test: Any


def is_symbolic(value: Any) -> bool:
    if isinstance(value, Sym):
        return True
    if isinstance(value, TupleVal):
        return any(is_symbolic(v) for v in value.items)
    return False


def const_value(value: Any, default: Any = None) -> Any:
    return value.value if isinstance(value, Const) else default


def int_value(value: Any) -> Optional[int]:
    v = const_value(value)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def as_dims(value: Any) -> Optional[tuple]:
    """A shape argument (tuple/list of ints, symbols, markers) as a tuple of Dim, or None."""
    if isinstance(value, TupleVal):
        dims = []
        for item in value.items:
            if isinstance(item, Const) and isinstance(item.value, int) and not isinstance(item.value, bool):
                dims.append(item.value)
            elif isinstance(item, Sym):
                dims.append(item)
            elif isinstance(item, Marker):
                dims.append(Sym(item.kind, frozenset({"dynamic_dim"})))
            elif isinstance(item, Const) and item.value is Ellipsis:
                return None
            else:
                dims.append(None)
        return tuple(dims)
    return None
