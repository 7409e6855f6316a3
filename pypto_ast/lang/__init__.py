"""The PyPTO DSL names as light objects, so kernel modules import and run where the
official ``pypto`` is not installed (``pypto-transpile --run`` serves ``import pypto`` from here).

Module-level use (annotations, dtypes, decorators, ``set_vec_tile_shapes`` at module
level) works on its own. Kernel bodies are never run: calling a kernel lowers it from its
*source* (``pypto_ast.frontend``), so an op called from live Python is an error that says
so. Standard library only.
"""

from __future__ import annotations

import enum

__version__ = "0.2.0+pypto_ast"

# Module-level tile shapes (what ``get_vec_tile_shapes`` answers outside kernels).
_module_tiles: dict = {"vec": None, "cube": None}


def _not_live(name: str):
    raise RuntimeError(f"pypto.{name} is read from the kernel's source, not run: call the kernel "
                       f"(or `pypto-transpile`) instead of calling pypto.{name} directly")


def _forward(name: str):
    def op(*args, **kwargs):
        _not_live(name)

    op.__name__ = name
    op.__qualname__ = name
    op.__doc__ = f"pypto.{name}: an op of kernel bodies, lowered from source (not callable live)."
    return op


# -- data types --------------------------------------------------------------------------
class DataType:
    __slots__ = ("name", "bytes")

    def __init__(self, name: str, nbytes: int):
        self.name, self.bytes = name, nbytes

    def __repr__(self) -> str:
        return f"DataType.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


_DTYPES = {
    "DT_FP32": 4, "DT_FP16": 2, "DT_BF16": 2, "DT_INT8": 1, "DT_UINT8": 1, "DT_INT16": 2,
    "DT_UINT16": 2, "DT_INT32": 4, "DT_UINT32": 4, "DT_INT64": 8, "DT_UINT64": 8, "DT_BOOL": 1,
    "DT_DOUBLE": 8, "DT_FP8": 1, "DT_FP8E4M3": 1, "DT_FP8E5M2": 1, "DT_FP8E8M0": 1, "DT_HF8": 1,
}
for _name, _size in _DTYPES.items():
    setattr(DataType, _name, DataType(_name, _size))
    globals()[_name] = getattr(DataType, _name)


def _dtype_by_name(name: str) -> DataType:
    return getattr(DataType, name)


def bytes_of(dtype: DataType) -> int:
    return dtype.bytes


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"pypto.{self.name}"


DYNAMIC = DYN = _Marker("DYNAMIC")
STATIC = _Marker("STATIC")


class RunMode(enum.IntEnum):
    NPU = 0
    SIM = 1


class CastMode(enum.Enum):
    CAST_NONE = "CAST_NONE"
    CAST_RINT = "CAST_RINT"
    CAST_ROUND = "CAST_ROUND"
    CAST_FLOOR = "CAST_FLOOR"
    CAST_CEIL = "CAST_CEIL"
    CAST_TRUNC = "CAST_TRUNC"
    CAST_ODD = "CAST_ODD"


class SaturationMode(enum.Enum):
    OFF = "OFF"
    ON = "ON"


class TileOpFormat(enum.Enum):
    TILEOP_ND = "TILEOP_ND"
    TILEOP_NZ = "TILEOP_NZ"


# -- tensors -----------------------------------------------------------------------------
class TensorSpec:
    """The value of a ``pypto.Tensor(...)`` / ``pypto.Tensor[...]`` annotation."""

    def __init__(self, shape=None, dtype=None, name="", format=None):
        self.shape = None if shape is None else list(shape)
        self.dtype = dtype
        self.name = name
        self.format = format

    def to_tensor(self):  # what pypto checks to tell tensor parameters apart
        return self

    def __repr__(self) -> str:
        return f"Tensor({self.shape}, {self.dtype})"


class Tensor:
    """``pypto.Tensor``: an annotation outside kernels, a local tensor declaration inside."""

    def __new__(cls, shape=None, dtype=None, name="", format=None, **_ignored):
        return TensorSpec(shape, dtype, name, format)  # no dtype: the argument's, as pypto (explicit_dtype)

    def __class_getitem__(cls, item):
        items = item if isinstance(item, tuple) else (item,)
        shape = dtype = None
        name = ""
        for part in items:
            if isinstance(part, (list, tuple)):
                shape = part
            elif isinstance(part, DataType):
                dtype = part
            elif isinstance(part, str):
                name = part
            elif isinstance(part, dict):
                shape = part.get("shape", shape)
                dtype = part.get("dtype", dtype)
        return TensorSpec(shape, dtype, name)


tensor = Tensor


class Element:
    """A typed scalar constant (``pypto.Element(dtype, value)``)."""

    def __init__(self, dtype, value):
        self.dtype, self.value = dtype, value


# -- control flow and configuration -------------------------------------------------------
def loop(*args, **kwargs):
    _not_live("loop")


def loop_unroll(*args, **kwargs):
    _not_live("loop_unroll")


def set_vec_tile_shapes(*dims):
    _module_tiles["vec"] = tuple(dims)


def set_cube_tile_shapes(m, k, n, enable_split_k=False):
    _module_tiles["cube"] = (tuple(m), tuple(k), tuple(n))


def get_vec_tile_shapes():
    return _module_tiles["vec"]


def get_cube_tile_shapes():
    return _module_tiles["cube"]


def _noop(*args, **kwargs):
    return None


set_options = set_runtime_options = set_pass_options = set_host_options = _noop
set_codegen_options = set_verify_options = set_debug_options = reset_options = _noop
set_semantic_label = set_matrix_size = _noop

_OPS = [
    # elementwise, comparison, selection
    "add", "sub", "mul", "div", "fmod", "remainder", "pow", "hypot", "maximum", "minimum",
    "copysign", "gcd", "bitwise_and", "bitwise_or", "bitwise_xor", "abs", "neg", "exp", "exp2",
    "expm1", "sqrt", "rsqrt", "reciprocal", "log", "log2", "log10", "log1p", "ceil", "floor",
    "trunc", "round", "sign", "signbit", "isfinite", "logical_not", "logical_and", "relu", "lrelu",
    "prelu", "sigmoid", "sin", "cos", "cbrt", "clip", "tril", "triu", "cumsum", "softmax", "rms_norm",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "where",
    # reductions, matrix, layout, creation
    "sum", "amax", "amin", "prod", "var", "matmul", "cast", "view", "reshape", "transpose",
    "unsqueeze", "concat", "expand_clone", "pad", "clone", "assemble", "full", "zeros", "ones",
    "arange", "cond", "is_loop_begin", "is_loop_end", "min", "max",
]
for _op in _OPS:
    globals()[_op] = _forward(_op)


class options:
    """``pypto.options(vec_tile_shapes=..., cube_tile_shapes=...)`` as a context manager."""

    def __init__(self, name: str = "", vec_tile_shapes=None, cube_tile_shapes=None, **_ignored):
        self.vec, self.cube = vec_tile_shapes, cube_tile_shapes

    def __call__(self, func):  # ``@pypto.options(...)`` on a test function: read from source
        return func

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def function(name, *tensors):
    """Legacy ``with pypto.function(name, *tensors):``: its body is lowered from source."""
    _not_live("function")


from . import frontend  # noqa: E402,F401  (needs the names above; re-exported as pypto.frontend)

__all__ = [n for n in dir() if not n.startswith("_")]
