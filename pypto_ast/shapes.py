"""Shape and dtype inference for each op family. Unknown stays unknown (``None``)."""

from __future__ import annotations

from typing import Any, Optional

from .frontend import api
from .values import UNKNOWN, Const, DType, Sym, TensorVal, TupleVal, as_dims, int_value


def _tensors(values) -> list:
    return [v for v in values if isinstance(v, TensorVal)]


def broadcast(a: Optional[tuple], b: Optional[tuple]) -> Optional[tuple]:
    if a is None or b is None:
        return None
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif isinstance(x, int) and isinstance(y, int):
            out.append(None)  # incompatible: pypto rejects it; not this module's concern
        else:
            out.append(x if isinstance(x, int) else y if isinstance(y, int) else None)
    return tuple(out)


def _dim_arg(value, rank: Optional[int]) -> Optional[int]:
    d = int_value(value)
    if d is None or rank is None:
        return d
    return d + rank if d < 0 else d


def infer(name: str, args: list, kwargs: dict) -> Any:
    """Output of ``pypto.<name>(*args, **kwargs)``: a TensorVal, a TupleVal of them, or UNKNOWN."""
    tensors = _tensors(args)
    first = args[0] if args and isinstance(args[0], TensorVal) else (tensors[0] if tensors else None)
    if name in api.CREATION:
        return _creation(name, args, kwargs)
    if name == "concat":
        return _concat(args, kwargs)
    if first is None:
        return UNKNOWN
    shape, dtype = first.shape, first.dtype
    if name in api.BINARY or name in api.SELECT or name in api.COMPARE:
        for other in tensors[1:]:
            shape = broadcast(shape, other.shape)
            if dtype is None:
                dtype = other.dtype
        if name in api.COMPARE:
            dtype = api.BOOL
        if name == "where" and len(tensors) > 1:
            dtype = tensors[1].dtype
        return TensorVal(shape, dtype, "op")
    if name in api.UNARY:
        return TensorVal(shape, dtype, "op")
    if name in api.UNARY_BOOL:
        return TensorVal(shape, api.BOOL, "op")
    if name in api.REDUCE:
        return _reduce(first, args, kwargs)
    if name == "cast":
        target = args[1] if len(args) > 1 else kwargs.get("dtype")
        return TensorVal(shape, target if isinstance(target, DType) else None, "op")
    if name == "matmul":
        return _matmul(args, kwargs)
    if name == "cumsum":
        if dtype is not None and dtype.name.startswith("DT_INT"):
            dtype = api.INT64
        return TensorVal(shape, dtype, "op")
    if name == "reshape":
        target = args[1] if len(args) > 1 else kwargs.get("shape")
        return TensorVal(_reshape(shape, target), dtype, "op")
    if name == "transpose":
        return TensorVal(_transpose(shape, args), dtype, "op")
    if name == "unsqueeze":
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if shape is None or int_value(dim) is None:
            return TensorVal(None, dtype, "op")
        d = int_value(dim)
        d = d + len(shape) + 1 if d < 0 else d
        return TensorVal(tuple(shape[:d]) + (1,) + tuple(shape[d:]), dtype, "op")
    if name == "expand_clone":
        target = args[1] if len(args) > 1 else kwargs.get("shape")
        return TensorVal(as_dims(target) if isinstance(target, TupleVal) else None, dtype, "op")
    if name == "pad":
        if shape is None:
            return TensorVal(None, dtype, "op")
        return TensorVal(tuple(shape[:-2]) + (None, None) if len(shape) >= 2 else (None,), dtype, "op")
    return TensorVal(shape, dtype, "op")


def _creation(name, args, kwargs):
    dtype = kwargs.get("dtype")
    if name == "full":
        size = args[0] if args else kwargs.get("size")
        dtype = args[2] if len(args) > 2 else dtype
        dims = as_dims(size) if isinstance(size, TupleVal) else None
        return TensorVal(dims, dtype if isinstance(dtype, DType) else None, "op")
    if name in ("zeros", "ones"):
        if len(args) == 1 and isinstance(args[0], TupleVal):
            dims = as_dims(args[0])
        else:
            dims = as_dims(TupleVal(tuple(args))) if args else None
        return TensorVal(dims, dtype if isinstance(dtype, DType) else api.FP32, "op")
    if name == "arange":
        vals = [int_value(a) for a in args]
        length = None
        if vals and None not in vals:
            length = len(range(*vals)) if len(vals) <= 3 and (len(vals) < 3 or vals[2] != 0) else None
        is_float = any(isinstance(a, Const) and isinstance(a.value, float) for a in args)
        return TensorVal((length,), api.FP32 if is_float else api.INT32, "op")
    return UNKNOWN


def _concat(args, kwargs):
    items = args[0].items if args and isinstance(args[0], TupleVal) else ()
    tensors = _tensors(items)
    if not tensors or any(t.shape is None for t in tensors):
        return TensorVal(None, tensors[0].dtype if tensors else None, "op")
    rank = len(tensors[0].shape)
    dim = _dim_arg(args[1] if len(args) > 1 else kwargs.get("dim", Const(0)), rank)
    if dim is None or not 0 <= dim < rank or any(len(t.shape) != rank for t in tensors):
        return TensorVal((None,) * rank, tensors[0].dtype, "op")
    sizes = [t.shape[dim] for t in tensors]
    total = sum(sizes) if all(isinstance(s, int) for s in sizes) else None
    shape = tuple(total if i == dim else tensors[0].shape[i] for i in range(rank))
    return TensorVal(shape, tensors[0].dtype, "op")


def _reduce(x: TensorVal, args, kwargs):
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keep = args[2] if len(args) > 2 else kwargs.get("keepdim", Const(False))
    keepdim = keep.value if isinstance(keep, Const) else None
    if x.shape is None:
        return TensorVal(None, x.dtype, "op")
    rank = len(x.shape)
    if isinstance(dim, TupleVal):
        dims = [_dim_arg(d, rank) for d in dim.items]
    elif dim is None or (isinstance(dim, Const) and dim.value is None):
        dims = list(range(rank))
    else:
        dims = [_dim_arg(dim, rank)]
    if keepdim is None:
        return TensorVal(None, x.dtype, "op")
    if None in dims:
        return TensorVal((None,) * (rank if keepdim else rank - 1), x.dtype, "op")
    if keepdim:
        shape = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)
    return TensorVal(shape, x.dtype, "op")


def _matmul(args, kwargs):
    a = args[0] if args and isinstance(args[0], TensorVal) else None
    b = args[1] if len(args) > 1 and isinstance(args[1], TensorVal) else None
    out_dtype = args[2] if len(args) > 2 else kwargs.get("out_dtype")
    dtype = out_dtype if isinstance(out_dtype, DType) else None
    if a is None or b is None or a.shape is None or b.shape is None or len(a.shape) < 2 or len(b.shape) < 2:
        return TensorVal(None, dtype, "op")
    a_trans = kwargs.get("a_trans")
    b_trans = kwargs.get("b_trans")
    m = a.shape[-1] if isinstance(a_trans, Const) and a_trans.value else a.shape[-2]
    n = b.shape[-2] if isinstance(b_trans, Const) and b_trans.value else b.shape[-1]
    return TensorVal(tuple(a.shape[:-2]) + (m, n), dtype, "op")


def matmul_k(a: TensorVal, trans: bool = False) -> Optional[int]:
    if a.shape is None or len(a.shape) < 2:
        return None
    k = a.shape[-2] if trans else a.shape[-1]
    return k if isinstance(k, int) else None


def _reshape(shape, target) -> Optional[tuple]:
    if not isinstance(target, TupleVal):
        return None
    dims = as_dims(target)
    if dims is None:
        return None
    if -1 in dims and shape is not None and all(isinstance(d, int) for d in shape):
        total = 1
        for d in shape:
            total *= d
        known = 1
        for d in dims:
            if isinstance(d, int) and d != -1:
                known *= d
        if known and total % known == 0:
            dims = tuple(total // known if d == -1 else d for d in dims)
    return dims


def _transpose(shape, args) -> Optional[tuple]:
    if shape is None or len(args) < 3:
        return None
    rank = len(shape)
    a, b = _dim_arg(args[1], rank), _dim_arg(args[2], rank)
    if a is None or b is None or not (0 <= a < rank and 0 <= b < rank):
        return (None,) * rank
    out = list(shape)
    out[a], out[b] = out[b], out[a]
    return tuple(out)


def slice_shape(shape: Optional[tuple], items) -> tuple:
    """Shape of ``t[items]`` (slices and ints) and a TupleVal of the offsets used."""
    from .interp import SliceVal

    offsets = []
    if shape is None:
        for item in items:
            offsets.append(item.lower if isinstance(item, SliceVal) and item.lower is not None else item)
        return None, TupleVal(tuple(o for o in offsets if o is not None))
    out = []
    dims = list(shape)
    expanded = []
    for item in items:
        if isinstance(item, Const) and item.value is Ellipsis:
            fill = len(dims) - (len(items) - 1)
            expanded.extend([SliceVal(None, None, None)] * max(fill, 0))
        else:
            expanded.append(item)
    unknown = False
    for i, dim in enumerate(dims):
        item = expanded[i] if i < len(expanded) else None
        if item is None:
            out.append(dim)
            offsets.append(Const(0))
            continue
        if isinstance(item, SliceVal):
            lo = item.lower if item.lower is not None else Const(0)
            hi = item.upper
            offsets.append(lo)
            lo_i = int_value(lo)
            hi_i = int_value(hi) if hi is not None else (dim if isinstance(dim, int) else None)
            if lo_i is not None and hi_i is not None:
                if isinstance(dim, int):
                    lo_i = lo_i + dim if lo_i < 0 else lo_i
                    hi_i = hi_i + dim if hi_i < 0 else hi_i
                    hi_i = min(hi_i, dim)
                out.append(max(hi_i - lo_i, 0))
            elif isinstance(lo, Sym) and isinstance(hi, Sym) and hi.text.replace(" ", "").startswith(lo.text.replace(" ", "") + "+"):
                tail = hi.text.replace(" ", "")[len(lo.text.replace(" ", "")) + 1:]
                out.append(int(tail) if tail.isdigit() else None)
            elif item.lower is None and hi is None:
                out.append(dim)
            else:
                out.append(None)
        elif isinstance(item, (Const, Sym)):
            offsets.append(item)  # an int index drops the dim
        else:
            unknown = True
            out.append(None)
    if len(expanded) > len(dims):
        return None, TupleVal(tuple(offsets))
    return (None if unknown else tuple(out)), TupleVal(tuple(offsets))
