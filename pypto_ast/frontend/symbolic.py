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


# _linear is asked again for every prefix of a chain ``i + i + ... + i`` as it is built: results are
# kept per expression object (the object is held, so its id is not reused), and a form with more
# than _MAX_ATOMS atoms is not simplified (None), so building a chain stays linear in its length.
_MAX_ATOMS = 64
_MAX_BITS = 4096  # as pyvalues.MAX_INT_BITS
_MEMO_SIZE = 1 << 14
_memo: dict = {}


def _huge(value) -> bool:
    """An int too long to be a shape, an offset or a count (``10**5000``): not folded further,
    so repeated arithmetic on it cannot grow it without bound."""
    return isinstance(value, int) and value.bit_length() > _MAX_BITS


def _linear(expr: ir.Expr):
    """``expr`` as (const, {atom: coeff}) when it is linear in its atoms, else None (the dict is
    shared: never mutate it)."""
    hit = _memo.get(id(expr))
    if hit is not None and hit[0] is expr:
        return hit[1]
    result = _linear_form(expr)
    if result is not None and (len(result[1]) > _MAX_ATOMS or _huge(result[0])
                               or any(_huge(c) for c in result[1].values())):
        result = None
    if len(_memo) >= _MEMO_SIZE:
        _memo.clear()
    _memo[id(expr)] = (expr, result)
    return result


def _linear_form(expr: ir.Expr):
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
    probe = None
    if op in ("+", "-") and not (isinstance(a, ir.Const) and isinstance(b, ir.Const)):
        probe = ir.BinExpr(op, a, b)  # returned below when nothing simplifies: its form stays memoised
        form = _linear(probe)
        if form is not None and not form[1]:
            return ir.Const(form[0])  # the symbols cancel: (i + 1) * 16 - i * 16 == 16
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        try:
            value = FOLD[op](a.value, b.value)
            if not _huge(value):
                return ir.Const(value)
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
    return probe if probe is not None else ir.BinExpr(op, a, b)


def unexpr(op: str, a: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Const):
        return ir.Const(-a.value if op == "-" else not a.value)
    return ir.UnExpr(op, a)
