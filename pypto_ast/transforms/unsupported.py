"""Constructs a kernel body cannot contain, found from the source before tracing.

Each finding names the construct and the supported alternative, at the node (B1: a
diagnostic at the node instead of an exception from deep inside).
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Optional

from .. import ir

LOOP_CALLS = {"loop", "loop_unroll"}
ALLOWED_WITH = {"options", "function"}

MESSAGES = {
    ast.While: "`while` is not supported in a kernel; use `pypto.loop(...)` (a Python `for` over "
               "`range` with build-time bounds also works)",
    ast.Try: "`try` is not supported in a kernel: the body is traced once, not run per element",
    ast.Yield: "generators are not supported in a kernel",
    ast.YieldFrom: "generators are not supported in a kernel",
    ast.Global: "`global` is not supported in a kernel; pass values as parameters",
    ast.Nonlocal: "`nonlocal` is not supported in a kernel; pass values as parameters",
    ast.AsyncFunctionDef: "async functions are not supported in a kernel",
}


@dataclass(frozen=True)
class Finding:
    message: str
    span: ir.Span


def _span(node: ast.AST) -> ir.Span:
    return ir.Span(node.lineno, node.col_offset, getattr(node, "end_lineno", node.lineno) or node.lineno,
                   getattr(node, "end_col_offset", node.col_offset) or node.col_offset)


def _is_pypto_call(node: ast.AST, names: set) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names)


def function_node(func) -> Optional[ast.FunctionDef]:
    """The FunctionDef of ``func`` parsed from its whole file, so positions are real (C7)."""
    try:
        path = inspect.getsourcefile(func)
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    line = func.__code__.co_firstlineno
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == func.__name__:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first == line or node.lineno == line:
                return node
    return None


def check(func) -> list[Finding]:
    node = function_node(func)
    if node is None:
        return []
    findings: list[Finding] = []
    params = {a.arg for a in node.args.args + node.args.posonlyargs}
    _visit(node.body, findings, in_pypto_loop=False, params=params, kernel_name=node.name)
    return findings


def _visit(stmts, findings, in_pypto_loop: bool, params: set, kernel_name: str) -> None:
    for stmt in stmts:
        for kind, message in MESSAGES.items():
            if isinstance(stmt, kind):
                findings.append(Finding(message, _span(stmt)))
        if isinstance(stmt, ast.With) and not all(_is_pypto_call(i.context_expr, ALLOWED_WITH) for i in stmt.items):
            findings.append(Finding("`with` is not supported in a kernel (only `with pypto.options(...)`)", _span(stmt)))
        if isinstance(stmt, (ast.Break, ast.Continue)) and in_pypto_loop:
            word = "break" if isinstance(stmt, ast.Break) else "continue"
            findings.append(Finding(f"`{word}` inside a pypto loop is not supported: the body always runs to its "
                                    "end; branch with `if` instead", _span(stmt)))
        if isinstance(stmt, ast.FunctionDef):
            used = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            captured = sorted(used & params)
            if captured:
                findings.append(Finding(f"nested function `{stmt.name}` closes over the kernel's tensor "
                                        f"parameter(s) {', '.join(captured)}; pass them as arguments", _span(stmt)))
            continue
        for sub in ast.walk(stmt) if not isinstance(stmt, (ast.For, ast.If, ast.With)) else ():
            if isinstance(sub, (ast.Yield, ast.YieldFrom)):
                findings.append(Finding(MESSAGES[type(sub)], _span(sub)))
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == kernel_name:
                findings.append(Finding("recursion is not supported in a kernel", _span(sub)))
        if isinstance(stmt, ast.For):
            pypto = _is_pypto_call(stmt.iter, LOOP_CALLS)
            _visit(stmt.body, findings, in_pypto_loop or pypto, params, kernel_name)
            _visit(stmt.orelse, findings, in_pypto_loop, params, kernel_name)
            if pypto and stmt.orelse:
                findings.append(Finding("`for ... else` is not supported on a pypto loop", _span(stmt)))
        elif isinstance(stmt, ast.If):
            _visit(stmt.body, findings, in_pypto_loop, params, kernel_name)
            _visit(stmt.orelse, findings, in_pypto_loop, params, kernel_name)
        elif isinstance(stmt, (ast.With, ast.Try, ast.While)):
            for field in ("body", "orelse", "finalbody"):
                _visit(getattr(stmt, field, []) or [], findings, in_pypto_loop, params, kernel_name)
