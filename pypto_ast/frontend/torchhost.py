"""The torch tensors host code builds, as far as a kernel call's shapes and dtypes need them.

Host code around a kernel (a test function, ``main``, a ``__main__`` block) makes its arguments
with torch: ``torch.rand(shape, dtype=...)``, ``torch.tensor([[1, 2], [3, 4]])``,
``torch.ones((n, m)) * 2``, ``x.to(torch.float16)``, ``torch.empty(a.shape, ...)``.  The
front end never runs torch: it follows each tensor's shape and dtype (a ``TorchSpec``) through
the calls that keep them computable, and gives up (UNKNOWN) anywhere else.
"""

from __future__ import annotations

from typing import Any, Optional

from .values import UNKNOWN, ApiRef, TorchSpec

DTYPES = {
    "float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "int8": "int8",
    "uint8": "uint8", "int16": "int16", "short": "int16", "int32": "int32", "int": "int32", "int64": "int64",
    "long": "int64", "bool": "bool", "float64": "double", "double": "double",
}
_CREATE = ("randn", "rand", "zeros", "ones", "empty", "full", "randint", "arange", "tensor", "as_tensor",
           "from_numpy", "zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like",
           "randint_like", "linspace", "eye", "normal", "randperm")
_SAME_SHAPE = ("abs", "exp", "log", "sqrt", "rsqrt", "neg", "sigmoid", "relu", "tanh", "sin", "cos", "clone",
               "contiguous", "detach", "clamp", "clip", "round", "floor", "ceil", "sign", "softmax", "square",
               "reciprocal", "exp2", "log2", "erf", "nan_to_num", "fill_", "zero_", "uniform_", "normal_",
               "clamp_", "abs_", "mul_", "add_", "div_", "sub_", "requires_grad_", "pin_memory", "cumsum", "tril",
               "triu")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "where", "fmod", "remainder", "atan2")


def dtype_of(value) -> Optional[str]:
    """The IR dtype of a ``torch.float16``-like reference (also the strings "float16", "fp16")."""
    if isinstance(value, ApiRef) and value.qualname.startswith("torch."):
        return DTYPES.get(value.qualname.rsplit(".", 1)[-1])
    return None


def _shape(value) -> Optional[tuple]:
    """A shape argument: ``(2, 3)``, ``[2, 3]``, ``x.shape`` (a list), or a TorchSpec's."""
    if isinstance(value, TorchSpec):
        return value.shape
    if isinstance(value, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                for d in value):
        return tuple(value)
    return None


def _dims(args: list, kwargs: dict) -> Optional[tuple]:
    """``torch.zeros(2, 3)`` / ``torch.zeros((2, 3))`` / ``torch.zeros(size=(2, 3))``."""
    if "size" in kwargs:
        return _shape(kwargs["size"])
    if len(args) == 1:
        single = args[0]
        if isinstance(single, int) and not isinstance(single, bool):
            return (single,)
        return _shape(single)
    return _shape(list(args)) if args else None


def _nested_shape(data) -> Optional[tuple]:
    """The shape of a nested list literal (``torch.tensor([[1, 2], [3, 4]])``) and whether it holds floats."""
    if isinstance(data, (int, float, bool)):
        return ()
    if isinstance(data, TorchSpec):
        return data.shape
    if not isinstance(data, (list, tuple)):
        return None
    if not data:
        return (0,)
    inner = [_nested_shape(item) for item in data]
    if any(s is None or s != inner[0] for s in inner):
        return None
    return (len(data),) + inner[0]


def _literal_dtype(data) -> str:
    flat, stack = [], [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            flat.append(item)
    if any(isinstance(v, float) for v in flat):
        return "fp32"
    if flat and all(isinstance(v, bool) for v in flat):
        return "bool"
    return "int64"


def create(name: str, args: list, kwargs: dict) -> Any:
    """``torch.<name>(...)`` for the creation functions."""
    dt = dtype_of(kwargs.get("dtype"))
    if name.endswith("_like"):
        src = args[0] if args else kwargs.get("input")
        return TorchSpec(src.shape, dt or src.dtype) if isinstance(src, TorchSpec) else UNKNOWN
    if name in ("tensor", "as_tensor"):
        data = args[0] if args else kwargs.get("data")
        if isinstance(data, TorchSpec):
            return TorchSpec(data.shape, dt or data.dtype)
        shape = _nested_shape(data)
        return TorchSpec(shape, dt or _literal_dtype(data)) if shape is not None else UNKNOWN
    if name == "from_numpy":
        return UNKNOWN
    if name == "randint":
        shape = _shape(args[2]) if len(args) > 2 else (_shape(args[1]) if len(args) == 2 and isinstance(
            args[1], (list, tuple)) else _shape(kwargs.get("size")))
        return TorchSpec(shape, dt or "int64") if shape is not None else UNKNOWN
    if name == "randperm":
        n = args[0] if args else None
        return TorchSpec((n,), dt or "int64") if isinstance(n, int) else UNKNOWN
    if name == "full":
        shape = _shape(args[0]) if args else _shape(kwargs.get("size"))
        fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
        default = "fp32" if isinstance(fill, float) else ("bool" if isinstance(fill, bool) else "int64")
        return TorchSpec(shape, dt or default) if shape is not None else UNKNOWN
    if name == "arange":
        nums = [a for a in args if isinstance(a, (int, float))]
        if len(nums) != len(args) or not nums:
            return UNKNOWN
        start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
        if step == 0:
            return UNKNOWN
        import math

        n = max(0, math.ceil((stop - start) / step))
        return TorchSpec((n,), dt or ("fp32" if any(isinstance(v, float) for v in nums) else "int64"))
    if name == "linspace":
        n = args[2] if len(args) > 2 else kwargs.get("steps")
        return TorchSpec((n,), dt or "fp32") if isinstance(n, int) else UNKNOWN
    if name == "eye":
        n = args[0] if args else None
        m = args[1] if len(args) > 1 and isinstance(args[1], int) else n
        return TorchSpec((n, m), dt or "fp32") if isinstance(n, int) else UNKNOWN
    if name == "normal":
        shape = _shape(kwargs.get("size")) if "size" in kwargs else (_shape(args[2]) if len(args) > 2 else None)
        return TorchSpec(shape, dt or "fp32") if shape is not None else UNKNOWN
    shape = _dims(args, kwargs)
    return TorchSpec(shape, dt or "fp32") if shape is not None else UNKNOWN


def broadcast(a: tuple, b: tuple) -> Optional[tuple]:
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y) if 1 in (x, y) else x)
    return tuple(reversed(out))


def _promote(a: Optional[str], b: Optional[str]) -> Optional[str]:
    if a == b or b is None:
        return a
    if a is None:
        return b
    floats = ("double", "fp32", "bf16", "fp16")
    for dt in floats:
        if dt in (a, b):
            return dt
    return a


def binop(op: str, left, right) -> Any:
    """``x * 4 - 2``, ``a + b``, ``a @ b`` on torch tensors and numbers."""
    if op == "MatMult":
        if isinstance(left, TorchSpec) and isinstance(right, TorchSpec):
            return matmul(left, right)
        return UNKNOWN
    specs = [v for v in (left, right) if isinstance(v, TorchSpec)]
    others = [v for v in (left, right) if not isinstance(v, TorchSpec)]
    if any(not isinstance(v, (int, float, bool)) for v in others):
        return UNKNOWN
    if len(specs) == 2:
        shape = broadcast(left.shape, right.shape)
        return TorchSpec(shape, _promote(left.dtype, right.dtype)) if shape is not None else UNKNOWN
    spec = specs[0]
    dtype = spec.dtype
    if op in ("Lt", "Gt", "LtE", "GtE", "Eq", "NotEq"):
        dtype = "bool"
    elif any(isinstance(v, float) for v in others) and dtype not in ("fp32", "fp16", "bf16", "double"):
        dtype = "fp32"
    elif op == "Div" and dtype not in ("fp32", "fp16", "bf16", "double"):
        dtype = "fp32"
    return TorchSpec(spec.shape, dtype)


def matmul(a: TorchSpec, b: TorchSpec) -> Any:
    if len(a.shape) < 1 or len(b.shape) < 1:
        return UNKNOWN
    if len(a.shape) == 2 and len(b.shape) == 2:
        return TorchSpec((a.shape[0], b.shape[1]), _promote(a.dtype, b.dtype)) if a.shape[1] == b.shape[0] else UNKNOWN
    if len(a.shape) >= 2 and len(b.shape) >= 2 and a.shape[-1] == b.shape[-2]:
        batch = broadcast(a.shape[:-2], b.shape[:-2])
        if batch is not None:
            return TorchSpec(batch + (a.shape[-2], b.shape[-1]), _promote(a.dtype, b.dtype))
    return UNKNOWN


def call(name: str, args: list, kwargs: dict) -> Any:
    """``torch.<name>(...)``."""
    if name in _CREATE:
        return create(name, args, kwargs)
    first = args[0] if args else kwargs.get("input")
    if name in _SAME_SHAPE and isinstance(first, TorchSpec):
        return first
    if name in _BINARY and len(args) >= 2:
        a, b = (args[1], args[2]) if name == "where" and len(args) == 3 else (args[0], args[1])
        return binop("Add", a, b) if isinstance(a, TorchSpec) or isinstance(b, TorchSpec) else UNKNOWN
    if name in ("matmul", "mm", "bmm") and len(args) == 2 and all(isinstance(a, TorchSpec) for a in args):
        return matmul(args[0], args[1])
    if name in ("cat", "concat", "stack") and args and isinstance(args[0], (list, tuple)):
        parts = list(args[0])
        dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        if not parts or not all(isinstance(p, TorchSpec) for p in parts) or not isinstance(dim, int):
            return UNKNOWN
        first_shape = parts[0].shape
        rank = len(first_shape) + (1 if name == "stack" else 0)
        if not -rank <= dim < rank:
            return UNKNOWN
        dim %= rank
        if name == "stack":
            if any(p.shape != first_shape for p in parts):
                return UNKNOWN
            return TorchSpec(first_shape[:dim] + (len(parts),) + first_shape[dim:], parts[0].dtype)
        if any(len(p.shape) != len(first_shape) for p in parts):
            return UNKNOWN
        total = sum(p.shape[dim] for p in parts)
        return TorchSpec(first_shape[:dim] + (total,) + first_shape[dim + 1:], parts[0].dtype)
    if isinstance(first, TorchSpec):
        return method(first, name, list(args[1:]), kwargs)
    return UNKNOWN


_CONVERT = {"float": "fp32", "half": "fp16", "int": "int32", "long": "int64", "bfloat16": "bf16", "bool": "bool",
            "double": "double", "short": "int16", "char": "int8", "byte": "uint8"}


def method(spec: TorchSpec, name: str, args: list, kwargs: dict) -> Any:
    """``spec.<name>(...)``."""
    if name in _CONVERT:
        return TorchSpec(spec.shape, _CONVERT[name], spec.param)
    if name in ("to", "type"):
        for value in list(args) + [kwargs.get("dtype")]:
            dt = dtype_of(value)
            if dt:
                return TorchSpec(spec.shape, dt, spec.param)
            if isinstance(value, TorchSpec):
                return TorchSpec(spec.shape, value.dtype, spec.param)
        return spec
    if name in ("npu", "cpu", "cuda") or name in _SAME_SHAPE:
        return spec
    if name in ("reshape", "view", "expand", "repeat", "permute", "transpose", "unsqueeze", "squeeze",
                "flatten", "t"):
        shape = _reshaped(spec.shape, name, args)
        return TorchSpec(shape, spec.dtype) if shape is not None else UNKNOWN
    if name in _BINARY and args:
        return binop("Add", spec, args[0])
    if name in ("matmul", "mm", "bmm") and args and isinstance(args[0], TorchSpec):
        return matmul(spec, args[0])
    if name == "size":
        if not args:
            return list(spec.shape)
        dim = args[0]
        return spec.shape[dim] if isinstance(dim, int) and -len(spec.shape) <= dim < len(spec.shape) else UNKNOWN
    if name == "dim":
        return len(spec.shape)
    if name == "numel":
        out = 1
        for d in spec.shape:
            out *= d
        return out
    return UNKNOWN


def _reshaped(shape: tuple, name: str, args: list) -> Optional[tuple]:
    dims = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    if name == "t":
        return tuple(reversed(shape)) if len(shape) <= 2 else None
    if name == "flatten":
        if args:
            return None
        total = 1
        for d in shape:
            total *= d
        return (total,)
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        return None
    rank = len(shape)
    if name in ("reshape", "view"):
        total = 1
        for d in shape:
            total *= d
        if dims.count(-1) == 1:
            known = 1
            for d in dims:
                if d != -1:
                    known *= d
            if known == 0 or total % known:
                return None
            dims[dims.index(-1)] = total // known
        size = 1
        for d in dims:
            size *= d
        return tuple(dims) if size == total and all(d >= 0 for d in dims) else None
    if name == "expand":
        if len(dims) < rank:
            return None
        head = dims[:len(dims) - rank]
        tail = [s if d == -1 else d for d, s in zip(dims[len(dims) - rank:], shape)]
        return tuple(head + tail)
    if name == "repeat":
        if len(dims) < rank:
            return None
        padded = [1] * (len(dims) - rank) + list(shape)
        return tuple(a * b for a, b in zip(padded, dims))
    if name == "permute":
        if not rank or sorted(d % rank for d in dims) != list(range(rank)):
            return None
        return tuple(shape[d % rank] for d in dims)
    if name == "transpose":
        if len(dims) != 2 or not rank:
            return None
        a, b = dims[0] % rank, dims[1] % rank
        out = list(shape)
        out[a], out[b] = out[b], out[a]
        return tuple(out)
    if name == "unsqueeze":
        if len(dims) != 1:
            return None
        d = dims[0] % (rank + 1)
        return shape[:d] + (1,) + shape[d:]
    if name == "squeeze":
        if not dims:
            return tuple(s for s in shape if s != 1)
        d = dims[0] % rank if rank else 0
        return shape[:d] + shape[d + 1:] if rank and shape[d] == 1 else shape
    return None


def attribute(spec: TorchSpec, attr: str) -> Any:
    if attr == "shape":
        return list(spec.shape)
    if attr == "dtype":
        for torch_name, ir_name in DTYPES.items():
            if ir_name == spec.dtype:
                return ApiRef(f"torch.{torch_name}")
        return UNKNOWN
    if attr == "T":
        return TorchSpec(tuple(reversed(spec.shape)), spec.dtype)
    if attr == "ndim":
        return len(spec.shape)
    if attr in ("device", "is_contiguous"):
        return UNKNOWN
    return None  # a method: the caller makes a Method of it
