"""The PyPTO API pypto-ast knows, by qualified name (one table; never match spellings).

Op families and decorators here; every public name pypto has (both versions) is in
``surface.py``: a name in neither table is not pypto's."""

from __future__ import annotations

import difflib
import functools

from . import surface
from .values import DType

# Modules whose names are served as ``pypto`` (pypto_ast.lang mirrors the DSL names).
PYPTO_ALIASES = {"pypto_ast.lang": "pypto"}

KERNEL_DECORATORS = {
    "pypto.frontend.jit": "jit",
    "pypto.jit": "pypto.jit",  # removed before 0.2.0; the repository's later version made it frontend.jit again
    "pypto.frontend.function": "function",
    "pypto_ast.jit": "jit",
}
RETURNING_DECORATORS = frozenset({"pypto_ast.jit"})  # pypto-ast's return convention
LEGACY_FUNCTION = "pypto.function"

DTYPE_SIZES = {
    "DT_FP32": 4, "DT_FP16": 2, "DT_BF16": 2, "DT_INT8": 1, "DT_UINT8": 1, "DT_INT16": 2,
    "DT_UINT16": 2, "DT_INT32": 4, "DT_UINT32": 4, "DT_INT64": 8, "DT_UINT64": 8, "DT_BOOL": 1,
    "DT_DOUBLE": 8, "DT_FP8": 1, "DT_FP8E4M3": 1, "DT_FP8E5M2": 1, "DT_FP8E8M0": 1, "DT_HF8": 1,
    "DT_INT4": 1, "DT_HF4": 1, "DT_FP4_E2M1X2": 1, "DT_FP4_E1M2X2": 1,
}
DTYPES = {name: DType(name, size) for name, size in DTYPE_SIZES.items()}
FP32, BOOL, INT32, INT64 = DTYPES["DT_FP32"], DTYPES["DT_BOOL"], DTYPES["DT_INT32"], DTYPES["DT_INT64"]


def dtype(qualname: str) -> DType | None:
    """``pypto.DT_FP16`` / ``pypto.DataType.DT_FP16`` -> DType."""
    last = qualname.rsplit(".", 1)[-1]
    if qualname.startswith("pypto.") and last in DTYPES:
        return DTYPES[last]
    return None


MARKERS = {"pypto.DYNAMIC": "DYNAMIC", "pypto.DYN": "DYNAMIC", "pypto.STATIC": "STATIC"}
TENSOR_CLASSES = {"pypto.Tensor", "pypto.tensor"}

# --- op families (names relative to ``pypto.``; Tensor methods share them) -------------
BINARY = {
    "add", "sub", "mul", "div", "fmod", "remainder", "pow", "hypot", "maximum", "minimum",
    "copysign", "gcd", "ceil_div", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "expand_exp_dif", "prelu",
}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge", "greater", "logical_and"}
UNARY = {
    "abs", "neg", "exp", "sqrt", "rsqrt", "reciprocal", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "ceil", "floor", "trunc", "round", "sign", "relu", "lrelu", "sigmoid", "sin", "cos",
    "cbrt", "clip", "tril", "triu", "tril_", "triu_", "softmax", "rms_norm", "fillpad", "clone",
}
UNARY_BOOL = {"logical_not", "signbit", "isfinite", "bitwise_not"}
REDUCE = {"sum", "amax", "amin", "prod", "var"}
SELECT = {"where"}
CAST = {"cast"}
MATMUL = {"matmul"}
LAYOUT = {"view", "reshape", "transpose", "unsqueeze", "concat", "expand_clone", "pad", "cumsum"}
CREATION = {"full", "zeros", "ones", "arange"}
WRITES = {"assemble"}  # pypto.assemble(part, offsets, out) / t.assemble(part, offsets)

# Ops that run on the vector unit and therefore need a vector tile shape in effect.
VECTOR_OPS = BINARY | COMPARE | UNARY | UNARY_BOOL | REDUCE | SELECT | CAST | {"cumsum", "transpose", "expand_clone", "pad"}
ALL_OPS = VECTOR_OPS | MATMUL | LAYOUT | CREATION | WRITES

# Python operators on tensors -> op names.
BINOP_NAMES = {
    "Add": "add", "Sub": "sub", "Mult": "mul", "Div": "div", "FloorDiv": "div", "Mod": "remainder",
    "Pow": "pow", "MatMult": "matmul",
}
CMPOP_NAMES = {"Gt": "gt", "Lt": "lt", "GtE": "ge", "LtE": "le", "Eq": "eq", "NotEq": "ne"}

# Tensor methods that write the receiver in place (so it has a producer afterwards).
WRITE_METHODS = {"move", "assemble", "fill_", "index_add_", "scatter_", "tril_", "triu_", "index_put_"}


# Names the repository's later version reaches under two spellings (HEAD re-exports).
SURFACE_ALIASES = {"pypto.tensor": "pypto.Tensor"}


def known(qualname: str) -> bool:
    """``qualname`` is a public pypto name in 0.2.0 or in the repository's later version."""
    if qualname in surface.NAMES:
        return True
    parts = qualname.split(".")
    for alias, target in SURFACE_ALIASES.items():
        if qualname.startswith(alias + "."):
            return target + qualname[len(alias):] in surface.NAMES
    # the native extension's members cannot be listed from source: anything under it is known
    for i in range(2, len(parts)):
        if parts[i - 1] == "pypto_impl" and surface.NAMES.get(".".join(parts[:i]), ("",))[0] == "module":
            return True
    # members of classes that are themselves re-exported under another path
    return len(parts) > 2 and ".".join(parts[:2]) in surface.NAMES and surface.NAMES[".".join(parts[:2])][0] == "native"


@functools.lru_cache(maxsize=1)
def _children() -> dict:
    """parent qualname -> the last parts of the names directly under it (built once)."""
    children: dict = {}
    for name in surface.NAMES:
        parent, _, last = name.rpartition(".")
        children.setdefault(parent, []).append(last)
    return children


def suggestions(qualname: str, limit: int = 3) -> list:
    """Close pypto names for a "did you mean" (same parent, then anywhere)."""
    parent, _, last = qualname.rpartition(".")
    siblings = _children().get(parent, ())
    close = difflib.get_close_matches(last, siblings, n=limit, cutoff=0.6)
    return [f"{parent}.{c}" for c in close]
