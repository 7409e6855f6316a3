"""Python's own semantics on build-time values, guarded: the evaluator computes ``2 * 64``,
``shape[0] // 16`` or ``"x".upper()`` with Python itself, but never anything that could take long
or grow without bound (huge ints, huge sequences, powers with huge exponents), and only through
functions and methods known to be pure.  Anything else is ``UNKNOWN``.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

from .values import UNKNOWN, is_static

MAX_INT_BITS = 4096  # beyond this an int is not a shape, a stride or a count: unknown
MAX_ITEMS = 100_000  # longest sequence or string a build-time value may be
MAX_POW_EXPONENT = 4096

BINOPS = {
    "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "Div": operator.truediv,
    "FloorDiv": operator.floordiv, "Mod": operator.mod, "Pow": operator.pow, "LShift": operator.lshift,
    "RShift": operator.rshift, "BitOr": operator.or_, "BitXor": operator.xor, "BitAnd": operator.and_,
    "MatMult": operator.matmul,
}
CMPOPS = {
    "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
    "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
    "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b,
}
UNARYOPS = {"USub": operator.neg, "UAdd": operator.pos, "Not": operator.not_, "Invert": operator.invert}


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes, tuple, list, dict, set, frozenset)):
        return len(value)
    return 0


def ok(value: Any) -> Any:
    """``value`` if it is a reasonable build-time value, else UNKNOWN."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        return UNKNOWN
    if isinstance(value, float) and math.isnan(value):
        return value
    if _size(value) > MAX_ITEMS:
        return UNKNOWN
    return value


def _too_big(op: str, a: Any, b: Any) -> bool:
    """Results that would be huge (or slow to compute): refuse before computing."""
    if op == "Pow" and isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(b, int) and abs(b) > MAX_POW_EXPONENT and abs(a) not in (0, 1):
            return True
        if isinstance(a, int) and isinstance(b, int) and b > 0 and a not in (0, 1, -1):
            return abs(a).bit_length() * b > MAX_INT_BITS
    if op == "LShift" and isinstance(b, int) and b > MAX_INT_BITS:
        return True
    if op == "Mult":
        for seq, n in ((a, b), (b, a)):
            if isinstance(seq, (str, bytes, tuple, list)) and isinstance(n, int) and len(seq) * max(n, 0) > MAX_ITEMS:
                return True
        if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
            return True
    return False


def range_length(start: int, stop: int, step: int) -> int:
    """``len(range(start, stop, step))`` for ints of any size (``len`` overflows beyond 2**63)."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def binop(op: str, a: Any, b: Any) -> Any:
    """``a <op> b`` for build-time values (op is the ast class name, e.g. "Add")."""
    fn = BINOPS.get(op)
    if fn is None or _too_big(op, a, b):
        return UNKNOWN
    if op == "Mod" and isinstance(a, str):
        return UNKNOWN  # printf formatting: not needed at build time, and can be slow
    try:
        return ok(fn(a, b))
    except Exception:  # ZeroDivisionError, TypeError, ...: Python would raise here
        return UNKNOWN


def compare(op: str, a: Any, b: Any) -> Any:
    fn = CMPOPS.get(op)
    if fn is None:
        return UNKNOWN
    try:
        result = fn(a, b)
    except Exception:
        return UNKNOWN
    return result if isinstance(result, bool) else UNKNOWN


def unary(op: str, a: Any) -> Any:
    fn = UNARYOPS.get(op)
    if fn is None:
        return UNKNOWN
    try:
        return ok(fn(a))
    except Exception:
        return UNKNOWN


# -- builtins ---------------------------------------------------------------------------------
def _materialise(value: Any):
    """An iterable build-time value as a list, or None when it is not one (or too long)."""
    if isinstance(value, range):
        return list(value) if len(value) <= MAX_ITEMS else None
    if isinstance(value, (list, tuple, str, bytes)):
        return list(value)
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return None


def _enumerate(seq, start=0):
    items = _materialise(seq)
    return None if items is None else [(start + i, v) for i, v in enumerate(items)]


def _zip(*seqs):
    lists = [_materialise(s) for s in seqs]
    return None if any(x is None for x in lists) else [tuple(t) for t in zip(*lists)]


def _reversed(seq):
    items = _materialise(seq)
    return None if items is None else list(reversed(items))


def _sorted(seq, reverse=False):
    items = _materialise(seq)
    return None if items is None else sorted(items, reverse=reverse)


PURE_BUILTINS = {
    "abs": abs, "all": all, "any": any, "bool": bool, "divmod": divmod, "float": float, "int": int,
    "len": len, "max": max, "min": min, "pow": pow, "round": round, "str": str, "sum": sum,
    "tuple": tuple, "list": list, "dict": dict, "set": set, "frozenset": frozenset, "range": range,
    "slice": slice, "repr": repr, "ord": ord, "chr": chr, "hash": None, "isinstance": None,
    "enumerate": _enumerate, "zip": _zip, "reversed": _reversed, "sorted": _sorted, "map": None,
    "filter": None, "callable": None, "getattr": None, "iter": None, "next": None, "format": format,
}
"""Builtins the evaluator may call on build-time arguments (None: handled by the evaluator)."""


def call_builtin(name: str, args: list, kwargs: dict) -> Any:
    fn = PURE_BUILTINS.get(name)
    if fn is None or not all(is_static(a) for a in args) or not all(is_static(v) for v in kwargs.values()):
        return UNKNOWN
    if name in ("tuple", "list", "set", "frozenset", "sum", "max", "min", "all", "any", "dict") and args:
        items = _materialise(args[0]) if len(args) == 1 and name != "dict" else None
        if len(args) == 1 and name != "dict" and items is None:
            return UNKNOWN
    if name == "range" and any(isinstance(a, int) and abs(a).bit_length() > 64 for a in args):
        return UNKNOWN
    if name in ("int", "float") and args and isinstance(args[0], str) and len(args[0]) > 64:
        return UNKNOWN
    if name == "str" and args and isinstance(args[0], int) and args[0].bit_length() > MAX_INT_BITS:
        return UNKNOWN
    try:
        result = fn(*args, **kwargs)
    except Exception:
        return UNKNOWN
    if result is None and name in ("enumerate", "zip", "reversed", "sorted"):
        return UNKNOWN
    return ok(result)


# -- methods of build-time values -----------------------------------------------------------
PURE_METHODS = {
    str: {"upper", "lower", "strip", "lstrip", "rstrip", "split", "rsplit", "join", "replace", "startswith",
          "endswith", "format", "capitalize", "title", "count", "find", "index", "isdigit", "zfill", "center",
          "ljust", "rjust", "partition", "rpartition", "splitlines", "casefold", "isidentifier"},
    tuple: {"index", "count"},
    list: {"index", "count", "copy"},
    dict: {"get", "keys", "values", "items", "copy"},
    int: {"bit_length", "to_bytes"},
    float: {"is_integer"},
    range: {"index", "count"},
}
MUTATING_METHODS = {
    list: {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"},
    dict: {"update", "setdefault", "pop", "clear"},
    set: {"add", "update", "discard", "remove", "clear"},
}
"""Methods that change their (build-time) receiver: applied to it, as Python would."""


def call_method(obj: Any, name: str, args: list, kwargs: dict) -> Any:
    """``obj.name(*args, **kwargs)`` on a build-time value, or UNKNOWN."""
    kind = type(obj)
    if name not in PURE_METHODS.get(kind, ()) and name not in MUTATING_METHODS.get(kind, ()):
        return UNKNOWN
    if name == "join" and args and _materialise(args[0]) is None:
        return UNKNOWN
    if name in ("extend", "update") and args and _size(obj) + _size(args[0]) > MAX_ITEMS:
        return UNKNOWN
    if name in ("keys", "values", "items"):
        return list(getattr(obj, name)())
    try:
        return ok(getattr(obj, name)(*args, **kwargs))
    except Exception:
        return UNKNOWN


def math_value(attr: str) -> Any:
    """``math.<attr>``: constants are values, functions are callable through ``call_math``."""
    value = getattr(math, attr, UNKNOWN)
    return value if isinstance(value, (int, float)) else UNKNOWN


def call_math(attr: str, args: list, kwargs: dict) -> Any:
    fn = getattr(math, attr, None)
    if not callable(fn) or attr.startswith("_") or kwargs or not all(isinstance(a, (int, float)) for a in args):
        return UNKNOWN
    if attr in ("factorial", "comb", "perm", "prod") and any(isinstance(a, int) and a > 1000 for a in args):
        return UNKNOWN
    try:
        return ok(fn(*args))
    except Exception:
        return UNKNOWN


def _product(items):
    out = 1
    for v in items:
        out *= v
    return out


_NUMPY_SCALAR = {
    "ceil": lambda x: float(math.ceil(x)), "floor": lambda x: float(math.floor(x)), "sqrt": math.sqrt,
    "exp": math.exp, "log": math.log, "log2": math.log2, "log10": math.log10, "abs": abs, "fabs": abs,
    "trunc": lambda x: float(math.trunc(x)), "round": round, "around": round, "rint": lambda x: float(round(x)),
    "power": pow, "maximum": max, "minimum": min, "mod": lambda a, b: a % b, "floor_divide": lambda a, b: a // b,
    "int32": int, "int64": int, "float32": float, "float64": float, "float16": float, "sign": lambda x: (x > 0) - (x < 0),
}
_NUMPY_REDUCE = {"prod": _product, "sum": sum, "max": max, "min": min, "amax": max, "amin": min}


def call_numpy(attr: str, args: list, kwargs: dict) -> Any:
    """``numpy.<attr>(...)`` on build-time numbers (what host code computes loop counts with:
    ``int(np.ceil(n / 16))``, ``np.prod(shape)``); arrays are not modelled."""
    if kwargs:
        return UNKNOWN
    if attr in _NUMPY_REDUCE and len(args) == 1:
        items = _materialise(args[0]) if isinstance(args[0], (list, tuple, range)) else None
        if items is None or not items or not all(isinstance(v, (int, float)) for v in items):
            return UNKNOWN
        return ok(_NUMPY_REDUCE[attr](items))
    fn = _NUMPY_SCALAR.get(attr)
    if fn is None or not args or not all(isinstance(a, (int, float)) for a in args):
        return UNKNOWN
    try:
        return ok(fn(*args))
    except Exception:
        return UNKNOWN


BUILTIN_NAMES = frozenset(dir(builtins))
