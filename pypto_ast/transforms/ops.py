"""The pypto op surface while tracing: argument handling, shape/dtype rules, IR emission.

One entry per op family; ``dispatch`` finds the handler by op name.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from ..lang import DataType, Element

from .. import ir
from .symbolic import Sym, binexpr, const_of, to_expr, wrap
from .tensors import TensorH, broadcast, ir_dtype, norm_dim, shape_text

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


# -- operands and attributes ----------------------------------------------------------------
def operand(x: Any) -> Any:
    if isinstance(x, TensorH):
        return x.ref
    if isinstance(x, (list, tuple)):
        return tuple(operand(v) for v in x)
    return to_expr(x)


def attr_value(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(attr_value(x) for x in v)
    if isinstance(v, Sym):  # constants stay plain numbers: attrs never hold Const
        return v.expr.value if isinstance(v.expr, ir.Const) else v.expr
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, DataType):
        return ir_dtype(v)
    if isinstance(v, enum.Enum):  # CastMode, SaturationMode, ...
        return v.value if isinstance(v.value, str) else v.name
    if isinstance(v, Element):
        return v.value
    expr = to_expr(v)
    return expr.value if isinstance(expr, ir.Const) else expr


def _tensor(tracer, x, what: str) -> TensorH:
    if not isinstance(x, TensorH):
        raise tracer.error(f"{what} must be a tensor, got {type(x).__name__}")
    return x


def _scalar_ok(x) -> bool:
    return isinstance(x, (int, float, Sym, Element))


def _valid_of(*tensors):
    for t in tensors:
        if isinstance(t, TensorH) and t.valid is not None:
            return t.valid
    return None


# -- dispatch ------------------------------------------------------------------------------
def dispatch(tracer, name: str, args: tuple, kwargs: dict):
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
            raise tracer.error(f"pypto.{name} is not supported by pypto-ast yet")
    return handler(tracer, name, args, kwargs)


def binary(tracer, name, args, kwargs):
    if len(args) != 2:
        raise tracer.error(f"pypto.{name} takes two operands")
    a, b = args
    if not isinstance(a, TensorH) and isinstance(b, TensorH):
        if name in ("add", "mul", "maximum", "minimum"):
            a, b = b, a
        else:  # scalar - tensor, scalar / tensor, ...: materialise the scalar as a tensor
            a = tracer.call("full", (list(b.shape), a, b.dtype), {})
    a = _tensor(tracer, a, f"the first operand of pypto.{name}")
    if isinstance(b, TensorH):
        if a.dtype != b.dtype:
            raise tracer.error(f"pypto.{name}: operands have different dtypes ({a.dtype}, {b.dtype}); "
                               "cast one explicitly (pypto 0.2.0: FC0000)")
        shape = broadcast(a.shape, b.shape)
    elif _scalar_ok(b):
        shape = a.shape
    else:
        raise tracer.error(f"pypto.{name}: unsupported operand {type(b).__name__}")
    attrs = {k: kwargs[k] for k in ("alpha",) if k in kwargs}
    return tracer.emit(name, (a, b), attrs, shape, a.dtype, tile="vec", valid=_valid_of(a, b))


def compare(tracer, name, args, kwargs):
    a, b = args[0], args[1]
    a = _tensor(tracer, a, f"the first operand of pypto.{name}")
    shape = broadcast(a.shape, b.shape) if isinstance(b, TensorH) else a.shape
    return tracer.emit(name, (a, b), {}, shape, "bool", tile="vec", valid=_valid_of(a, b))


def unary(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0] if args else kwargs.get("input"), f"the input of pypto.{name}")
    attrs = {}
    for i, (key, default) in enumerate(UNARY_ATTRS.get(name, ())):
        value = args[1 + i] if len(args) > 1 + i else kwargs.get(key, default)
        attrs[key] = value
    dtype = "bool" if name in UNARY_BOOL else x.dtype
    if name == "cumsum" and dtype.startswith("int"):
        dtype = "int64"
    return tracer.emit(name, (x,), attrs, x.shape, dtype, tile="vec", valid=x.valid)


def reduce(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], f"the input of pypto.{name}")
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False))
    rank = len(x.shape)
    if dim is None:
        dims = tuple(range(rank))
    elif isinstance(dim, (list, tuple)):
        dims = tuple(norm_dim(int(d), rank) for d in dim)
    else:
        dims = (norm_dim(int(dim), rank),)
    if keepdim:
        shape = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)
    attrs = {"dim": dims if len(dims) != 1 else dims[0], "keepdim": keepdim}
    if name == "var":
        attrs["correction"] = kwargs.get("correction", 1)
    return tracer.emit(name, (x,), attrs, shape, x.dtype, tile="vec")


def op_where(tracer, name, args, kwargs):
    cond, a, b = args
    cond = _tensor(tracer, cond, "the condition of pypto.where")
    tensors = [t for t in (a, b) if isinstance(t, TensorH)]
    shape = cond.shape
    for t in tensors:
        shape = broadcast(shape, t.shape)
    dtype = tensors[0].dtype if tensors else "fp32"
    return tracer.emit("where", (cond, a, b), {}, shape, dtype, tile="vec", valid=_valid_of(cond, *tensors))


def op_clip(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], "the input of pypto.clip")
    lo = args[1] if len(args) > 1 else kwargs.get("min")
    hi = args[2] if len(args) > 2 else kwargs.get("max")
    return tracer.emit("clip", (x,), {"min": lo, "max": hi}, x.shape, x.dtype, tile="vec", valid=x.valid)


def op_rms_norm(tracer, name, args, kwargs):
    """rms_norm(x, gamma=None, epsilon=1e-6) as the primitive ops it stands for."""
    x = _tensor(tracer, args[0], "the input of pypto.rms_norm")
    gamma = args[1] if len(args) > 1 else kwargs.get("gamma")
    eps = args[2] if len(args) > 2 else kwargs.get("epsilon", 1e-6)
    n = const_of(x.shape[-1])
    sq = tracer.call("mul", (x, x), {})
    mean = tracer.call("mul", (tracer.call("sum", (sq, -1, True), {}), 1.0 / n), {})
    scale = tracer.call("rsqrt", (tracer.call("add", (mean, eps), {}),), {})
    out = tracer.call("mul", (x, scale), {})
    return tracer.call("mul", (out, gamma), {}) if gamma is not None else out


def op_cast(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], "the input of pypto.cast")
    dtype = ir_dtype(args[1] if len(args) > 1 else kwargs["dtype"])
    mode = args[2] if len(args) > 2 else kwargs.get("mode", "CAST_NONE")
    satmode = args[3] if len(args) > 3 else kwargs.get("satmode")
    return tracer.emit("cast", (x,), {"dtype": dtype, "mode": mode, "satmode": satmode}, x.shape, dtype,
                       tile="vec", valid=x.valid)


def op_matmul(tracer, name, args, kwargs):
    a = _tensor(tracer, args[0], "the first operand of pypto.matmul")
    b = _tensor(tracer, args[1], "the second operand of pypto.matmul")
    out_dtype = args[2] if len(args) > 2 else kwargs.get("out_dtype")
    if out_dtype is None:
        out_dtype = "int32" if a.dtype == "int8" else a.dtype
    out_dtype = ir_dtype(out_dtype)
    a_trans, b_trans = bool(kwargs.get("a_trans", False)), bool(kwargs.get("b_trans", False))
    if len(a.shape) < 2 or len(a.shape) != len(b.shape):
        raise tracer.error(f"pypto.matmul needs operands of the same rank >= 2, got {shape_text(a.shape)} "
                           f"and {shape_text(b.shape)}")
    m, ka = (a.shape[-1], a.shape[-2]) if a_trans else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if b_trans else (b.shape[-2], b.shape[-1])
    if to_expr(ka) != to_expr(kb):
        raise tracer.error(f"pypto.matmul: inner dims differ ({ka} vs {kb})")
    operands = [a, b]
    extend = kwargs.get("extend_params") or {}
    if extend.get("bias_tensor") is not None:
        operands.append(extend["bias_tensor"])
    attrs = {"out_dtype": out_dtype, "a_trans": a_trans, "b_trans": b_trans}
    return tracer.emit("matmul", tuple(operands), attrs, tuple(a.shape[:-2]) + (m, n), out_dtype, tile="cube")


def op_view(tracer, name, args, kwargs):
    src = _tensor(tracer, args[0], "the input of pypto.view")
    shape = args[1] if len(args) > 1 else kwargs.get("shape")
    offsets = args[2] if len(args) > 2 else kwargs.get("offsets")
    valid = kwargs.get("valid_shape")
    if kwargs.get("dtype") is not None:
        raise tracer.error("pypto.view(dtype=...) (bit-cast views) is not supported by pypto-ast yet")
    return make_view(tracer, src, list(shape), list(offsets), valid)


def make_view(tracer, src: TensorH, shape: list, offsets: list, valid=None) -> TensorH:
    if len(shape) != len(src.shape) or len(offsets) != len(src.shape):
        raise tracer.error(f"pypto.view: shape {shape} and offsets {offsets} must have the rank of "
                           f"the input {shape_text(src.shape)}")
    for axis, (size, off, dim) in enumerate(zip(shape, offsets, src.shape)):
        s, o, d = const_of(size), const_of(off), const_of(dim)
        if valid is None and None not in (s, o, d) and (o < 0 or o + s > d):
            raise tracer.error(f"pypto.view: axis {axis} covers [{o}, {o + s}) outside the tensor's extent {d}; "
                               "pass valid_shape= for a partial block")
    attrs = {"shape": tuple(shape), "offsets": tuple(offsets)}
    if valid is not None:
        attrs["valid_shape"] = tuple(valid)
    return tracer.emit("view", (src,), attrs, tuple(shape), src.dtype,
                       valid=tuple(valid) if valid is not None else None)


def op_assemble(tracer, name, args, kwargs):
    if args and isinstance(args[0], (list, tuple)) and args[0] and isinstance(args[0][0], (list, tuple)):
        target = args[1] if len(args) > 1 else kwargs.get("out")
        for part, offsets in args[0]:
            write(tracer, part, target, list(offsets))
        return None
    part, offsets = args[0], args[1]
    target = args[2] if len(args) > 2 else kwargs.get("out")
    write(tracer, part, target, list(offsets))
    return None


def write(tracer, part, target, offsets: list) -> None:
    target = _tensor(tracer, target, "the target of an assemble")
    if not target.named:
        raise tracer.error("writing into a computed tensor is not supported; write into a parameter or a "
                           "pypto.tensor(...) local")
    if _scalar_ok(part):
        part = tracer.call("full", (list(target.shape), part, target.dtype), {})
    part = _tensor(tracer, part, "the value written")
    if part.named:  # `out[:] = x` with x a parameter: pypto emits no copy; make it explicit
        part = make_view(tracer, part, list(part.shape), [0] * len(part.shape))
    if part.dtype != target.dtype:
        raise tracer.error(f"writing a {part.dtype} value into @{target.name} ({target.dtype}): pypto does not "
                           "cast implicitly; use pypto.cast")
    if len(part.shape) != len(target.shape):
        raise tracer.error(f"writing a value of shape {shape_text(part.shape)} into @{target.name} "
                           f"{shape_text(target.shape)}: ranks differ")
    tracer.emit("assemble", (part, target), {"offsets": tuple(offsets)})
    if target.ref.name in tracer.params:
        tracer.outputs.add(target.ref.name)


def op_tensor(tracer, name, args, kwargs):
    shape, dtype, lname = (list(args) + [None, None, ""])[:3]
    dtype = ir_dtype(dtype) if dtype is not None else "fp32"
    base = lname or f"local{len(tracer.locals)}"
    lname = base
    n = 1
    while lname in tracer.locals or lname in tracer.params:
        lname, n = f"{base}_{n}", n + 1
    handle = TensorH(tracer, ir.TensorRef(lname), tuple(shape), dtype)
    tracer.locals[lname] = handle.type
    return handle


def op_full(tracer, name, args, kwargs):
    size = args[0] if args else kwargs["size"]
    fill = args[1] if len(args) > 1 else kwargs["fill_value"]
    dtype = args[2] if len(args) > 2 else kwargs.get("dtype", "fp32")
    dtype = ir_dtype(dtype)
    valid = kwargs.get("valid_shape")
    attrs = {"shape": tuple(size), "dtype": dtype}
    if valid is not None:
        attrs["valid_shape"] = tuple(valid)
    return tracer.emit("full", (fill,), attrs, tuple(size), dtype, tile="vec",
                       valid=tuple(valid) if valid is not None else None)


def op_zeros(tracer, name, args, kwargs):
    size = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    dtype = ir_dtype(kwargs.get("dtype") or "fp32")
    return tracer.emit(name, (), {"shape": tuple(size), "dtype": dtype}, tuple(size), dtype, tile="vec")


op_ones = op_zeros


def op_arange(tracer, name, args, kwargs):
    vals = list(args)
    start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) > 2 else 1)
    is_float = any(isinstance(v, float) for v in (start, stop, step))
    dtype = ir_dtype(kwargs["dtype"]) if kwargs.get("dtype") is not None else ("fp32" if is_float else "int32")
    if any(const_of(v) is None for v in (start, stop, step)):
        raise tracer.error("pypto.arange needs build-time bounds")
    n = max(0, math.ceil((stop - start) / step))
    return tracer.emit("arange", (), {"start": start, "stop": stop, "step": step, "dtype": dtype}, (n,), dtype,
                       tile="vec")


def op_reshape(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], "the input of pypto.reshape")
    shape = list(args[1] if len(args) > 1 else kwargs["shape"])
    if -1 in [const_of(d) for d in shape]:
        total = 1
        for d in x.shape:
            c = const_of(d)
            if c is None:
                raise tracer.error("pypto.reshape: -1 needs a fully static input shape")
            total *= c
        known = 1
        for d in shape:
            if const_of(d) != -1:
                known *= const_of(d)
        shape = [total // known if const_of(d) == -1 else d for d in shape]
    return tracer.emit("reshape", (x,), {"shape": tuple(shape)}, tuple(shape), x.dtype)


def op_transpose(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], "the input of pypto.transpose")
    rank = len(x.shape)
    d0, d1 = norm_dim(int(args[1]), rank), norm_dim(int(args[2]), rank)
    shape = list(x.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return tracer.emit("transpose", (x,), {"dims": (d0, d1)}, tuple(shape), x.dtype, tile="vec")


def op_unsqueeze(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], "the input of pypto.unsqueeze")
    dim = int(args[1] if len(args) > 1 else kwargs["dim"])
    dim = dim + len(x.shape) + 1 if dim < 0 else dim
    shape = tuple(x.shape[:dim]) + (1,) + tuple(x.shape[dim:])
    return tracer.emit("unsqueeze", (x,), {"dim": dim}, shape, x.dtype)


def op_concat(tracer, name, args, kwargs):
    parts = [_tensor(tracer, t, "a pypto.concat input") for t in args[0]]
    rank = len(parts[0].shape)
    dim = norm_dim(int(args[1] if len(args) > 1 else kwargs.get("dim", 0)), rank)
    total = to_expr(parts[0].shape[dim])
    for p in parts[1:]:
        total = binexpr("+", total, to_expr(p.shape[dim]))
    shape = list(parts[0].shape)
    shape[dim] = wrap(total, tracer)
    return tracer.emit("concat", (tuple(parts),), {"dim": dim}, tuple(shape), parts[0].dtype, tile="vec")


def op_expand_clone(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], "the input of pypto.expand_clone")
    shape = tuple(args[1] if len(args) > 1 else kwargs["shape"])
    broadcast(x.shape, shape)
    return tracer.emit("expand_clone", (x,), {"shape": shape}, shape, x.dtype, tile="vec")


def op_pad(tracer, name, args, kwargs):
    x = _tensor(tracer, args[0], "the input of pypto.pad")
    pad = tuple(args[1] if len(args) > 1 else kwargs["pad"])
    value = args[3] if len(args) > 3 else kwargs.get("value", 0.0)
    shape = list(x.shape)
    for i in range(len(pad) // 2):
        axis = len(shape) - 1 - i
        shape[axis] = wrap(binexpr("+", to_expr(shape[axis]), to_expr(pad[2 * i] + pad[2 * i + 1])), tracer)
    return tracer.emit("pad", (x,), {"pad": pad, "value": value}, tuple(shape), x.dtype, tile="vec")


def op_set_vec_tile_shapes(tracer, name, args, kwargs):
    dims = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    tracer.vec_tile = tuple(int(const_of(d)) for d in dims)


def op_set_cube_tile_shapes(tracer, name, args, kwargs):
    tracer.cube_tile = tuple(tuple(int(v) for v in part) for part in args[:3])


def op_cond(tracer, name, args, kwargs):
    value = args[0]
    return value if isinstance(value, (Sym, bool)) else bool(value)


def _loop_flag(tracer, name, args):
    idx = args[0] if args else None
    if not isinstance(idx, Sym) or idx.loop is None:
        raise tracer.error(f"pypto.{name} needs the loop index itself (pypto 0.2.0: `not loop index`)")
    ctx, copy = idx.loop, idx.copy
    step = const_of(ctx.step)
    if name == "is_loop_begin":
        if copy > 0:
            return False
        return wrap(binexpr("==", idx.expr, to_expr(ctx.start)), tracer)
    span = binexpr("-", binexpr("-", to_expr(ctx.stop), to_expr(ctx.start)), ir.Const(1))
    last = binexpr("+", to_expr(ctx.start), binexpr("*", binexpr("//", span, ir.Const(step)), ir.Const(step)))
    return wrap(binexpr("==", idx.expr, last), tracer)


def op_is_loop_begin(tracer, name, args, kwargs):
    return _loop_flag(tracer, name, args)


op_is_loop_end = op_is_loop_begin


def op_min(tracer, name, args, kwargs):
    a, b = args[0], args[1]
    if isinstance(a, TensorH) or isinstance(b, TensorH):
        return binary(tracer, "minimum" if name == "min" else "maximum", (a, b), {})
    return wrap(binexpr(name, to_expr(a), to_expr(b)), tracer)


op_max = op_min


# -- indexing ---------------------------------------------------------------------------------
def _split_key(tensor: TensorH, key):
    items = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in items):
        i = items.index(Ellipsis)
        items = items[:i] + [slice(None)] * (len(tensor.shape) - len(items) + 1) + items[i + 1:]
    items += [slice(None)] * (len(tensor.shape) - len(items))
    return items


def getitem(tracer, tensor: TensorH, key):
    items = _split_key(tensor, key)
    if len(items) != len(tensor.shape):
        raise tracer.error(f"index {key!r} has more entries than the tensor has dims")
    if all(not isinstance(k, slice) for k in items):
        if not tensor.named:
            raise tracer.error("reading a scalar from a computed tensor is not supported; read from a "
                               "parameter or a pypto.tensor local")
        if tensor.dtype != "int32":
            raise tracer.error(f"scalar reads need an int32 tensor, @{tensor.name} is {tensor.dtype} "
                               "(pypto 0.2.0: tensor dtype must be DT_INT32)")
        return Sym(ir.Read(tensor.name, tuple(to_expr(k) for k in items)), tracer)
    if all(isinstance(k, slice) and k == slice(None) for k in items):
        return tensor
    shape, offsets, drop = _slice_region(tracer, tensor, items)
    view = make_view(tracer, tensor, shape, offsets)
    if drop:
        kept = [d for i, d in enumerate(shape) if i not in drop]
        view = tracer.emit("reshape", (view,), {"shape": tuple(kept)}, tuple(kept), view.dtype)
    return view


def _slice_region(tracer, tensor, items):
    shape, offsets, drop = [], [], set()
    for axis, (k, dim) in enumerate(zip(items, tensor.shape)):
        if isinstance(k, slice):
            if k.step not in (None, 1):
                raise tracer.error("slice step must be 1 or None (pypto 0.2.0: step must be 1 or None)")
            start = 0 if k.start is None else k.start
            stop = dim if k.stop is None else k.stop
            if const_of(start) is not None and const_of(start) < 0 and const_of(dim) is not None:
                start = const_of(dim) + const_of(start)
            if const_of(stop) is not None and const_of(stop) < 0 and const_of(dim) is not None:
                stop = const_of(dim) + const_of(stop)
            size = wrap(binexpr("-", to_expr(stop), to_expr(start)), tracer)
            if const_of(size) is None:
                raise tracer.error(f"the extent of slice {k.start}:{k.stop} on axis {axis} is not a build-time "
                                   "int; use pypto.view with a static shape and valid_shape=")
            shape.append(const_of(size))
            offsets.append(start)
        else:
            shape.append(1)
            offsets.append(k)
            drop.add(axis)
    return shape, offsets, drop


def setitem(tracer, tensor: TensorH, key, value):
    if not tensor.named:
        raise tracer.error("writing into a computed tensor is not supported; write into a parameter or a "
                           "pypto.tensor(...) local")
    items = _split_key(tensor, key)
    if all(not isinstance(k, slice) for k in items) and _scalar_ok(value):
        tracer.emit("store_scalar", (value, tensor), {"index": tuple(items)})
        return
    if all(isinstance(k, slice) and k == slice(None) for k in items):
        write(tracer, value, tensor, [0] * len(tensor.shape))
        return
    shape, offsets, drop = _slice_region(tracer, tensor, items)
    if isinstance(value, TensorH) and drop and len(value.shape) == len(shape) - len(drop):
        value = tracer.emit("reshape", (value,), {"shape": tuple(shape)}, tuple(shape), value.dtype)
    write(tracer, value, tensor, offsets)


_HANDLERS = {
    name[3:]: fn for name, fn in list(globals().items()) if name.startswith("op_") and callable(fn)
}
