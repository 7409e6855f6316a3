"""Symbolic scalars while a kernel is traced: loop indices, dynamic dims, values read from
tensors, and arithmetic on them, kept as ``ir.Expr`` trees (constants folded)."""

from __future__ import annotations

import operator
from typing import Any

from ..lang import Element
from .. import ir

_FOLD = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod, "/": operator.truediv, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "and": lambda a, b: a and b, "or": lambda a, b: a or b, "min": min, "max": max,
}


class SymbolicValueError(Exception):
    """A symbolic value reached Python code that needs a concrete number."""


def to_expr(value: Any) -> ir.Expr:
    if isinstance(value, Sym):
        return value.expr
    if isinstance(value, bool):
        return ir.Const(value)
    if isinstance(value, (int, float)):
        return ir.Const(value)
    if isinstance(value, Element):
        return to_expr(value.value)
    raise TypeError(f"expected a number or a symbolic scalar, got {type(value).__name__}")


def _linear(expr: ir.Expr):
    """``expr`` as (const, {atom: coeff}) when it is linear in its atoms, else None."""
    if isinstance(expr, ir.Const):
        return (expr.value, {}) if isinstance(expr.value, int) and not isinstance(expr.value, bool) else None
    if isinstance(expr, ir.BinExpr) and expr.op in ("+", "-"):
        la, lb = _linear(expr.a), _linear(expr.b)
        if la is None or lb is None:
            return None
        sign = 1 if expr.op == "+" else -1
        terms = dict(la[1])
        for atom, coeff in lb[1].items():
            terms[atom] = terms.get(atom, 0) + sign * coeff
        return la[0] + sign * lb[0], {k: v for k, v in terms.items() if v}
    if isinstance(expr, ir.BinExpr) and expr.op == "*":
        la, lb = _linear(expr.a), _linear(expr.b)
        if la is not None and lb is not None and (not la[1] or not lb[1]):
            k, other = (la[0], lb) if not la[1] else (lb[0], la)
            return k * other[0], {atom: k * c for atom, c in other[1].items() if k * c}
    if isinstance(expr, ir.UnExpr) and expr.op == "-":
        la = _linear(expr.a)
        return None if la is None else (-la[0], {k: -v for k, v in la[1].items()})
    return 0, {expr: 1}


def binexpr(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if op in ("+", "-") and not (isinstance(a, ir.Const) and isinstance(b, ir.Const)):
        form = _linear(ir.BinExpr(op, a, b))
        if form is not None and not form[1]:
            return ir.Const(form[0])  # the symbols cancel: (i + 1) * 16 - i * 16 == 16
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        try:
            return ir.Const(_FOLD[op](a.value, b.value))
        except (ZeroDivisionError, TypeError):
            pass
    if op == "+" and b == ir.Const(0) or op == "-" and b == ir.Const(0):
        return a
    if op == "+" and a == ir.Const(0):
        return b
    if op == "*" and (b == ir.Const(1)):
        return a
    if op == "*" and a == ir.Const(1):
        return b
    if op == "*" and (a == ir.Const(0) or b == ir.Const(0)):
        return ir.Const(0)
    return ir.BinExpr(op, a, b)


def const_of(value: Any):
    """The Python number of an int/float or a constant Sym, else None."""
    if isinstance(value, Sym):
        return value.expr.value if isinstance(value.expr, ir.Const) else None
    if isinstance(value, (int, float)):
        return value
    return None


def wrap(expr: ir.Expr, tracer=None):
    """A constant expression becomes a Python number again (build-time value)."""
    if isinstance(expr, ir.Const):
        return expr.value
    return Sym(expr, tracer)


class Sym:
    """A symbolic scalar. ``bool(sym)`` asks the tracer for a branch (a cond path)."""

    __slots__ = ("expr", "tracer", "loop", "copy")

    def __init__(self, expr: ir.Expr, tracer=None, loop=None, copy: int = 0):
        self.expr = expr
        self.tracer = tracer
        self.loop = loop  # the LoopContext when this is a loop index (for is_loop_begin/end)
        self.copy = copy  # which unrolled copy of the body this index belongs to

    def _bin(self, op, other, reverse=False):
        try:
            other_expr = to_expr(other)
        except TypeError:
            return NotImplemented
        a, b = (other_expr, self.expr) if reverse else (self.expr, other_expr)
        return wrap(binexpr(op, a, b), self.tracer)

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __floordiv__(self, o): return self._bin("//", o)
    def __rfloordiv__(self, o): return self._bin("//", o, True)
    def __mod__(self, o): return self._bin("%", o)
    def __rmod__(self, o): return self._bin("%", o, True)
    def __truediv__(self, o): return self._bin("/", o)
    def __rtruediv__(self, o): return self._bin("/", o, True)
    def __eq__(self, o): return self._bin("==", o)  # noqa: D105
    def __ne__(self, o): return self._bin("!=", o)
    def __lt__(self, o): return self._bin("<", o)
    def __le__(self, o): return self._bin("<=", o)
    def __gt__(self, o): return self._bin(">", o)
    def __ge__(self, o): return self._bin(">=", o)

    __hash__ = None  # comparisons build expressions, so Syms are not dict keys

    def __neg__(self):
        return wrap(ir.UnExpr("-", self.expr) if not isinstance(self.expr, ir.Const) else ir.Const(-self.expr.value), self.tracer)

    def __pos__(self):
        return self

    def min(self, other):
        return self._bin("min", other)

    def max(self, other):
        return self._bin("max", other)

    def __bool__(self):
        if self.tracer is None:
            raise SymbolicValueError("a symbolic value has no truth value outside a kernel trace")
        return self.tracer.decide(self)

    def _concrete(self, what):
        raise SymbolicValueError(
            f"symbolic value `{describe(self.expr)}` used where Python needs a concrete {what}: "
            "Python control flow cannot depend on runtime values; use pypto.loop / an `if` on the "
            "value inside the kernel, or pypto.min/pypto.max"
        )

    def __index__(self):
        self._concrete("integer")

    def __int__(self):
        self._concrete("integer")

    def __float__(self):
        self._concrete("number")

    def __iter__(self):
        self._concrete("iterable")

    def __repr__(self) -> str:
        return describe(self.expr)


def describe(expr: ir.Expr) -> str:
    """Short human text of an expression, for messages."""
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
