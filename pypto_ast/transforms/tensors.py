"""Tensor handles seen by kernel code while it is traced, and the shape/dtype rules of ops."""

from __future__ import annotations

from typing import Any, Optional

from .. import ir
from .symbolic import Sym, const_of, to_expr, wrap

DTYPE_NAMES = {  # pypto DT_ name -> IR dtype string
    "DT_FP32": "fp32", "DT_FP16": "fp16", "DT_BF16": "bf16", "DT_INT8": "int8", "DT_UINT8": "uint8",
    "DT_INT16": "int16", "DT_UINT16": "uint16", "DT_INT32": "int32", "DT_UINT32": "uint32",
    "DT_INT64": "int64", "DT_UINT64": "uint64", "DT_BOOL": "bool", "DT_DOUBLE": "double",
}
IR_TO_DT = {v: k for k, v in DTYPE_NAMES.items()}


def ir_dtype(dtype: Any) -> str:
    """A lang/pypto DataType (or an IR dtype string) as the IR's dtype string."""
    if isinstance(dtype, str):
        return DTYPE_NAMES.get(dtype, dtype)
    name = getattr(dtype, "name", None)
    if name in DTYPE_NAMES:
        return DTYPE_NAMES[name]
    raise TypeError(f"not a pypto dtype: {dtype!r}")


def same_dim(a, b) -> bool:
    return to_expr(a) == to_expr(b)


def broadcast(a: tuple, b: tuple) -> tuple:
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if same_dim(x, y):
            out.append(x)
        elif const_of(x) == 1:
            out.append(y)
        elif const_of(y) == 1:
            out.append(x)
        else:
            raise ValueError(f"shapes {shape_text(a)} and {shape_text(b)} do not broadcast")
    return tuple(out)


def shape_text(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def norm_dim(dim: int, rank: int) -> int:
    if not -rank <= dim < max(rank, 1):
        raise ValueError(f"dim {dim} out of range for rank {rank}")
    return dim + rank if dim < 0 else dim


class TensorH:
    """A tensor in kernel code: a named tensor (``@x``: parameter or local) or an SSA value."""

    __slots__ = ("tracer", "ref", "shape", "dtype", "valid")

    def __init__(self, tracer, ref, shape: tuple, dtype: str, valid: Optional[tuple] = None):
        self.tracer = tracer
        self.ref = ref  # ir.TensorRef or ir.Value
        self.shape = tuple(shape)
        self.dtype = dtype
        self.valid = valid

    @property
    def named(self) -> bool:
        return isinstance(self.ref, ir.TensorRef)

    @property
    def type(self) -> ir.TensorType:
        return ir.TensorType(tuple(to_expr(d) for d in self.shape), self.dtype)

    # -- python operators -----------------------------------------------------------------
    def _op(self, name, *args, **kwargs):
        return self.tracer.call(name, (self,) + args, kwargs)

    def __add__(self, o): return self._op("add", o)
    def __radd__(self, o): return self._op("add", o)
    def __sub__(self, o): return self._op("sub", o)
    def __rsub__(self, o): return self.tracer.call("add", (self.tracer.call("neg", (self,), {}), o), {})
    def __mul__(self, o): return self._op("mul", o)
    def __rmul__(self, o): return self._op("mul", o)
    def __truediv__(self, o): return self._op("div", o)
    def __rtruediv__(self, o): return self.tracer.call("mul", (self.tracer.call("reciprocal", (self,), {}), o), {})
    def __floordiv__(self, o): return self.tracer.call("floor", (self._op("div", o),), {})
    def __mod__(self, o): return self._op("remainder", o)
    def __pow__(self, o): return self._op("pow", o)
    def __matmul__(self, o):
        out = "int32" if self.dtype == "int8" else getattr(o, "dtype", self.dtype)
        return self.tracer.call("matmul", (self, o, out), {})
    def __neg__(self): return self._op("neg")
    def __pos__(self): return self
    def __gt__(self, o): return self._op("gt", o)
    def __ge__(self, o): return self._op("ge", o)
    def __lt__(self, o): return self._op("lt", o)
    def __le__(self, o): return self._op("le", o)
    def __eq__(self, o): return self._op("eq", o)  # noqa: D105
    def __ne__(self, o): return self._op("ne", o)

    __hash__ = object.__hash__

    def __bool__(self):
        raise self.tracer.error(
            "a tensor has no truth value: a Python `if` needs a scalar; compare scalars read from "
            "the tensor, or use pypto.where for element-wise selection"
        )

    def __getitem__(self, key):
        return self.tracer.getitem(self, key)

    def __setitem__(self, key, value):
        self.tracer.setitem(self, key, value)

    def __iter__(self):
        raise self.tracer.error("iterating over a tensor is not supported in a kernel; use pypto.loop")

    def __len__(self):
        n = const_of(self.shape[0]) if self.shape else None
        if n is None:
            raise self.tracer.error("len() of a tensor with a dynamic first dim")
        return n

    # -- attributes -------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return len(self.shape)

    @property
    def name(self) -> str:
        return self.ref.name

    def move(self, value):
        self.tracer.setitem(self, slice(None), value)

    def assemble(self, part, offsets):
        self.tracer.call("assemble", (part, offsets, self), {})

    def fill_(self, value):
        self.tracer.setitem(self, slice(None), self.tracer.call("full", (list(self.shape), value, self.dtype), {}))
        return self

    def __getattr__(self, name):
        # Tensor methods forward to the same-named pypto op with the tensor first.
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.tracer.call(name, (self,) + args, kwargs)

    def __repr__(self) -> str:
        ref = f"@{self.ref.name}" if self.named else f"%{self.ref.name}"
        return f"<tensor {ref} {shape_text(self.shape)} {self.dtype}>"


class ShapeList(tuple):
    """``x.shape``: ints for static dims, symbolic scalars for dynamic ones."""


def dims_of(tensor: TensorH, tracer) -> list:
    return [wrap(to_expr(d), tracer) for d in tensor.shape]


def view_shape(shape) -> tuple:
    return tuple(d if isinstance(d, Sym) else int(d) for d in shape)

