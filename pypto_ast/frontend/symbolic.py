"""Arithmetic on the control program's scalar expressions (``ir.Expr``): constants folded, and
linear terms that cancel simplified, so ``(i + 1) * 16 - i * 16`` is the build-time int 16."""

from __future__ import annotations

import operator

from .. import ir

FOLD = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod, "/": operator.truediv, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "and": lambda a, b: a and b, "or": lambda a, b: a or b, "min": min, "max": max,
}


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
            return ir.Const(FOLD[op](a.value, b.value))
        except (ZeroDivisionError, TypeError, OverflowError):
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


def unexpr(op: str, a: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Const):
        return ir.Const(-a.value if op == "-" else not a.value)
    return ir.UnExpr(op, a)
