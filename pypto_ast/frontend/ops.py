"""The pypto op table: argument handling, shape/dtype rules and the IR each op becomes.

One handler per op family, found by ``call`` from the op's name.  Handlers work on the front
end's values (``Tensor``, ``Sym``, Python numbers) and are exact where the inputs are known and
tolerant where they are not: a dim or dtype nobody can know yet stays ``None``, and only a real
contradiction (operands of different dtypes, a view outside its tensor) is an ``OpError``.
The context ``ctx`` (the evaluator) emits the IR when it builds a program.
"""

from __future__ import annotations

import enum
import math
from typing import Any, Optional

from .. import ir
from ..ir.op_dtypes import refusal
from .api import DTYPES
from .values import UNKNOWN, DType, Sym, Tensor

BINARY = {
    "add", "sub", "mul", "div", "fmod", "remainder", "pow", "hypot", "maximum", "minimum",
    "copysign", "gcd", "bitwise_and", "bitwise_or", "bitwise_xor",
}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge", "greater", "logical_and"}
UNARY = {
    "abs", "neg", "exp", "exp2", "expm1", "sqrt", "rsqrt", "reciprocal", "log", "log2", "log10",
    "log1p", "ceil", "floor", "trunc", "round", "sign", "relu", "lrelu", "sigmoid", "sin", "cos",
    "cbrt", "tril", "triu", "softmax", "clone", "cumsum",
}
UNARY_BOOL = {"logical_not", "isfinite", "signbit"}
REDUCE = {"sum", "amax", "amin", "prod", "var"}
UNARY_ATTRS = {  # op -> ordered (name, default) of its scalar arguments after the tensor
    "lrelu": (("negative_slope", 0.01),), "round": (("decimals", 0),), "tril": (("diagonal", 0),),
    "triu": (("diagonal", 0),), "softmax": (("dim", -1),), "cumsum": (("dim", 0),),
}
BOOL, INT32, INT64, FP32 = DTYPES["DT_BOOL"], DTYPES["DT_INT32"], DTYPES["DT_INT64"], DTYPES["DT_FP32"]
_IR_TO_DTYPE = {d.ir: d for d in DTYPES.values()}


class OpError(Exception):
    """The op's arguments contradict pypto's rules (or what pypto-ast supports). ``kind`` names a
    refusal pypto itself makes for certain (the linter reports those: PTO026, PTO027)."""

    kind = ""

    def __init__(self, *args, kind: str = ""):
        super().__init__(*args)
        if kind:
            self.kind = kind


# -- dims and expressions ---------------------------------------------------------------------
def const_of(value: Any) -> Optional[Any]:
    """The Python number of an int/float/bool or a constant Sym, else None."""
    if isinstance(value, Sym):
        return value.expr.value if isinstance(value.expr, ir.Const) else None
    if isinstance(value, (int, float)):
        return value
    return None


def to_expr(value: Any) -> Optional[ir.Expr]:
    """An IR expression for a number or a Sym; None for what is not known."""
    if isinstance(value, Sym):
        return value.expr
    if isinstance(value, (bool, int, float)):
        return ir.Const(value)
    return None


def same_dim(a, b) -> Optional[bool]:
    """Whether two dims are the same: None when one of them is not known."""
    ea, eb = to_expr(a), to_expr(b)
    if ea is None or eb is None:
        return None
    if ea == eb:
        return True
    # two different constants differ; a symbolic dim may still equal the other at run time
    return False if isinstance(ea, ir.Const) and isinstance(eb, ir.Const) else None


def shape_text(shape) -> str:
    if shape is None:
        return "[?]"
    return "[" + ", ".join("?" if d is None else str(d if not isinstance(d, Sym) else d.text) for d in shape) + "]"


def broadcast(a: Optional[tuple], b: Optional[tuple]) -> Optional[tuple]:
    if a is None or b is None:
        return None
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        same = same_dim(x, y)
        if same:
            out.append(x)
        elif const_of(x) == 1:
            out.append(y)
        elif const_of(y) == 1:
            out.append(x)
        elif same is None:
            out.append(x if x is not None and const_of(y) is None else y if y is not None and const_of(x) is None else None)
        else:
            raise OpError(f"shapes {shape_text(a)} and {shape_text(b)} do not broadcast")
    return tuple(out)


def norm_dim(dim: Any, rank: Optional[int]) -> Optional[int]:
    d = const_of(dim)
    if not isinstance(d, int) or rank is None:
        return None
    if not -rank <= d < max(rank, 1):
        raise OpError(f"dim {d} out of range for rank {rank}")
    return d + rank if d < 0 else d


def dtype_of(value: Any) -> Optional[DType]:
    """A pypto dtype (DType), an IR dtype string, or None."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        return DTYPES.get(value) or _IR_TO_DTYPE.get(value)
    return None


# -- operands and attributes ------------------------------------------------------------------
def operand(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.ref
    if isinstance(x, (list, tuple)):
        return tuple(operand(v) for v in x)
    if isinstance(x, Element):
        return operand(x.value)
    e = to_expr(x)
    if e is None:
        raise OpError(f"operand {x!r} is not known at build time")
    return e


def attr_value(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(attr_value(x) for x in v)
    if isinstance(v, Sym):  # constants stay plain numbers: attrs never hold Const
        return v.expr.value if isinstance(v.expr, ir.Const) else v.expr
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, DType):
        return v.ir
    if isinstance(v, EnumValue):
        return v.name
    if isinstance(v, enum.Enum):
        return v.value if isinstance(v.value, str) else v.name
    if isinstance(v, Element):
        return attr_value(v.value)
    raise OpError(f"attribute {v!r} is not known at build time")


class Element:
    """``pypto.Element(dtype, value)``: a typed scalar operand."""

    __slots__ = ("dtype", "value")

    def __init__(self, dtype, value):
        self.dtype, self.value = dtype, value


class EnumValue:
    """A member of a pypto enum (``pypto.CastMode.CAST_RINT``) by name."""

    __slots__ = ("enum", "name")

    def __init__(self, enum_name: str, name: str):
        self.enum, self.name = enum_name, name

    def __eq__(self, other):
        return isinstance(other, EnumValue) and (self.enum, self.name) == (other.enum, other.name)

    def __hash__(self):
        return hash((self.enum, self.name))

    def __repr__(self):
        return f"pypto.{self.enum}.{self.name}"


def _tensor(x, what: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise OpError(f"{what} must be a tensor, got {_kind(x)}")
    return x


def _kind(x) -> str:
    if isinstance(x, Sym):
        return "a symbolic scalar"
    if x is None:
        return "None"
    if x is UNKNOWN:
        return "a value pypto-ast cannot read at build time"
    return type(x).__name__


def _scalar_ok(x) -> bool:
    return isinstance(x, (int, float, Sym, Element)) and not isinstance(x, bool) or isinstance(x, bool)


def _valid_of(*tensors):
    for t in tensors:
        if isinstance(t, Tensor) and t.valid is not None:
            return t.valid
    return None


def _arg(args, kwargs, i, key, default=None):
    return args[i] if len(args) > i else kwargs.get(key, default)


# -- dispatch ---------------------------------------------------------------------------------
def call(ctx, name: str, args: tuple, kwargs: dict):
    """``pypto.<name>(*args, **kwargs)`` on the front end's values."""
    handler = _HANDLERS.get(name)
    if handler is None:
        if name in BINARY:
            handler = binary
        elif name in COMPARE:
            handler = compare
        elif name in UNARY or name in UNARY_BOOL:
            handler = unary
        elif name in REDUCE:
            handler = reduce
        else:
            raise NotLowered(name)
    return handler(ctx, name, tuple(args), dict(kwargs))


def supported(name: str) -> bool:
    return name in _HANDLERS or name in BINARY or name in COMPARE or name in UNARY or name in UNARY_BOOL \
        or name in REDUCE


class NotLowered(OpError):
    """A real pypto op the table has no handler for."""

    def __init__(self, name: str):
        super().__init__(f"pypto.{name} is not supported by pypto-ast yet")
        self.name = name


def binary(ctx, name, args, kwargs):
    if name == "div":  # div(input, other, precision_type=HIGH_PRECISION) on master: both are IEEE division here
        precision = args[2] if len(args) == 3 else kwargs.get("precision_type")
        if precision is not None and not (isinstance(precision, EnumValue) and precision.enum == "PrecisionType"):
            raise OpError(f"pypto.div: precision_type must be a pypto.PrecisionType, got {_kind(precision)}")
        args = args[:2] if len(args) == 3 else args
    if len(args) != 2:
        raise OpError(f"pypto.{name} takes two operands")
    a, b = args
    if not isinstance(a, Tensor) and isinstance(b, Tensor):
        if name in ("add", "mul", "maximum", "minimum"):
            a, b = b, a
        else:  # scalar - tensor, scalar / tensor, ...: materialise the scalar as a tensor
            a = call(ctx, "full", (list(b.shape) if b.shape is not None else None, a, b.dtype), {})
    a = _tensor(a, f"the first operand of pypto.{name}")
    if isinstance(b, Tensor):
        if a.dtype is not None and b.dtype is not None and a.dtype != b.dtype:
            raise OpError(f"pypto.{name}: operands have different dtypes ({a.dtype.ir}, {b.dtype.ir}); "
                          "cast one explicitly (pypto 0.2.0: FC0000)", kind="dtype")
        shape = broadcast(a.shape, b.shape)
    elif _scalar_ok(b):
        shape = a.shape
    else:
        raise OpError(f"pypto.{name}: unsupported operand {_kind(b)}")
    attrs = {k: kwargs[k] for k in ("alpha",) if k in kwargs}
    dtype = a.dtype if a.dtype is not None else getattr(b, "dtype", None)
    _check_op_page(name, a, b)
    return ctx.emit(name, (a, b), attrs, shape, dtype, tile="vec", valid=_valid_of(a, b))


def _check_op_page(name, *operands):
    """An operand dtype the op page excludes is pypto's refusal (ir/op_dtypes.py), not a gap of ours."""
    for x in operands:
        if isinstance(x, Tensor) and x.dtype is not None:
            problem = refusal(name, x.dtype.ir)
            if problem:
                raise OpError(problem)


def compare(ctx, name, args, kwargs):
    if len(args) < 2:
        raise OpError(f"pypto.{name} takes two operands")
    a, b = args[0], args[1]
    a = _tensor(a, f"the first operand of pypto.{name}")
    shape = broadcast(a.shape, b.shape) if isinstance(b, Tensor) else a.shape
    _check_op_page(name, a, b)
    return ctx.emit(name, (a, b), {}, shape, BOOL, tile="vec", valid=_valid_of(a, b))


def unary(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else kwargs.get("input"), f"the input of pypto.{name}")
    attrs = {}
    for i, (key, default) in enumerate(UNARY_ATTRS.get(name, ())):
        attrs[key] = args[1 + i] if len(args) > 1 + i else kwargs.get(key, default)
    dtype = BOOL if name in UNARY_BOOL else x.dtype
    _check_op_page(name, x)
    integer = dtype is not None and dtype.name.startswith(("DT_INT", "DT_UINT"))
    if name == "cumsum" and integer:
        dtype = INT64
    elif name in ("exp2", "expm1") and integer:  # the op page: an integer input gives an FP32 result
        dtype = FP32
    return ctx.emit(name, (x,), attrs, x.shape, dtype, tile="vec", valid=x.valid)


def reduce(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else kwargs.get("input"), f"the input of pypto.{name}")
    _check_op_page(name, x)
    dim = _arg(args, kwargs, 1, "dim")
    # var(input, dim, correction, keepdim): the repository's signature takes correction third
    keepdim = _arg(args, kwargs, 3 if name == "var" else 2, "keepdim", False)
    keepdim = bool(keepdim) if isinstance(keepdim, (bool, int)) else keepdim
    rank = x.rank
    attrs: dict = {"keepdim": keepdim}
    if name == "var":
        correction = const_of(_arg(args, kwargs, 2, "correction", 1))
        if not isinstance(correction, (int, float)) or isinstance(correction, bool):
            raise OpError("pypto.var needs a correction known at build time")
        attrs["correction"] = int(correction) if float(correction).is_integer() else float(correction)
    if rank is None or not isinstance(keepdim, bool):
        return ctx.emit(name, (x,), attrs, None, x.dtype, tile="vec")
    if dim is None:
        dims = tuple(range(rank))
    elif isinstance(dim, (list, tuple)):
        dims = tuple(norm_dim(d, rank) for d in dim)
    else:
        dims = (norm_dim(dim, rank),)
    if None in dims:
        return ctx.emit(name, (x,), attrs, None, x.dtype, tile="vec")
    if keepdim:
        shape = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)
    attrs["dim"] = dims if len(dims) != 1 else dims[0]
    return ctx.emit(name, (x,), attrs, shape, x.dtype, tile="vec")


def op_where(ctx, name, args, kwargs):
    if len(args) != 3:
        raise OpError("pypto.where takes a condition and two values")
    cond, a, b = args
    cond = _tensor(cond, "the condition of pypto.where")
    tensors = [t for t in (a, b) if isinstance(t, Tensor)]
    shape = cond.shape
    for t in tensors:
        shape = broadcast(shape, t.shape)
    dtype = tensors[0].dtype if tensors else FP32
    return ctx.emit("where", (cond, a, b), {}, shape, dtype, tile="vec", valid=_valid_of(cond, *tensors))


def op_clip(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else None, "the input of pypto.clip")
    lo, hi = _arg(args, kwargs, 1, "min"), _arg(args, kwargs, 2, "max")
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):  # tensor bounds: minimum(maximum(x, lo), hi)
        out = call(ctx, "maximum", (x, lo), {}) if lo is not None else x
        return call(ctx, "minimum", (out, hi), {}) if hi is not None else out
    return ctx.emit("clip", (x,), {"min": lo, "max": hi}, x.shape, x.dtype, tile="vec", valid=x.valid)


def op_rms_norm(ctx, name, args, kwargs):
    """rms_norm(x, gamma=None, epsilon=1e-6) as the primitive ops it stands for."""
    x = _tensor(args[0] if args else None, "the input of pypto.rms_norm")
    gamma = _arg(args, kwargs, 1, "gamma")
    eps = _arg(args, kwargs, 2, "epsilon", 1e-6)
    n = const_of(x.shape[-1]) if x.shape else None
    if n is None:
        if ctx.building:
            raise OpError("pypto.rms_norm needs a static last dim")
        return ctx.emit("rms_norm", (x,), {}, x.shape, x.dtype, tile="vec")
    wide = x.dtype is not None and x.dtype.ir != "fp32"  # computed in fp32, back to x's dtype (the op page)
    xf = call(ctx, "cast", (x, FP32), {}) if wide else x
    sq = call(ctx, "mul", (xf, xf), {})
    mean = call(ctx, "mul", (call(ctx, "sum", (sq, -1, True), {}), 1.0 / n), {})
    scale = call(ctx, "rsqrt", (call(ctx, "add", (mean, eps), {}),), {})
    out = call(ctx, "mul", (xf, scale), {})
    if gamma is not None:
        g = call(ctx, "cast", (gamma, FP32), {}) if wide and getattr(gamma, "dtype", None) is not None \
            and gamma.dtype.ir != "fp32" else gamma
        out = call(ctx, "mul", (out, g), {})
    return call(ctx, "cast", (out, x.dtype), {}) if wide else out


def op_cast(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else None, "the input of pypto.cast")
    dtype = dtype_of(_arg(args, kwargs, 1, "dtype"))
    mode = _arg(args, kwargs, 2, "mode", "CAST_NONE")
    satmode = _arg(args, kwargs, 3, "satmode")
    return ctx.emit("cast", (x,), {"dtype": dtype, "mode": mode, "satmode": satmode}, x.shape, dtype,
                    tile="vec", valid=x.valid)


def op_matmul(ctx, name, args, kwargs):
    a = _tensor(args[0] if args else None, "the first operand of pypto.matmul")
    b = _tensor(args[1] if len(args) > 1 else None, "the second operand of pypto.matmul")
    given = _arg(args, kwargs, 2, "out_dtype")
    out_dtype = dtype_of(given)
    if out_dtype is None and a.dtype is not None and given is None:  # an out_dtype not known here stays unknown
        out_dtype = INT32 if a.dtype.name == "DT_INT8" else a.dtype
    a_trans, b_trans = bool(kwargs.get("a_trans", False)), bool(kwargs.get("b_trans", False))
    attrs = {"out_dtype": out_dtype, "a_trans": a_trans, "b_trans": b_trans}
    operands = [a, b]
    extend = kwargs.get("extend_params") or {}
    if isinstance(extend, dict) and extend.get("bias_tensor") is not None:
        operands.append(extend["bias_tensor"])
    if a.shape is None or b.shape is None:
        return ctx.emit("matmul", tuple(operands), attrs, None, out_dtype, tile="cube")
    if len(a.shape) < 2 or len(a.shape) != len(b.shape):
        raise OpError(f"pypto.matmul needs operands of the same rank >= 2, got {shape_text(a.shape)} "
                      f"and {shape_text(b.shape)}")
    m, ka = (a.shape[-1], a.shape[-2]) if a_trans else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if b_trans else (b.shape[-2], b.shape[-1])
    if same_dim(ka, kb) is False:
        raise OpError(f"pypto.matmul: inner dims differ ({ka} vs {kb})")
    batch = broadcast(tuple(a.shape[:-2]), tuple(b.shape[:-2]))  # batch dims of 1 broadcast, as torch.matmul
    return ctx.emit("matmul", tuple(operands), attrs, tuple(batch) + (m, n), out_dtype, tile="cube")


def op_view(ctx, name, args, kwargs):
    src = _tensor(args[0] if args else kwargs.get("input"), "the input of pypto.view")
    shape = _arg(args, kwargs, 1, "shape")
    offsets = _arg(args, kwargs, 2, "offsets")
    valid = kwargs.get("valid_shape")
    if kwargs.get("dtype") is not None:
        raise NotLowered("view(dtype=...)")
    if not isinstance(shape, (list, tuple)) or not isinstance(offsets, (list, tuple)):
        if ctx.building:
            raise OpError("pypto.view needs a shape and offsets known at build time")
        return ctx.emit("view", (src,), {}, None, src.dtype)
    return make_view(ctx, src, list(shape), list(offsets), valid)


def make_view(ctx, src: Tensor, shape: list, offsets: list, valid=None) -> Tensor:
    if src.shape is not None and (len(shape) != len(src.shape) or len(offsets) != len(src.shape)):
        raise OpError(f"pypto.view: shape {shape_text(shape)} and offsets {shape_text(offsets)} must have the "
                      f"rank of the input {shape_text(src.shape)}")
    clipped = list(shape)  # pypto's valid extent of a view without valid_shape (GetViewValidShape)
    for axis, (size, off) in enumerate(zip(shape, offsets)):
        dim = src.shape[axis] if src.shape is not None else None
        s, o, d = const_of(size), const_of(off), const_of(dim)
        if valid is None and None not in (s, o, d) and (o < 0 or o + s > d):
            if axis in src.bound and 0 <= o < d:  # an extent the call gave: pypto clips the block to it
                clipped[axis] = d - o
                continue
            raise OpError(f"pypto.view: axis {axis} covers [{o}, {o + s}) outside the tensor's extent {d}; "
                          "pass valid_shape= for a partial block", kind="bounds")
    if valid is None and clipped != list(shape):
        valid = clipped
    if isinstance(valid, (list, tuple)) and len(valid) != len(shape):
        raise OpError(f"pypto.view: valid_shape {shape_text(valid)} must have the rank of the view's shape "
                      f"{shape_text(shape)} (pypto raises FeError)")
    attrs = {"shape": tuple(shape), "offsets": tuple(offsets)}
    if valid is not None:
        attrs["valid_shape"] = tuple(valid)
    out = ctx.emit("view", (src,), attrs, tuple(shape), src.dtype,
                   valid=tuple(valid) if valid is not None else None, base=src)
    if isinstance(out, Tensor):
        out.view_at = tuple(offsets)
    return out


def op_assemble(ctx, name, args, kwargs):
    if args and isinstance(args[0], (list, tuple)) and args[0] and isinstance(args[0][0], (list, tuple)):
        target = _arg(args, kwargs, 1, "out")
        for part, offsets in args[0]:
            write(ctx, part, target, list(offsets) if isinstance(offsets, (list, tuple)) else offsets)
        return None
    if len(args) < 2:
        raise OpError("pypto.assemble takes (part, offsets, out)")
    part, offsets = args[0], args[1]
    target = _arg(args, kwargs, 2, "out")
    write(ctx, part, target, list(offsets) if isinstance(offsets, (list, tuple)) else offsets)
    return None


def write(ctx, part, target, offsets) -> None:
    target = _tensor(target, "the target of an assemble")
    if ctx.building and not target.named:
        raise OpError("writing into a computed tensor is not supported; write into a parameter or a "
                      "pypto.tensor(...) local")
    if _scalar_ok(part) and not isinstance(part, bool):
        part = call(ctx, "full", (list(target.shape) if target.shape is not None else None, part, target.dtype), {})
    part = _tensor(part, "the value written")
    if part.named and part.shape is not None:  # `out[:] = x` with x a parameter: make the copy explicit
        part = make_view(ctx, part, list(part.shape), [0] * len(part.shape))
    if part.dtype is not None and target.dtype is not None and part.dtype != target.dtype:
        raise OpError(f"writing a {part.dtype.ir} value into {_label(target)} ({target.dtype.ir}): pypto does not "
                      "cast implicitly; use pypto.cast", kind="dtype" if _stored(target) else "")
    if part.rank is not None and target.rank is not None and part.rank != target.rank:
        raise OpError(f"writing a value of shape {shape_text(part.shape)} into {_label(target)} "
                      f"{shape_text(target.shape)}: ranks differ", kind="shape" if _stored(target) else "")
    if not isinstance(offsets, (list, tuple)):
        if ctx.building:
            raise OpError("assemble offsets must be a list known at build time")
        offsets = [None] * (target.rank or 0)
    if not ctx.building and _stored(target):
        _assemble_bounds(ctx, part, target, offsets)
    ctx.emit("assemble", (part, target), {"offsets": tuple(offsets)})
    ctx.wrote(target)


def _label(target) -> str:
    """``@name`` of a write's target; an unnamed ``pypto.tensor(...)`` local in a lint run says so."""
    return f"@{target.name}" if target.name else "a pypto.tensor local"


def _stored(target) -> bool:
    """A parameter or a pypto.tensor local: a write into it stores (a computed tensor's name is
    rebound by ``move``/``[:]``, and the build refuses other writes into it)."""
    return target.origin in ("param", "local")


def _assemble_bounds(ctx, part, target, offsets) -> None:
    """Lint runs only: a part whose static valid extent, at its offset, passes the end of the target
    (pypto 0.2.0 writes it without a word). The part's valid shape counts (a tail block assembled
    with ``valid_shape=`` fits); axes whose extent the call gave are one call's, not checked."""
    if part.shape is None or target.shape is None or len(part.shape) != len(target.shape) \
            or len(offsets) != len(target.shape):
        return
    extents = part.valid if isinstance(part.valid, tuple) and len(part.valid) == len(part.shape) else part.shape
    for axis, (size, off, dim) in enumerate(zip(extents, offsets, target.shape)):
        s, o, d = const_of(size), const_of(off), const_of(dim)
        if None in (s, o, d) or axis in target.bound or isinstance(s, bool) or isinstance(o, bool):
            continue
        if o < 0 or o + s > d:
            ctx.lint_refusal("bounds", f"assemble into @{target.name}: axis {axis} covers [{o}, {o + s}) "
                                       f"outside the tensor's extent {d}")
            return


def op_full(ctx, name, args, kwargs):
    size = _arg(args, kwargs, 0, "size")
    fill = _arg(args, kwargs, 1, "fill_value")
    dtype = dtype_of(_arg(args, kwargs, 2, "dtype", FP32))
    valid = kwargs.get("valid_shape")
    if valid is not None and not isinstance(valid, (list, tuple)):
        if ctx.building:
            raise OpError("pypto.full: valid_shape must be a list known at build time")
        valid = None
    shape = tuple(size) if isinstance(size, (list, tuple)) else None
    attrs = {"shape": shape, "dtype": dtype}
    if valid is not None:
        attrs["valid_shape"] = tuple(valid)
    return ctx.emit("full", (fill,), attrs, shape, dtype, tile="vec", valid=tuple(valid) if valid is not None else None)


def op_zeros(ctx, name, args, kwargs):
    size = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    dtype = dtype_of(kwargs.get("dtype") or FP32)
    return ctx.emit(name, (), {"shape": tuple(size), "dtype": dtype}, tuple(size), dtype, tile="vec")


op_ones = op_zeros


def op_arange(ctx, name, args, kwargs):
    vals = list(args)
    if not vals:
        raise OpError("pypto.arange takes 1 to 3 bounds")
    start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) > 2 else 1)
    is_float = any(isinstance(v, float) for v in (start, stop, step))
    dtype = dtype_of(kwargs["dtype"]) if kwargs.get("dtype") is not None else (FP32 if is_float else INT32)
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in (start, stop, step)) or step == 0:
        if ctx.building:
            raise OpError("pypto.arange needs build-time bounds and a non-zero step")
        return ctx.emit("arange", (), {}, (None,), dtype, tile="vec")
    n = max(0, math.ceil((stop - start) / step))
    return ctx.emit("arange", (), {"start": start, "stop": stop, "step": step, "dtype": dtype}, (n,), dtype,
                    tile="vec")


def op_reshape(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else None, "the input of pypto.reshape")
    shape = _arg(args, kwargs, 1, "shape")
    if not isinstance(shape, (list, tuple)):
        if ctx.building:
            raise OpError("pypto.reshape needs a shape known at build time")
        return ctx.emit("reshape", (x,), {}, None, x.dtype)
    shape = list(shape)
    if -1 in [const_of(d) for d in shape]:
        total = 1
        for d in (x.shape or (None,)):
            c = const_of(d)
            if c is None:
                if ctx.building:
                    raise OpError("pypto.reshape: -1 needs a fully static input shape")
                total = None
                break
            total *= c
        known = 1
        for d in shape:
            c = const_of(d)
            if c != -1:
                known = known * c if c is not None and known is not None else None
        shape = [(total // known if total is not None and known else None) if const_of(d) == -1 else d for d in shape]
    # valid_shape and inplace are kept: the backends check them with pypto's rules (a non-inplace
    # reshape needs an integer shape; the valid data must be a row-major prefix)
    attrs = {"shape": tuple(shape)}
    valid = kwargs.get("valid_shape")
    if isinstance(valid, (list, tuple)):
        if len(valid) != len(shape):
            raise OpError(f"pypto.reshape: valid_shape {shape_text(valid)} must have the rank of the shape "
                          f"{shape_text(shape)}")
        attrs["valid_shape"] = tuple(valid)
    if kwargs.get("inplace") is True:
        attrs["inplace"] = True
    return ctx.emit("reshape", (x,), attrs, tuple(shape), x.dtype,
                    valid=tuple(valid) if isinstance(valid, (list, tuple)) else None)


def op_transpose(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else None, "the input of pypto.transpose")
    rank = x.rank
    d0, d1 = norm_dim(_arg(args, kwargs, 1, "dim0"), rank), norm_dim(_arg(args, kwargs, 2, "dim1"), rank)
    if rank is None or d0 is None or d1 is None:
        return ctx.emit("transpose", (x,), {}, None, x.dtype, tile="vec")
    shape = list(x.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return ctx.emit("transpose", (x,), {"dims": (d0, d1)}, tuple(shape), x.dtype, tile="vec")


def op_unsqueeze(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else None, "the input of pypto.unsqueeze")
    dim = const_of(_arg(args, kwargs, 1, "dim"))
    if x.rank is None or not isinstance(dim, int):
        return ctx.emit("unsqueeze", (x,), {}, None, x.dtype)
    dim = dim + x.rank + 1 if dim < 0 else dim
    shape = tuple(x.shape[:dim]) + (1,) + tuple(x.shape[dim:])
    return ctx.emit("unsqueeze", (x,), {"dim": dim}, shape, x.dtype)


def op_concat(ctx, name, args, kwargs):
    seq = _arg(args, kwargs, 0, "tensors")
    if not isinstance(seq, (list, tuple)) or not seq:
        raise OpError("pypto.concat takes a list of tensors")
    parts = [_tensor(t, "a pypto.concat input") for t in seq]
    rank = parts[0].rank
    dim = norm_dim(_arg(args, kwargs, 1, "dim", 0), rank)
    if rank is None or dim is None or any(p.shape is None for p in parts):
        return ctx.emit("concat", (tuple(parts),), {}, None, parts[0].dtype, tile="vec")
    total = to_expr(parts[0].shape[dim])
    for p in parts[1:]:
        e = to_expr(p.shape[dim])
        total = binexpr("+", total, e) if total is not None and e is not None else None
    shape = list(parts[0].shape)
    shape[dim] = ctx.scalar(total) if total is not None else None
    return ctx.emit("concat", (tuple(parts),), {"dim": dim}, tuple(shape), parts[0].dtype, tile="vec")


def op_expand_clone(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else None, "the input of pypto.expand_clone")
    shape = _arg(args, kwargs, 1, "shape")
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else None
    broadcast(x.shape, shape)
    return ctx.emit("expand_clone", (x,), {"shape": shape}, shape, x.dtype, tile="vec")


def op_pad(ctx, name, args, kwargs):
    x = _tensor(args[0] if args else None, "the input of pypto.pad")
    pad = _arg(args, kwargs, 1, "pad")
    value = _arg(args, kwargs, 3, "value", 0.0)
    if not isinstance(pad, (list, tuple)) or x.shape is None:
        return ctx.emit("pad", (x,), {}, None, x.dtype, tile="vec")
    pad = tuple(pad)
    shape = list(x.shape)
    for i in range(len(pad) // 2):
        axis = len(shape) - 1 - i
        e, extra = to_expr(shape[axis]), to_expr(pad[2 * i] + pad[2 * i + 1]) if all(
            isinstance(p, int) for p in pad[2 * i:2 * i + 2]) else None
        shape[axis] = ctx.scalar(binexpr("+", e, extra)) if e is not None and extra is not None else None
    return ctx.emit("pad", (x,), {"pad": pad, "value": value}, tuple(shape), x.dtype, tile="vec")


def op_min(ctx, name, args, kwargs):
    if len(args) != 2:
        raise OpError(f"pypto.{name} takes two operands")
    a, b = args
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return binary(ctx, "minimum" if name == "min" else "maximum", (a, b), {})
    return ctx.combine(name, a, b)


op_max = op_min


# -- indexing ---------------------------------------------------------------------------------
def _split_key(tensor: Tensor, key):
    items = list(key) if isinstance(key, tuple) else [key]
    rank = tensor.rank
    if any(k is Ellipsis for k in items):
        if rank is None:
            return None
        i = items.index(Ellipsis)
        items = items[:i] + [slice(None)] * (rank - len(items) + 1) + items[i + 1:]
    if rank is not None:
        items += [slice(None)] * (rank - len(items))
    return items


def _is_full(k) -> bool:
    return isinstance(k, slice) and k.start is None and k.stop is None and k.step is None


def is_full_key(tensor: Tensor, key) -> bool:
    """``t[:]``, ``t[:, :]``, ``t[...]``: the key covers the whole tensor."""
    items = _split_key(tensor, key)
    return items is not None and all(_is_full(k) for k in items)


def getitem(ctx, tensor: Tensor, key):
    items = _split_key(tensor, key)
    if items is None:
        return ctx.emit("view", (tensor,), {}, None, tensor.dtype, base=tensor)
    if tensor.rank is not None and len(items) != tensor.rank:
        raise OpError(f"index has {len(items)} entries for a tensor of rank {tensor.rank}")
    if all(not isinstance(k, slice) for k in items):
        if ctx.building and not tensor.named:
            raise OpError("reading a scalar from a computed tensor is not supported; read from a "
                          "parameter or a pypto.tensor local")
        if tensor.dtype is not None and tensor.dtype != INT32:
            raise OpError(f"scalar reads need an int32 tensor, @{tensor.name} is {tensor.dtype.ir} "
                          "(pypto 0.2.0: tensor dtype must be DT_INT32)", kind="element-dtype")
        return ctx.read_scalar(tensor, items)
    if all(_is_full(k) for k in items):
        return tensor
    region = _slice_region(ctx, tensor, items)
    if region is None:
        return ctx.emit("view", (tensor,), {}, None, tensor.dtype, base=tensor)
    shape, offsets, drop = region
    view = make_view(ctx, tensor, shape, offsets)
    if drop:
        kept = [d for i, d in enumerate(shape) if i not in drop]
        view = ctx.emit("reshape", (view,), {"shape": tuple(kept)}, tuple(kept), view.dtype, base=view)
    return view


def _slice_region(ctx, tensor, items):
    """(shape, offsets, dropped axes) of a slicing key, or None when the shape is not known."""
    shape, offsets, drop = [], [], set()
    for axis, k in enumerate(items):
        dim = tensor.shape[axis] if tensor.shape is not None else None
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise OpError("slice step must be 1 or None (pypto 0.2.0: step must be 1 or None)", kind="step")
            start = 0 if k.start is None else k.start
            stop = dim if k.stop is None else k.stop
            if const_of(start) is not None and const_of(start) < 0 and const_of(dim) is not None:
                start = const_of(dim) + const_of(start)
            if const_of(stop) is not None and const_of(stop) < 0 and const_of(dim) is not None:
                stop = const_of(dim) + const_of(stop)
            es, ee = to_expr(start), to_expr(stop)
            size = ctx.scalar(binexpr("-", ee, es)) if es is not None and ee is not None else None
            if const_of(size) is None:
                if ctx.building:
                    raise OpError(f"the extent of slice {_slice_text(k)} on axis {axis} is not a build-time int; "
                                  "use pypto.view with a static shape and valid_shape=")
                shape.append(None)
            else:
                shape.append(const_of(size))
            offsets.append(start)
        else:
            shape.append(1)
            offsets.append(_from_end(k, dim))
            drop.add(axis)
    return shape, offsets, drop


def _from_end(k, dim):
    """An int index counted from the end (``t[-2]``) as pypto counts it: ``dim - 2``."""
    if const_of(k) is not None and const_of(k) < 0 and const_of(dim) is not None:
        return const_of(dim) + const_of(k)
    return k


def _slice_text(k: slice) -> str:
    def one(v):
        return "" if v is None else (v.text if isinstance(v, Sym) else str(v))
    return f"{one(k.start)}:{one(k.stop)}"


def setitem(ctx, tensor: Tensor, key, value):
    """``t[key] = value``: pypto 0.2.0 assembles ``value`` at the starts of the slices; the stops
    are ignored (a stop that disagrees with the value's extent is worth a warning)."""
    if ctx.building and not tensor.named:
        raise OpError("writing into a computed tensor is not supported; write into a parameter or a "
                      "pypto.tensor(...) local")
    items = _split_key(tensor, key)
    if items is None:
        ctx.wrote(tensor)
        return
    if all(not isinstance(k, slice) for k in items) and _scalar_ok(value) and not isinstance(value, Tensor):
        ctx.emit("store_scalar", (value, tensor), {"index": tuple(items)})
        ctx.wrote(tensor)
        return
    if all(_is_full(k) for k in items):
        write(ctx, value, tensor, [0] * len(items))
        return
    offsets, drop = [], set()
    for axis, k in enumerate(items):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise OpError("slice step must be 1 or None (pypto 0.2.0: step must be 1 or None)", kind="step")
            start = 0 if k.start is None else k.start
            dim = tensor.shape[axis] if tensor.shape is not None else None
            if const_of(start) is not None and const_of(start) < 0 and const_of(dim) is not None:
                start = const_of(dim) + const_of(start)
            offsets.append(start)
            if k.stop is not None and isinstance(value, Tensor) and value.shape is not None:
                ctx.check_slice_stop(axis, k, start, value)
        else:
            offsets.append(_from_end(k, tensor.shape[axis] if tensor.shape is not None else None))
            drop.add(axis)
    if isinstance(value, Tensor) and drop and value.rank is not None and value.rank == len(items) - len(drop):
        shape = []
        it = iter(value.shape)
        for axis in range(len(items)):
            shape.append(1 if axis in drop else next(it))
        value = ctx.emit("reshape", (value,), {"shape": tuple(shape)}, tuple(shape), value.dtype, base=value)
    write(ctx, value, tensor, offsets)


def binexpr(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """``a op b`` with constants folded and linear terms that cancel simplified."""
    from .symbolic import binexpr as fold

    return fold(op, a, b)


# -- ops lowered to IR that the backends do not run yet ---------------------------------------
# Their shapes and dtypes follow pypto's documentation; the interpreter and the host backend
# report them as unsupported when a program that holds one is run or emitted.
UNARY |= {"erf", "erfc", "acosh", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "tanh", "asin", "acos",
          "bitwise_not", "cumprod"}
UNARY_ATTRS["cumprod"] = (("dim", 0),)
BINARY |= {"atan2", "bitwise_left_shift", "bitwise_right_shift", "floor_div", "ceil_div", "prelu"}


def _page_dtype(name: str, x: Tensor, allowed: tuple, what: str = "", page: str = "") -> None:
    """What pypto's op page excludes is refused where it is written (PTO106), naming the page."""
    if x.dtype is not None and x.dtype.ir not in allowed:
        raise OpError(f"pypto.{name}{what} takes {'/'.join(allowed)}, not {x.dtype.ir} "
                      f"(op page: pypto-{page or name}.md)")


def _build_time_dim(name: str, dim, rank) -> Optional[int]:
    d = norm_dim(dim, rank)
    if d is None and rank is not None:
        raise OpError(f"pypto.{name} needs dim known at build time")
    return d


def op_argmax(ctx, name, args, kwargs):
    """argmax/argmin(input, dim, keepdim=False): int32 indices, the reduced shape."""
    x = _tensor(args[0] if args else kwargs.get("input"), f"the input of pypto.{name}")
    _page_dtype(name, x, ("fp16", "bf16", "fp32"))
    dim = _build_time_dim(name, _arg(args, kwargs, 1, "dim", -1), x.rank)
    keepdim = _arg(args, kwargs, 2, "keepdim", False)
    shape = None
    if dim is not None and isinstance(keepdim, bool):
        shape = tuple(1 if i == dim else d for i, d in enumerate(x.shape)) if keepdim else \
            tuple(d for i, d in enumerate(x.shape) if i != dim)
    return ctx.emit(name, (x,), {"dim": dim, "keepdim": keepdim}, shape, INT32, tile="vec", valid=None)


op_argmin = op_argmax


def op_argsort(ctx, name, args, kwargs):
    """argsort(input, dim=None, descending=False): int32 indices of a stable sort (0.2.0's default
    is ascending although the page says descending)."""
    x = _tensor(args[0] if args else kwargs.get("input"), "the input of pypto.argsort")
    _page_dtype(name, x, ("fp32", "fp16"))
    dim = _arg(args, kwargs, 1, "dim", -1)
    dim = _build_time_dim(name, -1 if dim is None else dim, x.rank)
    descending = _arg(args, kwargs, 2, "descending", False)
    return ctx.emit("argsort", (x,), {"dim": dim if dim is not None else -1, "descending": descending}, x.shape,
                    INT32, tile="vec", valid=x.valid)


def op_topk(ctx, name, args, kwargs):
    """topk(input, k, dim=-1, largest=True) -> (values, int32 indices), sorted, along the last dim."""
    x = _tensor(args[0] if args else kwargs.get("input"), "the input of pypto.topk")
    _page_dtype(name, x, ("fp32",), " (MERGE_SORT, the A2 algorithm)")
    k = _arg(args, kwargs, 1, "k")
    dim = _arg(args, kwargs, 2, "dim", -1)
    dim = norm_dim(-1 if dim is None else dim, x.rank)
    largest = _arg(args, kwargs, 3, "largest", True)
    if const_of(k) is None or dim is None:
        raise OpError("pypto.topk needs k and dim known at build time")
    if dim != x.rank - 1:
        raise OpError(f"pypto.topk sorts along the last dim only, not dim {dim} (op page: pypto-topk.md)")
    n = const_of(x.shape[dim])
    if not 1 <= const_of(k) <= (n if n is not None else const_of(k)):
        raise OpError(f"pypto.topk: k = {const_of(k)} outside [1, {n}] (op page: pypto-topk.md)")
    shape = tuple(const_of(k) if i == dim else d for i, d in enumerate(x.shape))
    attrs = {"k": const_of(k), "dim": dim, "largest": largest}
    values = ctx.emit("topk", (x,), attrs, shape, x.dtype, tile="vec")
    indices = ctx.emit("topk_indices", (x,), attrs, shape, INT32, tile="vec")
    return values, indices


def _fp32_2d(name, x, what):
    x = _tensor(x, f"{what} of pypto.experimental.{name}")
    if x.dtype is not None and x.dtype.ir != "fp32":
        raise OpError(f"pypto.experimental.{name} takes fp32 {what}, not {x.dtype.ir} "
                      f"(op page: pypto-experimental-{name}.md)")
    if x.rank is not None and x.rank != 2:
        raise OpError(f"pypto.experimental.{name}: {what} must be 2-D (op page: pypto-experimental-{name}.md)")
    return x


def op_online_softmax(ctx, name, args, kwargs):
    """online_softmax(scores [k, q] fp32, scale) -> (exp bf16, column max [1, q], column sum [1, q]),
    the ops its page describes: s = scores * scale, m = amax(s, 0), e = exp(s - m), the sum of e in
    fp32, e rounded once to bf16."""
    x = _fp32_2d("online_softmax", args[0] if args else kwargs.get("scores"), "scores")
    scale = _arg(args, kwargs, 1, "scale")
    if not isinstance(const_of(scale), (int, float)):
        raise OpError("pypto.experimental.online_softmax needs a scale known at build time")
    s = call(ctx, "mul", (x, float(const_of(scale))), {})
    m = call(ctx, "amax", (s, 0, True), {})
    e = call(ctx, "exp", (call(ctx, "sub", (s, m), {}),), {})
    total = call(ctx, "sum", (e, 0, True), {})
    return call(ctx, "cast", (e, DTYPES["DT_BF16"]), {}), m, total


def op_online_softmax_update(ctx, name, args, kwargs):
    """online_softmax_update(prev max, prev sum, prev out, cur max, cur sum, cur out) -> the merged
    (max, sum, out): m = maximum(pm, cm), a = exp(pm - m), b = exp(cm - m), sum = ps*a + cs*b,
    out = po*a + co*b (the [1, q] factors broadcast over the rows)."""
    names = ("previous_max", "previous_sum", "previous_output", "current_max", "current_sum", "current_output")
    pm, ps, po, cm, cs, co = (_fp32_2d("online_softmax_update", _arg(args, kwargs, i, n), n)
                              for i, n in enumerate(names))
    m = call(ctx, "maximum", (pm, cm), {})
    a = call(ctx, "exp", (call(ctx, "sub", (pm, m), {}),), {})
    b = call(ctx, "exp", (call(ctx, "sub", (cm, m), {}),), {})
    total = call(ctx, "add", (call(ctx, "mul", (ps, a), {}), call(ctx, "mul", (cs, b), {})), {})
    out = call(ctx, "add", (call(ctx, "mul", (po, a), {}), call(ctx, "mul", (co, b), {})), {})
    return m, total, out


_GATHER_DTYPES = ("int16", "int32", "uint16", "uint32", "fp16", "fp32", "bf16")
_SCATTER_DTYPES = ("fp32", "fp16", "bf16", "int8", "uint8", "int16", "int32")


def _index_operand(name: str, index: Tensor, x: Tensor, allowed=("int32", "int64"), page: str = "") -> None:
    _page_dtype(name, index, allowed, " index", page)
    if x.rank is not None and index.rank is not None and x.rank != index.rank and name in ("gather", "scatter"):
        raise OpError(f"pypto.{name}: the index has rank {index.rank}, the input {x.rank} (op page: "
                      f"pypto-{page or name}.md)")


def _index_fits(name: str, index: Tensor, other: Tensor, dim, what: str, page: str) -> None:
    """The op page's ``index.shape[d] <= other.shape[d]`` (for every d but ``dim``)."""
    if index.shape is None or other.shape is None or len(index.shape) != len(other.shape):
        return
    for d, (a, b) in enumerate(zip(index.shape, other.shape)):
        if d != dim and const_of(a) is not None and const_of(b) is not None and const_of(a) > const_of(b):
            raise OpError(f"pypto.{name}: the index's dim {d} ({const_of(a)}) exceeds {what}'s ({const_of(b)}) "
                          f"(op page: pypto-{page}.md)")


def op_gather(ctx, name, args, kwargs):
    """gather(input, dim, index): the index's shape, the input's dtype."""
    x = _tensor(_arg(args, kwargs, 0, "input"), "the input of pypto.gather")
    index = _tensor(_arg(args, kwargs, 2, "index"), "the index of pypto.gather")
    _page_dtype(name, x, _GATHER_DTYPES)
    _index_operand(name, index, x)
    dim = _build_time_dim(name, _arg(args, kwargs, 1, "dim"), x.rank)
    _index_fits(name, index, x, dim, "the input", "gather")
    return ctx.emit("gather", (x, index), {"dim": dim}, index.shape, x.dtype, tile="vec")


def op_scatter(ctx, name, args, kwargs):
    """scatter / scatter_(input, dim, index, src, *, reduce=None): a new tensor of the input's shape;
    src a tensor of the input's dtype or a finite scalar."""
    x = _tensor(_arg(args, kwargs, 0, "input"), f"the input of pypto.{name}")
    index = _tensor(_arg(args, kwargs, 2, "index"), f"the index of pypto.{name}")
    src = _arg(args, kwargs, 3, "src", kwargs.get("value"))
    _page_dtype(name, x, _SCATTER_DTYPES, page="scatter_")
    _index_operand(name, index, x, page="scatter_")
    dim = _build_time_dim(name, _arg(args, kwargs, 1, "dim"), x.rank)
    reduce = kwargs.get("reduce")
    if reduce not in (None, "add", "multiply"):
        raise OpError(f"pypto.{name}: reduce must be None, 'add' or 'multiply', not {reduce!r} "
                      "(op page: pypto-scatter_.md)")
    _index_fits(name, index, x, dim, "the input", "scatter_")
    if isinstance(src, Tensor):
        if src.dtype is not None and x.dtype is not None and src.dtype != x.dtype:
            raise OpError(f"pypto.{name}: src is {src.dtype.ir}, the input {x.dtype.ir} (op page: pypto-scatter_.md)")
        _index_fits(name, index, src, None, "src", "scatter_")
    else:
        value = const_of(src.value if isinstance(src, Element) else src)
        if isinstance(value, float) and not math.isfinite(value):
            raise OpError(f"pypto.{name}: a scalar src must be finite, not {value} (op page: pypto-scatter_.md)")
    attrs = {"dim": dim} if reduce is None else {"dim": dim, "reduce": reduce}
    return ctx.emit("scatter", (x, index, src), attrs, x.shape, x.dtype, tile="vec")



def op_gather_in_ub(ctx, name, args, kwargs):
    """experimental.gather_in_ub(param, indices, block_table, block_size, axis=-2): row j of the
    result is the paged-cache row of token ``indices[0, j]``: ``block_table[0, t // block_size] *
    block_size + t % block_size``, counted from ``param``'s origin in the GM tensor it views and
    not bounded by the view's extent (pypto's GatherInUB adds the row offset to the view's base
    address); shape [k, param's columns], valid over the indices' valid k."""
    param = _tensor(_arg(args, kwargs, 0, "param"), "the param of pypto.experimental.gather_in_ub")
    indices = _tensor(_arg(args, kwargs, 1, "indices"), "the indices of pypto.experimental.gather_in_ub")
    table = _tensor(_arg(args, kwargs, 2, "block_table"), "the block table of pypto.experimental.gather_in_ub")
    block_size = _arg(args, kwargs, 3, "block_size")
    axis = _arg(args, kwargs, 4, "axis", -2)
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size <= 0:
        raise OpError("pypto.experimental.gather_in_ub needs a positive block_size known at build time")
    if axis != -2:
        raise OpError(f"pypto.experimental.gather_in_ub: only axis -2 is supported, not {axis}")
    for t, what in ((param, "param"), (indices, "indices"), (table, "block_table")):
        if t.rank is not None and t.rank != 2:
            raise OpError(f"pypto.experimental.gather_in_ub: {what} must be 2-D, not rank {t.rank}")
    if indices.shape is not None and indices.shape[0] != 1 or table.shape is not None and table.shape[0] != 1:
        raise OpError("pypto.experimental.gather_in_ub: indices and block_table must be [1, n]")
    source, at = param, (0, 0)
    if param.view_at is not None and param.base is not None and param.base.named:
        source, at = param.base, param.view_at
    if ctx.building and not source.named:
        raise OpError("pypto.experimental.gather_in_ub reads a GM tensor: give it a parameter or a view of one")
    k = indices.shape[1] if indices.shape is not None else None
    cols = param.shape[1] if param.shape is not None else None
    valid = None
    if indices.valid is not None:
        valid = (indices.valid[1], cols)
    return ctx.emit("gather_in_ub", (source, indices, table),
                    {"block_size": block_size, "offsets": tuple(at), "cols": cols},
                    (k, cols), param.dtype, tile="vec", valid=valid)


def op_scatter_update(ctx, name, args, kwargs):
    """scatter_update(input, dim=-2, index, src): rows of input at index take src's rows."""
    x = _tensor(_arg(args, kwargs, 0, "input"), "the input of pypto.scatter_update")
    index = _tensor(_arg(args, kwargs, 2, "index"), "the index of pypto.scatter_update")
    src = _tensor(_arg(args, kwargs, 3, "src"), "the src of pypto.scatter_update")
    _page_dtype(name, x, ("fp32", "fp16", "bf16", "int32", "int16"))
    _index_operand(name, index, x, ("int64", "int32", "int16"))
    dim = const_of(_arg(args, kwargs, 1, "dim", -2))
    if dim != -2:
        raise OpError(f"pypto.scatter_update: dim must stay -2, not {dim} (op page: pypto-scatter_update.md)")
    return ctx.emit("scatter_update", (x, index, src), {"dim": -2}, x.shape, x.dtype, tile="vec")


def op_one_hot(ctx, name, args, kwargs):
    """one_hot(input, num_classes): int64, the input's shape plus num_classes."""
    x = _tensor(_arg(args, kwargs, 0, "input"), "the input of pypto.one_hot")
    _page_dtype(name, x, ("int8", "int16", "int32", "int64"))
    n = const_of(_arg(args, kwargs, 1, "num_classes"))
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise OpError("pypto.one_hot needs a positive num_classes known at build time")
    shape = tuple(x.shape) + (n,) if x.shape is not None else None
    return ctx.emit("one_hot", (x,), {"num_classes": n}, shape, INT64, tile="vec")


def op_cumsum(ctx, name, args, kwargs):
    """cumsum / cumprod(input, dim): the input's shape; cumsum of an integer input is int64."""
    x = _tensor(_arg(args, kwargs, 0, "input"), f"the input of pypto.{name}")
    _page_dtype(name, x, ("fp16", "bf16", "int16", "int32", "fp32") if name == "cumsum" else ("fp16", "bf16", "fp32"))
    dim = _build_time_dim(name, _arg(args, kwargs, 1, "dim", 0), x.rank)
    dtype = INT64 if x.dtype is not None and x.dtype.ir.startswith("int") else x.dtype
    return ctx.emit(name, (x,), {"dim": dim}, x.shape, dtype, tile="vec", valid=x.valid)


op_cumprod = op_cumsum


def op_uniform(ctx, name, args, kwargs):
    """uniform / normal(shape, key, counter, alg, dtype): a new tensor of that shape."""
    shape = _arg(args, kwargs, 0, "shape")
    dtype = dtype_of(_arg(args, kwargs, 4, "dtype")) or FP32
    if not isinstance(shape, (list, tuple)):
        raise OpError(f"pypto.{name} needs a shape known at build time")
    from ..ir.rng_spec import check_args

    seeds = [_arg(args, kwargs, i, k) for i, k in ((1, "key"), (2, "counter"), (3, "alg"))]
    seeds = [[const_of(v) for v in x] if isinstance(x, (list, tuple)) else x for x in seeds]
    wrong = check_args(*seeds)
    if wrong:
        raise OpError(f"pypto.{name}: {wrong}, known at build time (op page: pypto-{name}.md)")
    if dtype is not None and dtype.ir not in ("fp32", "fp16", "bf16"):
        raise OpError(f"pypto.{name} makes DT_FP32/DT_FP16/DT_BF16, not {dtype.ir} (op page: pypto-{name}.md)")
    attrs = {"shape": tuple(shape), "key": tuple(seeds[0]), "counter": tuple(seeds[1]), "alg": tuple(seeds[2])}
    return ctx.emit(name, (), attrs, tuple(shape), dtype, tile="vec")


op_normal = op_uniform


def op_quantize(ctx, name, args, kwargs):
    """quantize / dequantize(input, scale, otype, axis, zero_points=None) (op pages pypto-quantize.md,
    pypto-dequantize.md): the input's shape in ``otype``; ``scale`` and ``zero_points`` have one axis
    fewer (axis -1: [..., row], one value per row; axis -2: [..., col], one per column)."""
    x = _tensor(_arg(args, kwargs, 0, "input"), f"the input of pypto.{name}")
    scale = _tensor(_arg(args, kwargs, 1, "scale"), f"the scale of pypto.{name}")
    otype = dtype_of(_arg(args, kwargs, 2, "otype"))
    axis = const_of(_arg(args, kwargs, 3, "axis", -1))
    zp = _arg(args, kwargs, 4, "zero_points")
    if name == "quantize":
        _page_dtype(name, x, ("fp32",))
        want = "uint8" if zp is not None else "int8"
        if otype is None or otype.ir != want:
            raise OpError(f"pypto.quantize {'with' if zp is not None else 'without'} zero_points gives "
                          f"{want.upper()} ({'asymmetric' if zp is not None else 'symmetric'}), otype "
                          f"{otype.ir if otype is not None else None} (op page: pypto-quantize.md)")
    else:
        _page_dtype(name, x, ("int8", "int16"))
        if otype is None or otype.ir != "fp32":
            raise OpError(f"pypto.dequantize gives DT_FP32, otype {otype.ir if otype is not None else None} "
                          "(op page: pypto-dequantize.md)")
    rank = x.rank
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise OpError(f"pypto.{name} needs axis known at build time")
    if rank is not None:
        a = axis - rank if axis >= 0 else axis
        if a not in (-1, -2) or (rank == 1 and a != -1):
            raise OpError(f"pypto.{name} quantizes along the last two axes only (axis -1 or -2; -1 for a 1-D "
                          f"input), not axis {axis} of a rank-{rank} input (op page: pypto-{name}.md)")
        axis = a
    params = [("scale", scale)] + ([("zero_points", _tensor(zp, f"the zero_points of pypto.{name}"))]
                                   if zp is not None else [])
    for what, t in params:
        _page_dtype(name, t, ("fp32",), f" {what}")
        if x.shape is not None and t.shape is not None and rank is not None:
            want = tuple(x.shape[:-1]) if axis == -1 else tuple(x.shape[:-2]) + (x.shape[-1],)
            if rank == 1:
                want = (1,)
            if len(t.shape) != len(want) or any(isinstance(a, int) and isinstance(b, int) and a != b
                                                for a, b in zip(t.shape, want)):
                raise OpError(f"pypto.{name}: {what} of shape {list(t.shape)} for an input of shape "
                              f"{list(x.shape)} along axis {axis} (want {list(want)}; op page: pypto-{name}.md)")
    operands = (x,) + tuple(t for _, t in params)
    return ctx.emit(name, operands, {"dtype": otype, "axis": axis}, x.shape, otype, tile="vec", valid=x.valid)


op_dequantize = op_quantize


def op_conv(ctx, name, args, kwargs):
    """conv(input, weight, out_dtype, strides, paddings, dilations, *, groups=1, ...): NC(D)HW in,
    (Cout, Cin/groups, K...) weight; each output extent is (in + pads - dilation*(k-1) - 1)//stride + 1.

    pypto's own rules (op/conv.py, pypto-conv.md) are PTO106 here: dtypes, transposed conv, ranks,
    parameter lengths, groups.  ``extend_params``: the bias is the third operand; ``relu_type``
    RELU becomes ``relu``; a scale (quantized conv) is kept as ``scale`` for the emitter to name."""
    x = _tensor(_arg(args, kwargs, 0, "input_conv"), "the input of pypto.conv")
    w = _tensor(_arg(args, kwargs, 1, "weight"), "the weight of pypto.conv")
    _page_dtype(name, x, ("fp16", "bf16", "fp32"))
    if x.dtype is not None and w.dtype is not None and x.dtype.ir != w.dtype.ir:
        raise OpError(f"pypto.conv: input and weight data types must be consistent, got {x.dtype.ir} and "
                      f"{w.dtype.ir} (op page: pypto-conv.md)")
    out_dtype = dtype_of(_arg(args, kwargs, 2, "out_dtype")) or x.dtype
    if out_dtype is not None and x.dtype is not None and out_dtype.ir != x.dtype.ir:
        raise OpError(f"pypto.conv: the output data type must be the input's ({x.dtype.ir}), got {out_dtype.ir} "
                      f"(op page: pypto-conv.md)")
    if kwargs.get("transposed") is True:
        raise OpError("pypto.conv: transposed conv is not supported (pypto: 'Conv transpose true is not supported "
                      "yet.')")
    if x.rank is not None and w.rank is not None and (x.rank != w.rank or x.rank not in (3, 4, 5)):
        raise OpError(f"pypto.conv: input and weight must both have rank 3, 4 or 5, got {x.rank} and {w.rank}")
    strides, pads, dils = (_arg(args, kwargs, i, key) for i, key in ((3, "strides"), (4, "paddings"),
                                                                    (5, "dilations")))
    groups = kwargs.get("groups", 1)
    if x.rank is not None:
        n = x.rank - 2
        for what, v, want in (("strides", strides, n), ("dilations", dils, n), ("paddings", pads, 2 * n)):
            if isinstance(v, (list, tuple)) and len(v) != want:
                raise OpError(f"pypto.conv: {what} of a {n}-D conv needs {want} values, got {len(v)}")
    if isinstance(groups, int) and x.shape is not None and w.shape is not None:
        cin, cout, cin_w = (const_of(d) for d in (x.shape[1], w.shape[0], w.shape[1]))
        if groups < 1 or (cin is not None and cin_w is not None and cin != cin_w * groups) or \
                (cout is not None and cout % groups):
            raise OpError(f"pypto.conv: groups={groups} must divide Cout and give Cin = Cin(weight) * groups "
                          f"(input Cin {cin}, weight {list(w.shape)})")
    shape = None
    if x.shape is not None and w.shape is not None and len(x.shape) == len(w.shape) >= 3 and all(
            isinstance(v, (list, tuple)) for v in (strides, pads, dils)):
        n = len(x.shape) - 2
        spatial = []
        for i in range(n):
            extent, k = const_of(x.shape[2 + i]), const_of(w.shape[2 + i])
            stride, dil = const_of(strides[i]) if i < len(strides) else None, const_of(dils[i]) if i < len(dils) else None
            lo, hi = (const_of(pads[2 * i]), const_of(pads[2 * i + 1])) if len(pads) >= 2 * n else (None, None)
            if None in (extent, k, stride, dil, lo, hi) or not stride:
                spatial.append(None)
            else:
                spatial.append((extent + lo + hi - dil * (k - 1) - 1) // stride + 1)
        shape = (x.shape[0], w.shape[0]) + tuple(spatial)
    extend = kwargs.get("extend_params")
    extend = extend if isinstance(extend, dict) else {}
    bias = extend.get("bias_tensor")
    operands = (x, w) + ((bias,) if isinstance(bias, Tensor) else ())
    if isinstance(bias, Tensor) and bias.dtype is not None and x.dtype is not None and bias.dtype.ir not in (
            (x.dtype.ir, "fp32") if x.dtype.ir == "bf16" else (x.dtype.ir,)):
        raise OpError(f"pypto.conv: a {x.dtype.ir} conv takes a {x.dtype.ir} bias"
                      f"{' (or fp32, as A2 and A3 require)' if x.dtype.ir == 'bf16' else ''}, not {bias.dtype.ir} "
                      f"(op page: pypto-conv.md)")
    attrs = {"strides": tuple(strides) if isinstance(strides, (list, tuple)) else None,
             "paddings": tuple(pads) if isinstance(pads, (list, tuple)) else None,
             "dilations": tuple(dils) if isinstance(dils, (list, tuple)) else None,
             "groups": groups}
    relu = extend.get("relu_type")
    relu = getattr(relu, "qualname", relu)
    if isinstance(relu, str) and relu.endswith(".RELU"):
        attrs["relu"] = True
    elif relu is not None and not (isinstance(relu, str) and relu.endswith(".NO_RELU")):
        attrs["relu"] = str(relu)  # a relu type the emitter does not know: it names it
    if extend.get("scale") not in (None, 0, 0.0) or extend.get("scale_tensor") is not None:
        attrs["scale"] = True
    return ctx.emit("conv", operands, attrs, shape, out_dtype, tile="cube")


_HANDLERS = {
    name[3:]: fn for name, fn in list(globals().items()) if name.startswith("op_") and callable(fn)
}
_HANDLERS["experimental.gather_in_ub"] = _HANDLERS["experimental.gather.gather_in_ub"] = _HANDLERS.pop("gather_in_ub")
for _name in ("online_softmax", "online_softmax_update"):  # pypto.experimental.*
    _HANDLERS["experimental." + _name] = _HANDLERS["experimental.operation." + _name] = _HANDLERS.pop(_name)
